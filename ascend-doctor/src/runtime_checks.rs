//! Section 3: a pod that is scheduled but has no device inside is a runtime problem. Is an Ascend runtime registered
//! with Docker or containerd, does a RuntimeClass point at it by the same name, and is the CDI spec current?

use std::collections::BTreeSet;

use ascend_oci::runtime_config::{
    cri_plugin_key, parse_runtime_classes, runtime_class_manifest, runtime_class_warnings, RuntimeClassRef,
};

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
pub use super::container_engines::{CONTAINERD_CONFIG, DOCKER_CONFIG};
use super::context::{DoctorOptions, Facts, RegisteredRuntime};

fn is_ascend(name: &str, binary: Option<&str>) -> bool {
    name.to_ascii_lowercase().contains("ascend")
        || binary.is_some_and(|path| path.to_ascii_lowercase().contains("ascend"))
}

fn binary_evidence(options: &DoctorOptions, runtime: &RegisteredRuntime) -> (String, bool) {
    match &runtime.binary {
        None => (format!("{} runtime {:?} (no binary named)", runtime.engine, runtime.name), true),
        Some(binary) => {
            let present = options.host.exists(binary);
            let state = if present { "present" } else { "MISSING" };
            (format!("{} runtime {:?} -> {binary} ({state})", runtime.engine, runtime.name), present)
        }
    }
}

fn registration_result(
    check: CheckResult,
    options: &DoctorOptions,
    facts: &mut Facts,
    found: Vec<RegisteredRuntime>,
    engine: &str,
) -> CheckResult {
    if found.is_empty() {
        return check.advise(Advice::RegisterRuntime { engine: engine.to_owned() }).with_status(Status::Fail);
    }
    let mut check = check;
    let mut missing = Vec::new();
    for runtime in &found {
        let (line, present) = binary_evidence(options, runtime);
        check = check.evidence(line);
        if !present {
            missing.push(runtime.binary.clone().unwrap_or_default());
        }
    }
    facts.ascend_runtimes.extend(found);
    if missing.is_empty() {
        return check;
    }
    check
        .advise(Advice::RuntimeBinaryMissing { missing: missing.join(", "), engine: engine.to_owned() })
        .with_status(Status::Fail)
}

/// runtime.docker: an Ascend runtime under `runtimes` in `daemon.json`.
pub fn docker(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "container_runtime.docker",
        Section::ContainerRuntime,
        "Docker has the Ascend runtime",
        Status::Ok,
    );
    let text = match options.host.read_to_string(DOCKER_CONFIG) {
        Ok(text) => text,
        Err(_) => {
            return check
                .evidence(format!("{DOCKER_CONFIG} not found: Docker is not configured here"))
                .with_status(Status::Skip)
        }
    };
    facts.engine_configured = true;
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            return check
                .evidence(format!("{DOCKER_CONFIG}: not valid JSON: {error}"))
                .advise(Advice::DockerConfigBroken)
                .with_status(Status::Fail)
        }
    };
    let runtimes = value.get("runtimes").and_then(|r| r.as_object());
    let all: Vec<String> = runtimes.map(|r| r.keys().cloned().collect()).unwrap_or_default();
    let found: Vec<RegisteredRuntime> = runtimes
        .into_iter()
        .flatten()
        .map(|(name, entry)| RegisteredRuntime {
            engine: "docker",
            name: name.clone(),
            binary: entry.get("path").and_then(|p| p.as_str()).map(str::to_owned),
        })
        .filter(|runtime| is_ascend(&runtime.name, runtime.binary.as_deref()))
        .collect();
    let default = value.get("default-runtime").and_then(|d| d.as_str()).unwrap_or("runc");
    let check = check.evidence(format!("{DOCKER_CONFIG}: runtimes {{{}}}, default-runtime {default}", all.join(", ")));
    registration_result(check, options, facts, found, "docker")
}

/// The CRI plugin's runtimes table of a containerd config, by config version.
fn containerd_runtimes(config: &toml::Table) -> (i64, Option<&toml::Table>, Option<bool>) {
    let version = config.get("version").and_then(toml::Value::as_integer).unwrap_or(1);
    let plugin_key = cri_plugin_key(version).unwrap_or("io.containerd.cri.v1.runtime");
    let plugin = config.get("plugins").and_then(|p| p.get(plugin_key));
    let runtimes =
        plugin.and_then(|p| p.get("containerd")).and_then(|c| c.get("runtimes")).and_then(toml::Value::as_table);
    let cdi = plugin.and_then(|p| p.get("enable_cdi")).and_then(toml::Value::as_bool);
    (version, runtimes, cdi)
}

/// runtime.containerd: an Ascend runtime in the CRI plugin of `config.toml` (config versions 1, 2 and 3).
pub fn containerd(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "container_runtime.containerd",
        Section::ContainerRuntime,
        "containerd has the Ascend runtime",
        Status::Ok,
    );
    let text = match options.host.read_to_string(CONTAINERD_CONFIG) {
        Ok(text) => text,
        Err(_) if facts.engine_configured => {
            return check
                .evidence(format!("{CONTAINERD_CONFIG} not found: containerd is not configured here"))
                .with_status(Status::Skip)
        }
        Err(_) => {
            return check
                .evidence(format!(
                    "neither {DOCKER_CONFIG} nor {CONTAINERD_CONFIG} exists: no engine has an Ascend runtime"
                ))
                .advise(Advice::NoEngineConfigured)
                .with_status(Status::Warn)
        }
    };
    facts.engine_configured = true;
    let config: toml::Table = match toml::from_str(&text) {
        Ok(config) => config,
        Err(error) => {
            return check
                .evidence(format!("{CONTAINERD_CONFIG}: not valid TOML: {error}"))
                .advise(Advice::ContainerdConfigBroken)
                .with_status(Status::Fail)
        }
    };
    let (version, runtimes, cdi) = containerd_runtimes(&config);
    let all: Vec<String> = runtimes.map(|r| r.keys().cloned().collect()).unwrap_or_default();
    let found: Vec<RegisteredRuntime> = runtimes
        .into_iter()
        .flatten()
        .map(|(name, entry)| RegisteredRuntime {
            engine: "containerd",
            name: name.clone(),
            binary: entry
                .get("options")
                .and_then(|o| o.get("BinaryName"))
                .or_else(|| entry.get("runtime_engine"))
                .and_then(toml::Value::as_str)
                .filter(|binary| !binary.is_empty())
                .map(str::to_owned),
        })
        .filter(|runtime| is_ascend(&runtime.name, runtime.binary.as_deref()))
        .collect();
    let cdi_text = match cdi {
        Some(true) => "enable_cdi = true",
        Some(false) => "enable_cdi = false",
        None => "enable_cdi not set",
    };
    let check =
        check.evidence(format!("{CONTAINERD_CONFIG} (version {version}): runtimes {{{}}}, {cdi_text}", all.join(", ")));
    registration_result(check, options, facts, found, "containerd")
}

/// The RuntimeClasses to judge and where they came from, or the check's result when there are none to read (boxed:
/// a result is large, and this is the rare way).
fn runtime_classes(options: &DoctorOptions) -> Result<(String, Vec<RuntimeClassRef>), Box<CheckResult>> {
    let check = CheckResult::new(
        "container_runtime.runtime_class",
        Section::ContainerRuntime,
        "RuntimeClass handler matches the registered runtime",
        Status::Skip,
    );
    if let Some(path) = &options.runtime_class_manifest {
        let text = std::fs::read_to_string(path).map_err(|error| {
            Box::new(check.clone().evidence(format!("{}: {error}", path.display())).with_status(Status::Fail))
        })?;
        return Ok((path.display().to_string(), parse_runtime_classes(&text)));
    }
    let api = options.cluster().map_err(|reason| {
        Box::new(
            check
                .clone()
                .evidence(format!("{reason}; no --runtime-class-manifest given"))
                .advise(Advice::RuntimeClassNoCluster),
        )
    })?;
    let classes = api.runtime_classes().map_err(|error| {
        Box::new(check.clone().evidence(error.to_string()).with_status(Status::Warn).advise(Advice::RuntimeClassAccess))
    })?;
    Ok(("RuntimeClasses from the API server".to_owned(), classes))
}

/// runtime.runtime_class: a RuntimeClass whose handler is a registered Ascend runtime. A missing RuntimeClass, or a
/// handler that differs from the registered name (`ascend` vs `ascend-runtime`), silently falls back to runc: the
/// pod runs, without devices.
pub fn runtime_class(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let handlers: Vec<String> =
        facts.ascend_runtimes.iter().map(|runtime| runtime.name.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let Some(registered) = handlers.first() else {
        return CheckResult::new(
            "container_runtime.runtime_class",
            Section::ContainerRuntime,
            "RuntimeClass handler matches the registered runtime",
            Status::Skip,
        )
        .evidence("no Ascend runtime is registered on this node (see the engine checks), so no handler can match");
    };
    let (source, classes) = match runtime_classes(options) {
        Ok(found) => found,
        Err(result) => return *result,
    };
    let check = CheckResult::new(
        "container_runtime.runtime_class",
        Section::ContainerRuntime,
        "RuntimeClass handler matches the registered runtime",
        Status::Ok,
    );
    let listed: Vec<String> =
        classes.iter().map(|class| format!("{} (handler {})", class.name, class.handler)).collect();
    let check = check.evidence(format!(
        "{source}: {}",
        if listed.is_empty() { "no RuntimeClass".to_owned() } else { listed.join(", ") }
    ));
    let check = check.evidence(format!("registered Ascend runtime name(s): {}", handlers.join(", ")));
    let ascend_classes: Vec<&RuntimeClassRef> = classes
        .iter()
        .filter(|class| handlers.contains(&class.handler) || is_ascend(&class.name, Some(&class.handler)))
        .collect();
    if ascend_classes.is_empty() {
        return check
            .evidence("no RuntimeClass selects an Ascend runtime: pods fall back to runc and get no devices")
            .advise(Advice::RuntimeClassMissing {
                registered: registered.clone(),
                manifest: runtime_class_manifest(registered, registered).trim_end().to_owned(),
            })
            .with_status(Status::Fail);
    }
    let owned: Vec<RuntimeClassRef> = ascend_classes.iter().map(|class| (*class).clone()).collect();
    let mismatches = runtime_class_warnings(&owned, &handlers);
    if mismatches.is_empty() {
        let names: Vec<&str> = owned.iter().map(|class| class.name.as_str()).collect();
        return check.evidence(format!("pods with runtimeClassName {} get the Ascend runtime", names.join(" or ")));
    }
    let first =
        owned.iter().find(|class| !handlers.contains(&class.handler)).map_or(registered.as_str(), |c| c.name.as_str());
    check
        .evidence_lines(mismatches)
        .advise(Advice::RuntimeClassHandler {
            first: first.to_owned(),
            registered: registered.clone(),
            manifest: runtime_class_manifest(first, registered).trim_end().to_owned(),
        })
        .with_status(Status::Fail)
}

/// runtime.cdi: a CDI spec for the Ascend kind that lists exactly the chips of `/dev`.
pub fn cdi(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "container_runtime.cdi",
        Section::ContainerRuntime,
        "CDI spec present and current",
        Status::Ok,
    );
    let host = &options.host;
    let kind = ascend_oci::DEFAULT_CDI_KIND;
    let mut specs = Vec::new();
    for dir in [ascend_oci::cdi::STATIC_SPEC_DIR, ascend_oci::cdi::DYNAMIC_SPEC_DIR] {
        for name in host.list(dir) {
            if !name.ends_with(".json") {
                continue;
            }
            let host_path = format!("{dir}/{name}");
            match ascend_oci::cdi::read_spec(&host.path(&host_path)) {
                Ok(spec) if spec.kind == kind => specs.push((host_path, spec)),
                Ok(_) => {}
                Err(error) => {
                    return check
                        .evidence(format!("{host_path}: {error}"))
                        .advise(Advice::CdiSpecBroken)
                        .with_status(Status::Fail)
                }
            }
        }
    }
    facts.cdi_specs = specs.iter().map(|(path, spec)| (path.clone(), spec.cdi_version.clone())).collect();
    let Some((path, spec)) = specs.first() else {
        return check
            .evidence(format!(
                "no spec of kind {kind} in {} or {}",
                ascend_oci::cdi::STATIC_SPEC_DIR,
                ascend_oci::cdi::DYNAMIC_SPEC_DIR
            ))
            .advise(Advice::CdiSpecMissing)
            .with_status(Status::Warn);
    };
    let in_spec: BTreeSet<u32> = spec.devices.iter().filter_map(|device| device.name.parse().ok()).collect();
    let on_host: BTreeSet<u32> = facts.davinci_ids.iter().copied().collect();
    let check = check.evidence(format!(
        "{path}: cdiVersion {}, devices {}",
        spec.cdi_version,
        spec.devices.iter().map(|device| device.name.as_str()).collect::<Vec<_>>().join(",")
    ));
    let check = if specs.len() > 1 {
        check.evidence(format!("{} specs of kind {kind}: consumers reject duplicate device names", specs.len()))
    } else {
        check
    };
    if in_spec == on_host && specs.len() == 1 {
        return check.evidence("the spec lists exactly the /dev/davinci<N> chips of the host");
    }
    let missing: Vec<String> = on_host.difference(&in_spec).map(u32::to_string).collect();
    let stale: Vec<String> = in_spec.difference(&on_host).map(u32::to_string).collect();
    let check = if missing.is_empty() {
        check
    } else {
        check.evidence(format!("chips missing from the spec: {}", missing.join(",")))
    };
    let check = if stale.is_empty() {
        check
    } else {
        check.evidence(format!("devices in the spec without a chip: {}", stale.join(",")))
    };
    check.advise(Advice::CdiSpecStale { kind: kind.to_string() }).with_status(Status::Fail)
}
