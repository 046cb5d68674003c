//! Section 3, CDI: does each container engine of the host load CDI devices as configured, and can it read the
//! `cdiVersion` of the node's spec? A spec an engine does not load, or whose version it does not know, leaves pods
//! with "unresolvable CDI devices" (or, with podman 4.3, a spec skipped without a word).

use std::path::Path;

use super::advice::{Advice, Fix};
use super::check::{CheckResult, Section, Status};
use super::compatibility::Version;
use super::container_engines::{detect, CdiState, Engine, EngineKind};
use super::context::{DoctorOptions, Facts};

/// The newest `cdiVersion` a range of engine releases is known to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CdiReadLimit {
    /// The engine.
    pub engine: EngineKind,
    /// The first release of the range, `(major, minor)`; the range runs up to the next row of the same engine.
    pub from: (u32, u32),
    /// The newest spec version those releases load.
    pub reads_up_to: &'static str,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// What the doctor knows of the spec versions engines load: only rows with a source. An engine release before
/// its first row is "not known", and judged against [`KNOWN_TO_EVERY_ROW`].
pub const CDI_READ_LIMITS: [CdiReadLimit; 4] = [
    CdiReadLimit {
        engine: EngineKind::Containerd,
        from: (1, 7),
        reads_up_to: "0.5.0",
        source: "containerd 1.7.0's go.mod: container-device-interface v0.5.4",
    },
    CdiReadLimit {
        engine: EngineKind::Containerd,
        from: (2, 0),
        reads_up_to: "0.8.0",
        source: "containerd 2.x's go.mod: tags.cncf.io/container-device-interface v0.8",
    },
    CdiReadLimit {
        engine: EngineKind::Docker,
        from: (27, 0),
        reads_up_to: "0.7.0",
        source: "moby 27.x's vendor.mod: tags.cncf.io/container-device-interface v0.7.2",
    },
    CdiReadLimit {
        engine: EngineKind::Podman,
        from: (4, 3),
        reads_up_to: "0.5.0",
        source: "measured: Debian 12's podman 4.3.1 loads 0.3.0 to 0.5.0 and skips a 0.6.0 spec",
    },
];

/// The spec version every row of [`CDI_READ_LIMITS`] loads: what an engine the table does not know is held to.
pub const KNOWN_TO_EVERY_ROW: &str = "0.5.0";

/// The row that covers an engine's release, if the table has one.
pub fn read_limit(engine: &Engine) -> Option<&'static CdiReadLimit> {
    let version = engine.major_minor()?;
    CDI_READ_LIMITS.iter().filter(|row| row.engine == engine.kind && row.from <= version).max_by_key(|row| row.from)
}

fn directory_of(host_path: &str) -> String {
    Path::new(host_path).parent().map_or_else(String::new, |dir| dir.display().to_string())
}

/// container_runtime.cdi_engine: every engine found loads CDI devices, from the directory the node's spec is in.
pub fn cdi_engine(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "container_runtime.cdi_engine",
        Section::ContainerRuntime,
        "Container engine loads CDI devices",
        Status::Ok,
    );
    let engines = detect(&options.host);
    facts.engines = engines.clone();
    if engines.is_empty() {
        return check
            .evidence("no containerd, CRI-O, Docker or podman configuration or binary found")
            .with_status(Status::Skip);
    }
    let mut check = check;
    let mut fixes: Vec<Fix> = Vec::new();
    for engine in &engines {
        check = check.evidence_lines(engine.evidence.iter().map(|line| format!("{}: {line}", engine.kind)));
        match &engine.cdi {
            CdiState::Enabled { spec_dirs } => {
                for (spec, _) in &facts.cdi_specs {
                    let dir = directory_of(spec);
                    if !spec_dirs.contains(&dir) {
                        check = check.evidence(format!(
                            "{} reads CDI specs from {} only, not from {dir} where {spec} is",
                            engine.kind,
                            spec_dirs.join(", ")
                        ));
                        fixes.push(Advice::CdiSpecDir { dir, engine: engine.kind.to_string() }.into());
                    }
                }
            }
            CdiState::Disabled { fix } => {
                check = check.evidence(format!("{}: CDI is off", engine.label()));
                fixes.push(fix.clone());
            }
            CdiState::Unsupported => {
                let (major, minor) = engine.kind.cdi_floor();
                check = check.evidence(format!("{}: this release cannot load CDI devices", engine.label()));
                fixes.push(
                    Advice::CdiUnsupported { engine: engine.kind.to_string(), floor: format!("{major}.{minor}") }
                        .into(),
                );
            }
            CdiState::Unknown => {}
        }
    }
    if fixes.is_empty() {
        return check;
    }
    // CDI is one of two ways devices reach containers; a node with our spec was set up for it.
    let status = if facts.cdi_specs.is_empty() { Status::Warn } else { Status::Fail };
    fixes.push(Advice::CdiEngineRestart.into());
    check.advise(Fix::join(fixes, "; ")).with_status(status)
}

/// container_runtime.cdi_version: each engine that loads CDI knows the `cdiVersion` of the node's spec.
pub fn cdi_version(_options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "container_runtime.cdi_version",
        Section::ContainerRuntime,
        "CDI spec version readable by the engine",
        Status::Ok,
    );
    if facts.cdi_specs.is_empty() {
        return check.evidence("no CDI spec of the Ascend kind (see container_runtime.cdi)").with_status(Status::Skip);
    }
    let loaders: Vec<&Engine> =
        facts.engines.iter().filter(|engine| matches!(engine.cdi, CdiState::Enabled { .. })).collect();
    if loaders.is_empty() {
        return check
            .evidence("no engine loads CDI devices (see container_runtime.cdi_engine)")
            .with_status(Status::Skip);
    }
    let mut check = check;
    let mut status = Status::Ok;
    let mut fixes: Vec<Fix> = Vec::new();
    for (spec, declared) in &facts.cdi_specs {
        let Some(spec_version) = Version::parse(declared) else { continue };
        for engine in &loaders {
            let (limit, known) = match read_limit(engine) {
                Some(row) => (row.reads_up_to, format!("reads up to {} ({})", row.reads_up_to, row.source)),
                None => (
                    KNOWN_TO_EVERY_ROW,
                    format!(
                        "is not in the doctor's table of CDI readers; every release in it reads {KNOWN_TO_EVERY_ROW}"
                    ),
                ),
            };
            let readable = Version::parse(limit).is_some_and(|limit| spec_version <= limit);
            check = check.evidence(format!("{spec}: cdiVersion {declared}; {} {known}", engine.label()));
            if readable {
                continue;
            }
            // A known limit is a failure (the engine skips the spec); an unknown one only cannot be vouched for.
            let known_limit = read_limit(engine).is_some();
            status = status.max(if known_limit { Status::Fail } else { Status::Warn });
            fixes.push(Fix::from(Advice::CdiVersion {
                engine_label: engine.label(),
                declared: declared.clone(),
                known_limit,
                lowest: KNOWN_TO_EVERY_ROW.to_owned(),
                engine: engine.kind.to_string(),
            }));
        }
    }
    if fixes.is_empty() {
        return check;
    }
    check.advise(Fix::join(fixes, "; ")).with_status(status)
}
