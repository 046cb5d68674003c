//! The container state a hook receives on stdin: runc's (captured from runc 1.1.5 at
//! createRuntime) and crun's variant, plus the size limit.

mod common;

use ascend_oci::Error;
use ascend_oci::{read_state, run_hook, HookConfig, MAX_STATE_BYTES};
use common::golden::read_fixture;
use oci_spec::runtime::ContainerState;

#[test]
fn runc_create_runtime_state_parses() {
    let state = read_state(read_fixture("state/runc-1.1.5-create-runtime.json").as_bytes()).expect("state");
    assert_eq!(state.status(), &ContainerState::Creating);
    assert!(state.pid().is_some_and(|pid| pid > 0));
    assert!(state.bundle().is_absolute());
}

#[test]
fn crun_state_with_status_created_and_a_root_field_parses() {
    let text = r#"{"ociVersion":"1.0.0","id":"c","status":"created","pid":7,"bundle":"/b","root":"/b/rootfs"}"#;
    let state = read_state(text.as_bytes()).expect("crun state");
    assert_eq!(state.status(), &ContainerState::Created);
}

#[test]
fn oversized_or_malformed_state_is_refused_before_any_work() {
    let mut big = String::from("{\"id\":\"");
    big.push_str(&"x".repeat(MAX_STATE_BYTES as usize));
    big.push_str("\"}");
    assert!(matches!(read_state(big.as_bytes()), Err(Error::TooLarge { .. })));
    assert!(matches!(read_state(&b"{not json"[..]), Err(Error::Json { .. })));
}

#[test]
fn relative_bundle_in_state_is_refused() {
    let text = r#"{"ociVersion":"1.0.2","id":"c","status":"creating","pid":7,"bundle":"relative/dir"}"#;
    let state = read_state(text.as_bytes()).expect("state");
    let err = run_hook(&state, &HookConfig::default()).expect_err("relative bundle");
    assert!(matches!(err, Error::UnsafePath { .. }), "{err}");
}
