#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::network::hccn_ub_output(data));
