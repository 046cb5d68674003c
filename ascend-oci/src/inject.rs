//! Turning a request into edits of an OCI runtime spec (`config.json`), idempotently: applying
//! the same plan twice leaves the spec as after the first time.

use std::path::{Path, PathBuf};

use oci_spec::runtime::{Hook, LinuxDevice, LinuxDeviceCgroup, LinuxDeviceType, Mount, Spec};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hook_arguments::{ALLOW_LINK_ARGUMENT, MOUNT_ARGUMENT};
use crate::host::{chip_device_node, shared_device_nodes, DeviceNode, HostChips};
use crate::mount_list::{resolve_mounts, MountEntry, MountList, DEFAULT_MOUNT_LIST_DIR};
use crate::request::{DeviceRequest, RuntimeOptions};
use crate::secure_path::HostRoot;

/// The CDI kind this crate uses unless told otherwise.
pub const DEFAULT_CDI_KIND: &str = "huawei.com/npu";

/// Driver library directories put in front of `LD_LIBRARY_PATH` when they exist on the host.
pub const DRIVER_LIBRARY_DIRS: [&str; 2] =
    ["/usr/local/Ascend/driver/lib64/common", "/usr/local/Ascend/driver/lib64/driver"];

/// Options of a bind mount we add: read-only, no setuid, no devices, not propagated.
pub const BIND_MOUNT_OPTIONS: [&str; 5] = ["rbind", "ro", "nosuid", "nodev", "rprivate"];

/// Where the plan's inputs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionConfig {
    /// The directory of `.list` files, as a path beneath the host root.
    pub mount_list_dir: PathBuf,
}

impl Default for InjectionConfig {
    fn default() -> Self {
        InjectionConfig { mount_list_dir: PathBuf::from(DEFAULT_MOUNT_LIST_DIR) }
    }
}

/// What Huawei's runtime sets in every container it starts (mind-cluster
/// `component/ascend-docker-runtime/runtime/process/process.go`, `addAscendDockerEnv`), and what Huawei's device plugin
/// reads in its own container to choose how it hands out chips (`component/ascend-device-plugin/main.go`,
/// `setUseAscendDocker`): both of our injection paths, the runtime's and the CDI spec's, set it too.
pub(crate) const ASCEND_DOCKER_RUNTIME: (&str, &str) = ("ASCEND_DOCKER_RUNTIME", "True");

/// Everything one container gets, resolved and checked against the host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InjectionPlan {
    /// The chips' node numbers (the `N` of `/dev/davinciN`), sorted.
    pub chips: Vec<u32>,
    /// Chip nodes followed by the shared manager nodes.
    pub device_nodes: Vec<DeviceNode>,
    /// Read-only driver mounts (empty with `NODRV`).
    pub mounts: Vec<MountEntry>,
    /// Environment to set: `(name, value)`; `LD_LIBRARY_PATH` is merged, not replaced.
    pub env: Vec<(String, String)>,
    /// Whether the request let symlinks in the mount sources be followed (`ASCEND_ALLOW_LINK`, confined to the host
    /// root): a hook given `mounts` ([`MountDelivery::ByHookWithMounts`]) checks them the same way.
    pub allow_link: bool,
}

impl InjectionPlan {
    /// Resolves a request against the host: device nodes with their numbers, checked mount
    /// sources, environment. An empty request gives an empty plan.
    ///
    /// # Errors
    /// [`Error::ChipAbsent`] for a chip the host lacks, and the errors of the device-node,
    /// mount-list and mount-source checks.
    pub fn build(root: &HostRoot, host: &HostChips, request: &DeviceRequest, config: &InjectionConfig) -> Result<Self> {
        let chips = host.select(&request.devices, request.options, root)?;
        if chips.is_empty() {
            return Ok(InjectionPlan::default());
        }
        let mut device_nodes = Vec::new();
        for &id in &chips {
            device_nodes.push(chip_device_node(root, id, request.options)?);
        }
        device_nodes.extend(shared_device_nodes(root, host)?);

        let mut mounts = Vec::new();
        let mut env = vec![(ASCEND_DOCKER_RUNTIME.0.to_owned(), ASCEND_DOCKER_RUNTIME.1.to_owned())];
        // Inside the container the chips are enumerated from 0 in phy-id order; CANN's
        // ASCEND_RT_VISIBLE_DEVICES takes those ordinals, not the host's phy ids.
        let ordinals: Vec<String> = (0..chips.len()).map(|i| i.to_string()).collect();
        env.push(("ASCEND_RT_VISIBLE_DEVICES".to_owned(), ordinals.join(",")));
        if !request.options.contains(RuntimeOptions::NODRV) {
            let mut lists = Vec::new();
            for name in &request.mount_lists {
                lists.push(MountList::load(root, &config.mount_list_dir, name)?);
            }
            mounts = resolve_mounts(root, &lists, request.allow_link)?;
            let library_dirs = driver_library_dirs(root, &mounts);
            if !library_dirs.is_empty() {
                env.push(("LD_LIBRARY_PATH".to_owned(), library_dirs.join(":")));
            }
        }
        Ok(InjectionPlan { chips, device_nodes, mounts, env, allow_link: request.allow_link })
    }

    /// Whether there is nothing to inject.
    pub fn is_empty(&self) -> bool {
        self.chips.is_empty()
    }
}

/// The [`DRIVER_LIBRARY_DIRS`] that exist on the host and are covered by one of `mounts`.
pub fn driver_library_dirs(root: &HostRoot, mounts: &[MountEntry]) -> Vec<&'static str> {
    DRIVER_LIBRARY_DIRS
        .iter()
        .copied()
        .filter(|dir| mounts.iter().any(|m| Path::new(dir).starts_with(&m.container_path)))
        .filter(|dir| root.stat_no_symlinks(Path::new(dir)).is_ok())
        .collect()
}

/// Reads the request of a spec: its `process.env` (legacy) plus CDI names of `cdi_kind` found
/// in `cdi.k8s.io/*` annotations.
///
/// # Errors
/// [`Error::InvalidRequest`] quoting the bad token.
pub fn request_from_spec(spec: &Spec, cdi_kind: &str) -> Result<DeviceRequest> {
    let env = spec.process().as_ref().and_then(|p| p.env().as_ref());
    let mut request = DeviceRequest::from_env(env.into_iter().flatten().map(String::as_str))?;
    if let Some(annotations) = spec.annotations() {
        let mut keys: Vec<&String> = annotations.keys().filter(|k| k.starts_with("cdi.k8s.io/")).collect();
        keys.sort();
        for key in keys {
            let names = annotations.get(key).map(String::as_str).unwrap_or_default();
            request.add_cdi_names(cdi_kind, names.split(','))?;
        }
    }
    Ok(request)
}

/// How driver mounts reach the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountDelivery {
    /// As bind mounts in `config.json` (runc performs them, resolving destinations safely).
    InSpec,
    /// By this hook at `createRuntime`, inside the container's mount namespace.
    ByHook(Hook),
    /// By this hook, with the plan's mounts, already resolved and checked, appended to its arguments: `--mount=<path
    /// in the container>` each, and `--allow-link` when the request allows symlinks. A hook that reads them
    /// ([`crate::HookConfig::from_args`]) checks and mounts exactly those paths, without reading the request
    /// or the mount lists again; a plan without mounts adds no hook, having nothing for it to do.
    ByHookWithMounts(Hook),
    /// Not at all (the caller delivers them).
    None,
}

/// Applies a plan to a typed spec; see [`apply_plan_to_json`] for the rules.
///
/// # Errors
/// As [`apply_plan_to_json`].
pub fn apply_plan(spec: &mut Spec, plan: &InjectionPlan, delivery: &MountDelivery) -> Result<()> {
    let mut config = to_json("spec", spec)?;
    if apply_plan_to_json(&mut config, plan, delivery)? {
        *spec =
            serde_json::from_value(config).map_err(|source| Error::Json { what: "edited spec".to_owned(), source })?;
    }
    Ok(())
}

/// Applies a plan to `config.json` as JSON, so that fields this crate does not model (newer
/// runtime-spec fields, engine extensions) and the order of keys survive. The new entries are
/// built from `oci-spec` types. Entries are keyed (devices and mounts by container path, cgroup
/// rules by type/major/minor, env by name, hooks by path and arguments) so a second application
/// changes nothing. Returns whether anything changed.
///
/// # Errors
/// [`Error::InvalidConfig`] if a field on the way has the wrong JSON type.
pub fn apply_plan_to_json(config: &mut Value, plan: &InjectionPlan, delivery: &MountDelivery) -> Result<bool> {
    if plan.is_empty() {
        return Ok(false);
    }
    let before = config.clone();
    let root = as_object(config, "the top level")?;
    // `process` is optional in a spec, but a container without one cannot start (runc refuses it) and the chips'
    // environment would have to invent a process without the user and cwd a spec requires: refuse before any edit.
    if !plan.env.is_empty() && root.get("process").is_none_or(Value::is_null) {
        return Err(Error::InvalidConfig {
            path: PathBuf::from("config.json"),
            reason: "has no `process`: the container cannot start, and its NPU environment has nowhere to go"
                .to_owned(),
        });
    }
    {
        let linux = object_field(root, "linux")?;
        for node in &plan.device_nodes {
            upsert(array_field(linux, "devices")?, "path", to_json("device", &linux_device(node))?);
        }
        let rules = array_field(object_field(linux, "resources")?, "devices")?;
        for node in &plan.device_nodes {
            allow_in_cgroup(rules, node)?;
        }
    }
    {
        let env = array_field(object_field(root, "process")?, "env")?;
        for (name, value) in &plan.env {
            set_env(env, name, value);
        }
    }
    match delivery {
        MountDelivery::InSpec => {
            let mounts = array_field(root, "mounts")?;
            for entry in &plan.mounts {
                upsert(mounts, "destination", to_json("mount", &bind_mount(entry))?);
            }
        }
        MountDelivery::ByHook(hook) => add_hook(root, hook)?,
        MountDelivery::ByHookWithMounts(_) if plan.mounts.is_empty() => {}
        MountDelivery::ByHookWithMounts(hook) => add_hook(root, &with_mount_arguments(hook, plan))?,
        MountDelivery::None => {}
    }
    Ok(*config != before)
}

/// Adds `hook` to the `createRuntime` hooks unless one with its path and arguments is there.
fn add_hook(root: &mut Map<String, Value>, hook: &Hook) -> Result<()> {
    let hooks = array_field(object_field(root, "hooks")?, "createRuntime")?;
    let wanted = to_json("hook", hook)?;
    let same = |h: &Value| h.get("path") == wanted.get("path") && h.get("args") == wanted.get("args");
    if !hooks.iter().any(same) {
        hooks.push(wanted);
    }
    Ok(())
}

/// `hook` with the plan's mounts appended to its arguments (see [`MountDelivery::ByHookWithMounts`]).
fn with_mount_arguments(hook: &Hook, plan: &InjectionPlan) -> Hook {
    let mut args = hook.args().clone().unwrap_or_else(|| vec![hook.path().to_string_lossy().into_owned()]);
    args.extend(plan.mounts.iter().map(|mount| format!("{MOUNT_ARGUMENT}={}", mount.container_path.display())));
    if plan.allow_link {
        args.push(ALLOW_LINK_ARGUMENT.to_owned());
    }
    let mut hook = hook.clone();
    hook.set_args(Some(args));
    hook
}

fn to_json<T: serde::Serialize>(what: &str, item: &T) -> Result<Value> {
    serde_json::to_value(item).map_err(|source| Error::Json { what: format!("serialise {what}"), source })
}

fn wrong_type(field: &str, expected: &str) -> Error {
    Error::InvalidConfig { path: PathBuf::from("config.json"), reason: format!("{field} is not {expected}") }
}

fn as_object<'a>(value: &'a mut Value, field: &str) -> Result<&'a mut Map<String, Value>> {
    value.as_object_mut().ok_or_else(|| wrong_type(field, "an object"))
}

fn object_field<'a>(parent: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Map<String, Value>> {
    let slot = parent.entry(key.to_owned()).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut().ok_or_else(|| wrong_type(key, "an object"))
}

fn array_field<'a>(parent: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Vec<Value>> {
    let slot = parent.entry(key.to_owned()).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut().ok_or_else(|| wrong_type(key, "an array"))
}

/// Replaces the entry whose `key` field equals the new entry's, or appends it.
fn upsert(list: &mut Vec<Value>, key: &str, entry: Value) {
    match list.iter_mut().find(|existing| existing.get(key).is_some() && existing.get(key) == entry.get(key)) {
        Some(existing) => *existing = entry,
        None => list.push(entry),
    }
}

fn linux_device(node: &DeviceNode) -> LinuxDevice {
    let mut device = LinuxDevice::default();
    device.set_path(node.container_path.clone());
    device.set_typ(LinuxDeviceType::C);
    device.set_major(i64::from(node.major));
    device.set_minor(i64::from(node.minor));
    device.set_file_mode(Some(node.file_mode));
    device.set_uid(Some(node.uid));
    device.set_gid(Some(node.gid));
    device
}

fn allow_in_cgroup(rules: &mut Vec<Value>, node: &DeviceNode) -> Result<()> {
    let (major, minor) = (Some(i64::from(node.major)), Some(i64::from(node.minor)));
    let already = rules.iter().any(|rule| {
        serde_json::from_value::<LinuxDeviceCgroup>(rule.clone()).is_ok_and(|rule| {
            rule.allow()
                && rule.typ() == Some(LinuxDeviceType::C)
                && rule.major() == major
                && rule.minor() == minor
                && rule.access().as_deref() == Some("rwm")
        })
    });
    if !already {
        let mut rule = LinuxDeviceCgroup::default();
        rule.set_allow(true);
        rule.set_typ(Some(LinuxDeviceType::C));
        rule.set_major(major);
        rule.set_minor(minor);
        rule.set_access(Some("rwm".to_owned()));
        rules.push(to_json("device cgroup rule", &rule)?);
    }
    Ok(())
}

fn set_env(env: &mut Vec<Value>, name: &str, value: &str) {
    let prefix = format!("{name}=");
    let position = env.iter().rposition(|entry| entry.as_str().is_some_and(|e| e.starts_with(&prefix)));
    match (name, position) {
        ("LD_LIBRARY_PATH", Some(index)) => {
            let current = env[index].as_str().unwrap_or_default()[prefix.len()..].to_owned();
            let mut parts: Vec<&str> = value.split(':').filter(|p| !current.split(':').any(|c| c == *p)).collect();
            if !current.is_empty() {
                parts.push(&current);
            }
            env[index] = Value::String(format!("{prefix}{}", parts.join(":")));
        }
        // The user's own choice of visible ordinals wins over our default.
        ("ASCEND_RT_VISIBLE_DEVICES", Some(_)) => {}
        (_, Some(index)) => env[index] = Value::String(format!("{prefix}{value}")),
        (_, None) => env.push(Value::String(format!("{prefix}{value}"))),
    }
}

/// The OCI mount for a checked entry.
pub fn bind_mount(entry: &MountEntry) -> Mount {
    let mut mount = Mount::default();
    mount.set_destination(entry.container_path.clone());
    mount.set_typ(Some("bind".to_owned()));
    mount.set_source(Some(entry.host_path.clone()));
    mount.set_options(Some(BIND_MOUNT_OPTIONS.iter().map(|s| (*s).to_owned()).collect()));
    mount
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(path: &str, minor: u32) -> DeviceNode {
        DeviceNode {
            container_path: PathBuf::from(path),
            host_path: PathBuf::from(path),
            major: 240,
            minor,
            file_mode: 0o660,
            uid: 0,
            gid: 0,
        }
    }

    fn plan() -> InjectionPlan {
        InjectionPlan {
            chips: vec![0],
            device_nodes: vec![node("/dev/davinci0", 0), node("/dev/davinci_manager", 100)],
            mounts: vec![MountEntry {
                container_path: PathBuf::from("/usr/local/dcmi"),
                host_path: PathBuf::from("/host/usr/local/dcmi"),
                is_dir: true,
            }],
            env: vec![
                ("ASCEND_RT_VISIBLE_DEVICES".to_owned(), "0".to_owned()),
                ("LD_LIBRARY_PATH".to_owned(), "/a:/b".to_owned()),
            ],
            allow_link: false,
        }
    }

    #[test]
    fn a_spec_without_a_process_is_refused_untouched_when_the_plan_sets_the_environment() {
        for original in [serde_json::json!({}), serde_json::json!({"ociVersion": "1.2.0", "process": null})] {
            let mut config = original.clone();
            let error = apply_plan_to_json(&mut config, &plan(), &MountDelivery::InSpec).unwrap_err();
            assert!(error.to_string().contains("has no `process`"), "{error}");
            assert_eq!(config, original, "edited before refusing");
        }
    }

    #[test]
    fn applying_twice_changes_nothing() -> Result<()> {
        let mut spec = Spec::default();
        if let Some(p) = spec.process_mut() {
            p.set_env(Some(vec!["LD_LIBRARY_PATH=/b:/opt".to_owned(), "ASCEND_RT_VISIBLE_DEVICES=7".to_owned()]));
        }
        apply_plan(&mut spec, &plan(), &MountDelivery::InSpec)?;
        let once = spec.clone();
        apply_plan(&mut spec, &plan(), &MountDelivery::InSpec)?;
        assert_eq!(spec, once);
        let env = spec.process().as_ref().and_then(|p| p.env().clone()).unwrap_or_default();
        assert!(env.contains(&"LD_LIBRARY_PATH=/a:/b:/opt".to_owned()), "{env:?}");
        assert!(env.contains(&"ASCEND_RT_VISIBLE_DEVICES=7".to_owned()), "{env:?}");
        Ok(())
    }

    #[test]
    fn unknown_fields_and_key_order_survive() -> Result<()> {
        let mut config: Value = serde_json::from_str(
            r#"{"ociVersion":"1.2.0","zeta":{"keep":1},"process":{"env":["A=1"],"futureField":true},"alpha":[]}"#,
        )
        .map_err(|source| Error::Json { what: "test".into(), source })?;
        assert!(apply_plan_to_json(&mut config, &plan(), &MountDelivery::InSpec)?);
        let keys: Vec<&String> = config.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        assert_eq!(keys, ["ociVersion", "zeta", "process", "alpha", "linux", "mounts"]);
        assert_eq!(config["process"]["futureField"], Value::Bool(true));
        assert!(!apply_plan_to_json(&mut config, &plan(), &MountDelivery::InSpec)?);
        Ok(())
    }

    #[test]
    fn the_hook_gets_the_plans_mounts_once_and_no_hook_without_mounts() -> Result<()> {
        let mut hook = Hook::default();
        hook.set_path(PathBuf::from("/usr/local/bin/ascend-ctk-hook"));
        hook.set_args(Some(vec!["ascend-ctk-hook".to_owned(), "--host-root".to_owned(), "/".to_owned()]));
        let delivery = MountDelivery::ByHookWithMounts(hook);
        let mut config = serde_json::json!({"process": {"env": []}});
        assert!(apply_plan_to_json(&mut config, &plan(), &delivery)?);
        assert!(!apply_plan_to_json(&mut config, &plan(), &delivery)?, "a second application adds nothing");
        let hooks = config["hooks"]["createRuntime"].as_array().cloned().unwrap_or_default();
        assert_eq!(hooks.len(), 1, "{config}");
        assert_eq!(
            hooks[0]["args"],
            serde_json::json!(["ascend-ctk-hook", "--host-root", "/", "--mount=/usr/local/dcmi"])
        );
        assert!(config.get("mounts").is_none(), "the hook mounts them, not runc: {config}");

        let linked = InjectionPlan { allow_link: true, ..plan() };
        let mut config = serde_json::json!({"process": {"env": []}});
        apply_plan_to_json(&mut config, &linked, &delivery)?;
        let args = config["hooks"]["createRuntime"][0]["args"].as_array().cloned().unwrap_or_default();
        assert_eq!(args.last(), Some(&Value::String("--allow-link".to_owned())), "{config}");

        let no_mounts = InjectionPlan { mounts: Vec::new(), ..plan() };
        let mut config = serde_json::json!({"process": {"env": []}});
        assert!(apply_plan_to_json(&mut config, &no_mounts, &delivery)?, "the devices are still added");
        assert!(config.get("hooks").is_none(), "a hook with nothing to mount: {config}");
        Ok(())
    }

    #[test]
    fn request_from_env_and_annotations() -> Result<()> {
        let mut spec = Spec::default();
        if let Some(p) = spec.process_mut() {
            p.set_env(Some(vec!["ASCEND_VISIBLE_DEVICES=1".to_owned()]));
        }
        spec.set_annotations(Some([("cdi.k8s.io/npu".to_owned(), "huawei.com/npu=3".to_owned())].into()));
        let request = request_from_spec(&spec, DEFAULT_CDI_KIND)?;
        assert_eq!(request.devices, crate::request::DeviceSelection::chips([1, 3]));
        Ok(())
    }
}
