#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::versions::pod_container(data));
