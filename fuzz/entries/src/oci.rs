//! The container side: what a container asks for, the bundle's `config.json`, the hook's state, CDI specs, mount
//! lists and the runtime shim's command line.

use std::path::{Component, Path, PathBuf};

use ascend_oci::cdi::{minimum_version, parse_kind, spec_file_name, CdiSpec};
use ascend_oci::read_state;
use ascend_oci::DeviceNode;
use ascend_oci::RuncInvocation;
use ascend_oci::{apply_plan_to_json, request_from_spec, InjectionPlan, MountDelivery, DEFAULT_CDI_KIND};
use ascend_oci::{wildcard_match, MountEntry, MountList, MAX_LIST_ENTRIES};
use ascend_oci::{DeviceRequest, DeviceSelection};
use oci_spec::runtime::{Hook, Spec};
use serde_json::Value;

use crate::text;

/// A container's environment, one `KEY=VALUE` per line, as the runtime reads `process.env`; then CDI names, one per
/// line, as the hook reads annotations. A selection that parses prints in a form that parses back to itself.
pub fn request_env(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(mut request) = DeviceRequest::from_env(text.lines()) {
        let printed = request.devices.to_string();
        let reparsed: DeviceSelection = printed.parse().unwrap_or_else(|e| panic!("{printed:?} does not parse: {e}"));
        assert_eq!(reparsed, request.devices, "the canonical form {printed:?} changed the selection");
        let _ = request.add_cdi_names(DEFAULT_CDI_KIND, text.lines());
    }
}

/// A bundle's `config.json`, read as the shim and the hook read it (JSON, then the typed spec), its request taken,
/// and a plan applied. Applying keeps the spec valid, and a second application changes nothing.
pub fn oci_config(data: &[u8]) {
    let Ok(json) = serde_json::from_slice::<Value>(data) else { return };
    let Ok(spec) = serde_json::from_value::<Spec>(json.clone()) else { return };
    let _ = request_from_spec(&spec, DEFAULT_CDI_KIND);
    let delivery = match data.len() % 3 {
        0 => MountDelivery::InSpec,
        1 => MountDelivery::ByHook(hook()),
        _ => MountDelivery::ByHookWithMounts(hook()),
    };
    let mut config = json;
    if apply_plan_to_json(&mut config, &plan(), &delivery).is_err() {
        return;
    }
    let mut again = config.clone();
    let changed = apply_plan_to_json(&mut again, &plan(), &delivery);
    assert!(matches!(changed, Ok(false)), "a second application changed the spec: {changed:?}");
    if let Err(error) = serde_json::from_value::<Spec>(config.clone()) {
        panic!("the edited config.json is no longer a spec: {error}\n{config}");
    }
}

/// The container state runc writes to a hook's stdin (at most 1 MiB). What parses prints back to itself.
pub fn hook_state(data: &[u8]) {
    let Ok(state) = read_state(data) else { return };
    let printed = serde_json::to_vec(&state).unwrap_or_else(|e| panic!("state does not serialise: {e}"));
    let reparsed = read_state(&printed[..]).unwrap_or_else(|e| panic!("printed state does not parse: {e}"));
    assert_eq!(reparsed, state);
}

/// A CDI spec as `ascend-ctk cdi list` reads one back (JSON), with its kind and the version and file name derived.
pub fn cdi_spec(data: &[u8]) {
    let Ok(spec) = serde_json::from_slice::<CdiSpec>(data) else { return };
    let _ = minimum_version(&spec);
    if parse_kind(&spec.kind).is_ok() {
        let name = spec_file_name(&spec.kind).unwrap_or_else(|e| panic!("valid kind {:?}: {e}", spec.kind));
        assert!(!name.contains('/') && name != ".." && name != ".", "kind {:?} names the file {name:?}", spec.kind);
    }
    let printed = serde_json::to_vec(&spec).unwrap_or_else(|e| panic!("spec does not serialise: {e}"));
    let reparsed: CdiSpec = serde_json::from_slice(&printed).unwrap_or_else(|e| panic!("printed spec: {e}"));
    assert_eq!(reparsed, spec);
}

/// A `.list` file. Whatever parses is at most 128 absolute paths without `..`, wildcards only in the last component,
/// and matching a name against each wildcard ends.
pub fn mount_list(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(list) = MountList::parse("fuzz", text) else { return };
    assert!(list.entries.len() <= MAX_LIST_ENTRIES);
    let name = text.lines().last().unwrap_or_default();
    for entry in &list.entries {
        assert!(entry.is_absolute(), "{entry:?}");
        assert!(!entry.components().any(|c| c == Component::ParentDir), "{entry:?}");
        let parent = entry.parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        assert!(!parent.contains(['*', '?']), "{entry:?}");
        if let Some(last) = entry.file_name() {
            let _ = wildcard_match(&last.to_string_lossy(), name);
        }
    }
}

/// runc's command line as the shim receives it, arguments separated by NUL bytes.
pub fn runtime_args(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let args: Vec<String> = text.split('\0').map(str::to_owned).collect();
    if let Ok(invocation) = RuncInvocation::parse(&args) {
        assert_eq!(invocation.creates_container(), matches!(invocation.command.as_deref(), Some("create" | "run")));
    }
}

/// What the runtime injects for chip 0 on a typical host.
fn plan() -> InjectionPlan {
    let node = |name: &str, minor| DeviceNode {
        container_path: PathBuf::from(format!("/dev/{name}")),
        host_path: PathBuf::from(format!("/dev/{name}")),
        major: 236,
        minor,
        file_mode: 0o666,
        uid: 0,
        gid: 0,
    };
    InjectionPlan {
        chips: vec![0],
        device_nodes: vec![node("davinci0", 0), node("davinci_manager", 1)],
        mounts: vec![MountEntry {
            container_path: PathBuf::from("/usr/local/Ascend/driver/lib64"),
            host_path: PathBuf::from("/usr/local/Ascend/driver/lib64"),
            is_dir: true,
        }],
        env: vec![
            ("ASCEND_RT_VISIBLE_DEVICES".to_owned(), "0".to_owned()),
            ("LD_LIBRARY_PATH".to_owned(), "/usr/local/Ascend/driver/lib64".to_owned()),
        ],
        allow_link: false,
    }
}

fn hook() -> Hook {
    let mut hook = Hook::default();
    hook.set_path(Path::new("/usr/local/bin/ascend-ctk").to_path_buf());
    hook.set_args(Some(vec!["ascend-ctk".to_owned(), "hook".to_owned()]));
    hook
}
