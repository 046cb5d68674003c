#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::kubelet::authority_rewrite(data));
