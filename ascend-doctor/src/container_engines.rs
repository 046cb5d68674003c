//! The container engines of a host, their versions, and whether each loads CDI devices as configured.
//!
//! Each engine switches CDI on its own way and from its own release (docs/compatibility.md has the sources):
//!
//! | engine | CDI from | switch |
//! |---|---|---|
//! | containerd | 1.7 | `enable_cdi` in the CRI plugin's table: off by default in 1.7, on by default from 2.0 |
//! | CRI-O | 1.24 | always on; `cdi_spec_dirs` in `[crio.runtime]` |
//! | Docker | 25.0 | `"features": {"cdi": true}` in `daemon.json`; on by default from 28.2 |
//! | podman | 4.1 | always on; reads `/etc/cdi` and `/var/run/cdi` |
//!
//! Versions come from files ([`super::installed_version`]): the binary's recorded build settings, else the dpkg
//! database. An engine whose version cannot be read is judged by its configuration alone, and the evidence says so.

use std::fmt;

use ascend_oci::cdi::{DYNAMIC_SPEC_DIR, STATIC_SPEC_DIR};
use ascend_oci::runtime_config::cri_plugin_key;

use super::advice::{Advice, Fix};
use super::host::HostRoot;
use super::installed_version::{dpkg_version, first_binary, major_minor, FoundVersion};

/// Docker's configuration file.
pub const DOCKER_CONFIG: &str = "/etc/docker/daemon.json";
/// containerd's configuration file.
pub const CONTAINERD_CONFIG: &str = "/etc/containerd/config.toml";
/// CRI-O's main configuration file.
pub const CRIO_CONFIG: &str = "/etc/crio/crio.conf";
/// CRI-O's drop-in directory (files ending in `.conf`, read in name order after the main file).
pub const CRIO_DROP_INS: &str = "/etc/crio/crio.conf.d";

/// A container engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EngineKind {
    /// containerd (its CRI plugin serves the kubelet).
    Containerd,
    /// CRI-O.
    CriO,
    /// Docker Engine.
    Docker,
    /// podman.
    Podman,
}

impl EngineKind {
    /// The engine's name in evidence.
    pub const fn name(self) -> &'static str {
        match self {
            EngineKind::Containerd => "containerd",
            EngineKind::CriO => "CRI-O",
            EngineKind::Docker => "Docker",
            EngineKind::Podman => "podman",
        }
    }

    /// The first release that loads CDI devices, as `(major, minor)`.
    pub const fn cdi_floor(self) -> (u32, u32) {
        match self {
            EngineKind::Containerd => (1, 7),
            EngineKind::CriO => (1, 24),
            EngineKind::Docker => (25, 0),
            EngineKind::Podman => (4, 1),
        }
    }

    const fn binaries(self) -> &'static [&'static str] {
        match self {
            EngineKind::Containerd => &["/usr/bin/containerd", "/usr/local/bin/containerd"],
            EngineKind::CriO => &["/usr/bin/crio", "/usr/local/bin/crio"],
            EngineKind::Docker => &["/usr/bin/dockerd", "/usr/local/bin/dockerd"],
            EngineKind::Podman => &["/usr/bin/podman", "/usr/local/bin/podman"],
        }
    }

    /// The `-X` settings that carry the version in the engine's own builds (CRI-O and podman compile it in).
    const fn version_settings(self) -> &'static [&'static str] {
        match self {
            EngineKind::Containerd => &[
                "github.com/containerd/containerd/version.Version",
                "github.com/containerd/containerd/v2/version.Version",
            ],
            EngineKind::Docker => &["github.com/docker/docker/dockerversion.Version"],
            EngineKind::CriO | EngineKind::Podman => &[],
        }
    }

    const fn packages(self) -> &'static [&'static str] {
        match self {
            EngineKind::Containerd => &["containerd.io", "containerd"],
            EngineKind::CriO => &["cri-o"],
            EngineKind::Docker => &["docker-ce", "docker.io", "moby-engine"],
            EngineKind::Podman => &["podman"],
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether an engine loads CDI devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdiState {
    /// On; the engine reads specs from these directories.
    Enabled {
        /// The spec directories.
        spec_dirs: Vec<String>,
    },
    /// Off in the configuration, or not switched on where the release needs it.
    Disabled {
        /// The fix: what to set, where.
        fix: Fix,
    },
    /// The engine's release predates CDI.
    Unsupported,
    /// The configuration could not be read; the reason is in the evidence.
    Unknown,
}

/// One engine found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    /// Which.
    pub kind: EngineKind,
    /// Its version, when a file says.
    pub version: Option<FoundVersion>,
    /// What was seen: configuration files and binaries, and how CDI was decided.
    pub evidence: Vec<String>,
    /// Whether it loads CDI devices.
    pub cdi: CdiState,
}

impl Engine {
    /// `major.minor` of its version.
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        self.version.as_ref().and_then(|found| major_minor(&found.version))
    }

    /// "containerd 1.7.20" or "containerd (version unknown)".
    pub fn label(&self) -> String {
        match &self.version {
            Some(found) => format!("{} {}", self.kind, found.version),
            None => format!("{} (version unknown)", self.kind),
        }
    }

    fn below_floor(&self) -> bool {
        self.major_minor().is_some_and(|version| version < self.kind.cdi_floor())
    }
}

fn default_spec_dirs() -> Vec<String> {
    vec![STATIC_SPEC_DIR.to_owned(), DYNAMIC_SPEC_DIR.to_owned()]
}

fn string_list(value: Option<&toml::Value>) -> Option<Vec<String>> {
    value?.as_array().map(|items| items.iter().filter_map(|item| item.as_str().map(str::to_owned)).collect())
}

/// An engine found by its binary or its configuration (`configured`), with its version and the evidence so far:
/// `Ok` to judge its configuration, `Err` already complete when its release predates CDI. `None`: not on the host.
fn present(host: &HostRoot, kind: EngineKind, configured: bool) -> Option<Result<(Engine, Vec<String>), Engine>> {
    let binary = first_binary(host, kind.binaries(), kind.version_settings());
    if binary.is_none() && !configured {
        return None;
    }
    let mut evidence = Vec::new();
    let mut version = None;
    if let Some((path, found)) = binary {
        match found {
            Some(found) => version = Some(found),
            None => evidence.push(format!("{path} present; it records no version")),
        }
    }
    if version.is_none() {
        version = dpkg_version(host, kind.packages());
    }
    if let Some(found) = &version {
        evidence.push(format!("{} {} from {}", kind, found.version, found.source));
    }
    let mut engine = Engine { kind, version, evidence: Vec::new(), cdi: CdiState::Unknown };
    if engine.below_floor() {
        let (major, minor) = kind.cdi_floor();
        evidence.push(format!("{kind} loads CDI devices from {major}.{minor}"));
        engine.cdi = CdiState::Unsupported;
        engine.evidence = evidence;
        return Some(Err(engine));
    }
    Some(Ok((engine, evidence)))
}

fn containerd(host: &HostRoot) -> Option<Engine> {
    let text = host.read_to_string(CONTAINERD_CONFIG).ok();
    let (mut engine, mut evidence) = match present(host, EngineKind::Containerd, text.is_some())? {
        Ok(found) => found,
        Err(unsupported) => return Some(unsupported),
    };
    let config: toml::Table = match text.as_deref().map(toml::from_str).transpose() {
        Ok(config) => config.unwrap_or_default(),
        Err(error) => {
            evidence.push(format!("{CONTAINERD_CONFIG}: not valid TOML ({error}), CDI state unknown"));
            engine.evidence = evidence;
            return Some(engine);
        }
    };
    let config_version = config.get("version").and_then(toml::Value::as_integer).unwrap_or(1);
    let plugin_key = cri_plugin_key(config_version).unwrap_or("io.containerd.cri.v1.runtime");
    let plugin = config.get("plugins").and_then(|plugins| plugins.get(plugin_key));
    let enable_cdi = plugin.and_then(|p| p.get("enable_cdi")).and_then(toml::Value::as_bool);
    // 2.0 turned CDI on by default; a version-3 config is a 2.x config when the binary does not say.
    let default_on = match engine.major_minor() {
        Some(version) => version >= (2, 0),
        None => config_version >= 3,
    };
    let default_text = if default_on { "on by default" } else { "off by default" };
    let generation = match engine.major_minor() {
        Some(_) => engine.label(),
        None if config_version >= 3 => "containerd 2.x (config version 3)".to_owned(),
        None => format!("containerd 1.7 rules (config version {config_version}; binary version unknown)"),
    };
    let setting = match enable_cdi {
        Some(value) => format!("enable_cdi = {value}"),
        None => "enable_cdi not set".to_owned(),
    };
    let config_label = if text.is_some() { CONTAINERD_CONFIG } else { "no config.toml (built-in defaults)" };
    evidence
        .push(format!("{config_label}: [plugins.\"{plugin_key}\"] {setting}; CDI is {default_text} in {generation}"));
    engine.cdi = if enable_cdi.unwrap_or(default_on) {
        let spec_dirs = string_list(plugin.and_then(|p| p.get("cdi_spec_dirs"))).unwrap_or_else(default_spec_dirs);
        CdiState::Enabled { spec_dirs }
    } else {
        CdiState::Disabled {
            fix: Advice::CdiOffContainerd {
                plugin_key: plugin_key.to_string(),
                config: CONTAINERD_CONFIG.to_owned(),
                spec_dirs: format!("[\"{STATIC_SPEC_DIR}\", \"{DYNAMIC_SPEC_DIR}\"]"),
            }
            .into(),
        }
    };
    engine.evidence = evidence;
    Some(engine)
}

fn crio(host: &HostRoot) -> Option<Engine> {
    let mut files: Vec<String> = Vec::new();
    if host.exists(CRIO_CONFIG) {
        files.push(CRIO_CONFIG.to_owned());
    }
    files.extend(
        host.list(CRIO_DROP_INS).into_iter().filter(|n| n.ends_with(".conf")).map(|n| format!("{CRIO_DROP_INS}/{n}")),
    );
    let (mut engine, mut evidence) = match present(host, EngineKind::CriO, !files.is_empty())? {
        Ok(found) => found,
        Err(unsupported) => return Some(unsupported),
    };
    // Later files override earlier ones, key by key, as CRI-O merges them.
    let mut spec_dirs = None;
    for file in &files {
        match host.read_to_string(file).map(|text| toml::from_str::<toml::Table>(&text)) {
            Ok(Ok(config)) => {
                let runtime = config.get("crio").and_then(|c| c.get("runtime"));
                if let Some(dirs) = string_list(runtime.and_then(|r| r.get("cdi_spec_dirs"))) {
                    evidence.push(format!("{file}: cdi_spec_dirs = {dirs:?}"));
                    spec_dirs = Some(dirs);
                }
            }
            Ok(Err(error)) => evidence.push(format!("{file}: not valid TOML ({error})")),
            Err(error) => evidence.push(format!("{file}: {error}")),
        }
    }
    evidence.push("CRI-O always loads CDI devices".to_owned());
    engine.cdi = CdiState::Enabled { spec_dirs: spec_dirs.unwrap_or_else(default_spec_dirs) };
    engine.evidence = evidence;
    Some(engine)
}

fn docker(host: &HostRoot) -> Option<Engine> {
    let text = host.read_to_string(DOCKER_CONFIG).ok();
    let (mut engine, mut evidence) = match present(host, EngineKind::Docker, text.is_some())? {
        Ok(found) => found,
        Err(unsupported) => return Some(unsupported),
    };
    let config: serde_json::Value = match text.as_deref().map(serde_json::from_str).transpose() {
        Ok(config) => config.unwrap_or(serde_json::Value::Null),
        Err(error) => {
            evidence.push(format!("{DOCKER_CONFIG}: not valid JSON ({error}), CDI state unknown"));
            engine.evidence = evidence;
            return Some(engine);
        }
    };
    let feature = config.pointer("/features/cdi").and_then(serde_json::Value::as_bool);
    let default_on = engine.major_minor().is_some_and(|version| version >= (28, 2));
    let setting = match feature {
        Some(value) => format!("\"features\": {{\"cdi\": {value}}}"),
        None => "features.cdi not set".to_owned(),
    };
    let default_text = match engine.major_minor() {
        Some(_) if default_on => format!("on by default in {}", engine.label()),
        Some(_) => format!("off by default in {}", engine.label()),
        None => "off by default before 28.2 (version unknown)".to_owned(),
    };
    evidence.push(format!("{DOCKER_CONFIG}: {setting}; CDI is {default_text}"));
    engine.cdi = if feature.unwrap_or(default_on) {
        CdiState::Enabled { spec_dirs: default_spec_dirs() }
    } else {
        CdiState::Disabled { fix: Advice::CdiOffDocker { config: DOCKER_CONFIG.to_owned() }.into() }
    };
    engine.evidence = evidence;
    Some(engine)
}

fn podman(host: &HostRoot) -> Option<Engine> {
    let (mut engine, mut evidence) = match present(host, EngineKind::Podman, false)? {
        Ok(found) => found,
        Err(unsupported) => return Some(unsupported),
    };
    evidence.push("podman always loads CDI devices".to_owned());
    engine.cdi = CdiState::Enabled { spec_dirs: default_spec_dirs() };
    engine.evidence = evidence;
    Some(engine)
}

/// Every engine found under the host root (a configuration file or a binary), in a fixed order.
pub fn detect(host: &HostRoot) -> Vec<Engine> {
    [containerd(host), crio(host), docker(host), podman(host)].into_iter().flatten().collect()
}
