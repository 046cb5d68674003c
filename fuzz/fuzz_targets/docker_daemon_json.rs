#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ascend_fuzz::runtime_config::docker_daemon_json(data));
