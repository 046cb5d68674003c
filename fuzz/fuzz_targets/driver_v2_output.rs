#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::driver::driver_v2_output(data));
