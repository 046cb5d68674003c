#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::versions::package_compatibility(data));
