//! The runtime role (what Huawei's `ascend-docker-runtime` does): on `create`, edit the bundle's
//! `config.json`, then hand the untouched command line to runc.
//!
//! Driver mounts go into the spec as read-only bind mounts by default ([`MountDelivery::InSpec`]):
//! runc then resolves every destination inside the rootfs itself, the mounts are visible in the
//! container's recorded config, and they survive runtime restarts. Their sources were checked
//! (root-owned, not group/other-writable, no symlinks) so only root could swap them before runc
//! mounts them. The hook delivery exists for setups where the spec cannot carry them.

use std::path::{Path, PathBuf};

use crate::bundle_config::{load_bundle_config, save_json};
use crate::chip_cache::ChipCache;
use crate::chip_discovery::{discover_chips, ChipSource};
use crate::error::{Error, Result};
use crate::inject::{apply_plan_to_json, request_from_spec, InjectionConfig, InjectionPlan, MountDelivery};
use crate::secure_path::HostRoot;

/// The longest runtime command line accepted (all arguments together).
pub const MAX_ARGV_CHARS: usize = 65_535;

/// runc's global flags that take a value.
const RUNC_VALUE_FLAGS: [&str; 5] = ["root", "log", "log-format", "criu", "rootless"];

/// The part of a runc command line this crate needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuncInvocation {
    /// The subcommand (`create`, `run`, `start`, `delete`, ...), if any.
    pub command: Option<String>,
    /// The bundle of `create`/`run` (`--bundle`/`-b`, default the current directory).
    pub bundle: Option<PathBuf>,
    /// runc's `--log` file: containerd's shim reads the runtime's error from it.
    pub log: Option<PathBuf>,
    /// runc's `--log-format` (`text` or `json`).
    pub log_format: Option<String>,
}

impl RuncInvocation {
    /// Parses runc's arguments (without the program name).
    ///
    /// # Errors
    /// [`Error::RuntimeArgs`] if the arguments exceed [`MAX_ARGV_CHARS`] or a flag lacks its value.
    pub fn parse(args: &[String]) -> Result<Self> {
        let total: usize = args.iter().map(|a| a.len() + 1).sum();
        if total > MAX_ARGV_CHARS {
            return Err(Error::RuntimeArgs(format!("{total} characters, more than {MAX_ARGV_CHARS}")));
        }
        let mut index = 0;
        let mut command = None;
        let (mut log, mut log_format) = (None, None);
        while index < args.len() {
            let arg = &args[index];
            if let Some(flag) = flag_name(arg) {
                let value = match arg.split_once('=') {
                    Some((_, value)) => Some(value.to_owned()),
                    None if RUNC_VALUE_FLAGS.contains(&flag) => {
                        index += 1;
                        Some(
                            args.get(index)
                                .cloned()
                                .ok_or_else(|| Error::RuntimeArgs(format!("{arg} needs a value")))?,
                        )
                    }
                    None => None,
                };
                match flag {
                    "log" => log = value.map(PathBuf::from),
                    "log-format" => log_format = value,
                    _ => {}
                }
                index += 1;
                continue;
            }
            command = Some(arg.clone());
            index += 1;
            break;
        }
        let mut bundle = None;
        if matches!(command.as_deref(), Some("create" | "run")) {
            bundle = Some(PathBuf::from("."));
            while index < args.len() {
                let arg = &args[index];
                match flag_name(arg) {
                    Some("bundle" | "b") => {
                        let value = match arg.split_once('=') {
                            Some((_, value)) => value.to_owned(),
                            None => {
                                index += 1;
                                args.get(index)
                                    .cloned()
                                    .ok_or_else(|| Error::RuntimeArgs(format!("{arg} needs a value")))?
                            }
                        };
                        bundle = Some(PathBuf::from(value));
                    }
                    Some("console-socket" | "pid-file" | "preserve-fds") if !arg.contains('=') => index += 1,
                    _ => {}
                }
                index += 1;
            }
        }
        Ok(RuncInvocation { command, bundle, log, log_format })
    }

    /// Whether runc will create a container from a bundle.
    pub fn creates_container(&self) -> bool {
        self.bundle.is_some()
    }
}

/// Appends an error to runc's `--log` file in its format, so that engines that read the
/// runtime's last error from that file (containerd's shim does) show our message. Without
/// `--log` this does nothing.
///
/// # Errors
/// [`Error::Io`] naming the log file.
pub fn report_to_runc_log(invocation: &RuncInvocation, message: &str) -> Result<()> {
    use std::io::Write;
    let Some(path) = &invocation.log else {
        return Ok(());
    };
    let line = if invocation.log_format.as_deref() == Some("json") {
        serde_json::json!({ "level": "error", "msg": message }).to_string()
    } else {
        format!("level=error msg={message:?}")
    };
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io("open", path, e))?;
    writeln!(file, "{line}").map_err(|e| Error::io("write", path, e))
}

/// `--root=x` → `root`, `-b` → `b`; `None` for a non-flag.
fn flag_name(arg: &str) -> Option<&str> {
    let stripped = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    if stripped.is_empty() {
        return None;
    }
    Some(stripped.split_once('=').map_or(stripped, |(name, _)| name))
}

/// How [`prepare_bundle`] works.
#[derive(Debug, Clone)]
pub struct PrepareOptions {
    /// The host root.
    pub host_root: PathBuf,
    /// Mount lists.
    pub injection: InjectionConfig,
    /// The chip type given by the operator; `None` asks DCMI, then scans `/dev`
    /// ([`discover_chips`]).
    pub chip_type: Option<String>,
    /// CDI kind whose names in `cdi.k8s.io/*` annotations count as requests.
    pub cdi_kind: String,
    /// How driver mounts are delivered.
    pub delivery: MountDelivery,
    /// Where DCMI's answer is remembered between containers; `None` asks DCMI every time.
    pub chip_cache: Option<ChipCache>,
}

/// What [`prepare_bundle`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrepareOutcome {
    /// The chips injected (empty: the spec was not touched).
    pub chips: Vec<u32>,
    /// The driver paths mounted (or left to the hook).
    pub mounts: Vec<PathBuf>,
    /// Where the chip list came from; `None` when the spec carried no request and the host was
    /// not read.
    pub chip_source: Option<ChipSource>,
    /// Why the chip cache was ignored or not written, when that was unexpected.
    pub cache_note: Option<String>,
}

/// Edits `<bundle>/config.json` for the request it carries. A spec without a request is not
/// rewritten at all, and neither the host nor the driver is read for it.
///
/// # Errors
/// Every error of reading the spec, parsing the request ([`Error::InvalidRequest`]), checking the
/// host ([`Error::ChipAbsent`], [`Error::DeviceNodeMissing`], permission errors) and writing the
/// spec.
pub fn prepare_bundle(bundle: &Path, options: &PrepareOptions) -> Result<PrepareOutcome> {
    let config_path = bundle.join("config.json");
    let mut config = load_bundle_config(&config_path)?;
    let request = request_from_spec(&config.spec, &options.cdi_kind)?;
    if request.devices.is_nothing() {
        return Ok(PrepareOutcome { chips: Vec::new(), mounts: Vec::new(), chip_source: None, cache_note: None });
    }
    let root = HostRoot::open(&options.host_root)?;
    let (discovered, cache_note) = match &options.chip_cache {
        Some(cache) => {
            let cached = cache.discover(&root, options.chip_type.clone())?;
            (cached.found, cached.note)
        }
        None => (discover_chips(&root, options.chip_type.clone())?, None),
    };
    let plan = InjectionPlan::build(&root, &discovered.chips, &request, &options.injection)?;
    if apply_plan_to_json(&mut config.json, &plan, &options.delivery)? {
        save_json(&config_path, &config.json)?;
    }
    Ok(PrepareOutcome {
        chips: plan.chips,
        mounts: plan.mounts.into_iter().map(|m| m.container_path).collect(),
        chip_source: Some(discovered.source),
        cache_note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn finds_create_and_bundle() -> Result<()> {
        let parsed =
            RuncInvocation::parse(&args("--root /run/x --log=/l --debug create --bundle /b --pid-file /p c1"))?;
        assert_eq!(parsed.command.as_deref(), Some("create"));
        assert_eq!(parsed.bundle, Some(PathBuf::from("/b")));
        assert_eq!(parsed.log, Some(PathBuf::from("/l")));
        let parsed = RuncInvocation::parse(&args("create -b=/b2 c1"))?;
        assert_eq!(parsed.bundle, Some(PathBuf::from("/b2")));
        let parsed = RuncInvocation::parse(&args("--root /run/x create c1"))?;
        assert_eq!(parsed.bundle, Some(PathBuf::from(".")));
        let parsed = RuncInvocation::parse(&args("--root /r start c1"))?;
        assert!(!parsed.creates_container());
        assert!(RuncInvocation::parse(&args("create --bundle")).is_err());
        Ok(())
    }
}
