//! The runtime role from exec to runc, and the hook from exec to its mounts, on the shortest path: what an engine
//! starts on every container start.
//!
//! Engines start the runtime without letting us choose its flags, so its settings come from the environment
//! ([`RuntimeSettings::from_environment`]) and every argument belongs to runc; the hook gets its settings from the
//! arguments its entry in `config.json` carries ([`crate::HookConfig::from_args`]). Both are read by hand, not
//! by an argument parser, because they run on every container start; `ascend-ctk runtime exec` keeps clap for
//! people. Measured with hyperfine on a busy 2-core VM (300 runs, the runtime exec'ing `/bin/true`, no bundle):
//! 1.9 ms through the `ascend-runtime` link without a parser, 2.0 ms through `ascend-ctk runtime exec` and clap,
//! 1.6 ms for `/usr/bin/env /bin/true`. What remains above `env` is loading this binary, not reading arguments.
//!
//! The binary stays dynamically linked. A static-pie glibc build of the same code started in 1.5 ms against 1.8 ms
//! dynamic (`env`: 1.4 ms) in a comparison of the same kind, but a static glibc program cannot load `libdcmi.so`:
//! `dlopen` from a static executable brings a second libc.so.6 into the process (see "Why is statically linking
//! glibc discouraged?", <https://makemeengr.com/why-is-statically-linking-glibc-discouraged>), and here it crashed
//! with SIGSEGV on the first start after a boot, the one that asks DCMI. The musl target is not installed here. The
//! bundled `ascend-ctk` is linked position-dependent instead, which spares the loader its relocations
//! (`programs/build.rs` has the figures). The hook loads no library: its own binary ([`HOOK_BINARY_NAME`]) is
//! linked statically in the release builds, and runc starts it without the dynamic loader.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use oci_spec::runtime::Hook;

use crate::chip_cache::{ChipCache, DEFAULT_CHIP_CACHE};
use crate::chip_discovery::ChipSource;
use crate::error::Error;
use crate::hook::{run_from_stdin, HookConfig};
use crate::inject::{InjectionConfig, MountDelivery, DEFAULT_CDI_KIND};
use crate::mount_list::DEFAULT_MOUNT_LIST_DIR;
pub use crate::runtime_env::{
    CDI_KIND_ENV, CHIP_CACHE_ENV, CHIP_TYPE_ENV, HOST_ROOT_ENV, MOUNT_DELIVERY_ENV, MOUNT_LIST_DIR_ENV, RUNC_ENV,
};
use crate::runtime_shim::{prepare_bundle, report_to_runc_log, PrepareOptions, RuncInvocation};
use crate::secure_path::check_trusted_file;
pub use crate::start_error::StartError;

/// The chip-cache value that turns the cache off.
pub const CHIP_CACHE_OFF: &str = "off";

/// The `PATH` of the hook's fixed environment.
const HOOK_PATH: &str = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

/// How driver mounts reach the container, as the operator chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryChoice {
    /// Bind mounts in `config.json`, performed by runc.
    Spec,
    /// A `createRuntime` hook pointing back at the running binary, mounting inside the container's namespace.
    Hook,
}

/// Everything the runtime role needs to know before it execs runc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// The host's root filesystem.
    pub host_root: PathBuf,
    /// The directory of `.list` mount lists, beneath the host root.
    pub mount_list_dir: PathBuf,
    /// The operator's chip type; `None` asks DCMI (or the chip cache), then scans `/dev`.
    pub chip_type: Option<String>,
    /// The CDI kind whose names in `cdi.k8s.io/*` annotations count as requests.
    pub cdi_kind: String,
    /// The low-level runtime (a bare name is looked up in `PATH`).
    pub runc: PathBuf,
    /// How driver mounts reach the container.
    pub delivery: DeliveryChoice,
    /// Where DCMI's answer is remembered; `None` asks DCMI every time.
    pub chip_cache: Option<ChipCache>,
}

impl RuntimeSettings {
    /// The settings from the `ASCEND_CTK_*` variables, each unset one at its default.
    ///
    /// # Errors
    /// [`Error::RuntimeArgs`] naming the variable for an empty or non-UTF-8 value, a relative chip cache and a
    /// delivery other than `spec` or `hook`.
    pub fn from_environment() -> Result<Self, Error> {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// [`RuntimeSettings::from_environment`] over any lookup of the variables.
    ///
    /// # Errors
    /// As [`RuntimeSettings::from_environment`].
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self, Error> {
        let text = |name: &'static str| -> Result<Option<String>, Error> {
            match lookup(name) {
                None => Ok(None),
                Some(value) => match value.into_string() {
                    Ok(text) if !text.is_empty() => Ok(Some(text)),
                    Ok(_) => Err(Error::RuntimeArgs(format!("{name} is set but empty"))),
                    Err(value) => Err(Error::RuntimeArgs(format!("{name} is not UTF-8: {value:?}"))),
                },
            }
        };
        let delivery = match text(MOUNT_DELIVERY_ENV)?.as_deref() {
            None | Some("spec") => DeliveryChoice::Spec,
            Some("hook") => DeliveryChoice::Hook,
            Some(other) => {
                return Err(Error::RuntimeArgs(format!(
                    "{MOUNT_DELIVERY_ENV}={other:?}: expected \"spec\" or \"hook\""
                )))
            }
        };
        let chip_cache = parse_chip_cache(text(CHIP_CACHE_ENV)?.as_deref().unwrap_or(DEFAULT_CHIP_CACHE))
            .map_err(|reason| Error::RuntimeArgs(format!("{CHIP_CACHE_ENV}: {reason}")))?;
        Ok(RuntimeSettings {
            host_root: PathBuf::from(text(HOST_ROOT_ENV)?.unwrap_or_else(|| "/".to_owned())),
            mount_list_dir: PathBuf::from(
                text(MOUNT_LIST_DIR_ENV)?.unwrap_or_else(|| DEFAULT_MOUNT_LIST_DIR.to_owned()),
            ),
            chip_type: text(CHIP_TYPE_ENV)?,
            cdi_kind: text(CDI_KIND_ENV)?.unwrap_or_else(|| DEFAULT_CDI_KIND.to_owned()),
            runc: PathBuf::from(text(RUNC_ENV)?.unwrap_or_else(|| "runc".to_owned())),
            delivery,
            chip_cache,
        })
    }
}

/// A chip-cache setting: an absolute path, or [`CHIP_CACHE_OFF`] for none. A relative path is refused: it would
/// land wherever the engine starts the runtime (often the bundle).
///
/// # Errors
/// The reason, for a relative path.
pub fn parse_chip_cache(text: &str) -> Result<Option<ChipCache>, String> {
    if text == CHIP_CACHE_OFF {
        return Ok(None);
    }
    if !Path::new(text).is_absolute() {
        return Err(format!("{text:?} is neither an absolute path nor {CHIP_CACHE_OFF:?}"));
    }
    Ok(Some(ChipCache::new(text)))
}

/// An error and its causes on one line, `outer: inner: innermost`, as a human reads them on stderr.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// The runtime role with its settings from the environment ([`RuntimeSettings::from_environment`]), then
/// [`exec_runc`]; returns only on failure, after saying why on stderr.
pub fn runtime_main(runc_args: &[String]) -> ExitCode {
    let error = match RuntimeSettings::from_environment() {
        Ok(settings) => exec_runc(&settings, runc_args),
        Err(error) => StartError::step("runtime settings from the environment")(error),
    };
    fail(&error)
}

/// The name of the hook's own binary, installed beside `ascend-ctk`: a thin main over [`hook_program_main`]. It is
/// linked with nothing but the hook's code, so that runc starts it faster than the whole toolkit; [`hook_entry`]
/// points the spec at it when it is there.
pub const HOOK_BINARY_NAME: &str = "ascend-ctk-hook";

/// The main of [`HOOK_BINARY_NAME`]: its arguments as `ascend-ctk hook` takes them
/// ([`HookConfig::from_args`]), then [`hook_main`]; `--help` and `--version` say what it is. An argument it does
/// not know gives exit status 2, like a command-line error of `ascend-ctk`.
pub fn hook_program_main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.first().and_then(|first| first.to_str()) {
        Some("--help" | "-h") => {
            println!(
                "{HOOK_BINARY_NAME}: the OCI createRuntime (or prestart) hook of ascend-ctk: mounts the driver files \
                 read-only inside the container's mount namespace. runc starts it with the container state on stdin \
                 and the arguments ascend-runtime wrote into config.json: --host-root DIR, --mount-list-dir DIR, \
                 --cdi-kind KIND, --mount=PATH (each mount the runtime resolved; checked again here), --allow-link. \
                 Without --mount it reads the request and the mount lists itself, like `ascend-ctk hook`."
            );
            return ExitCode::SUCCESS;
        }
        Some("--version" | "-V") => {
            println!("{HOOK_BINARY_NAME} {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    match HookConfig::from_args(&args) {
        Ok(config) => hook_main(&config),
        Err(error) => {
            eprintln!("{HOOK_BINARY_NAME}: error: {error} (see {HOOK_BINARY_NAME} --help)");
            ExitCode::from(2)
        }
    }
}

/// The hook ([`run_from_stdin`]): says on stderr what it mounted, or why it failed (runc then aborts the
/// container's creation).
pub fn hook_main(config: &HookConfig) -> ExitCode {
    match run_from_stdin(config) {
        Ok(outcome) => {
            // One write for all the lines (stderr is unbuffered, and eprintln! writes each line in pieces).
            let report: String = outcome
                .mounted
                .iter()
                .map(|path| format!("ascend-ctk hook: mounted {} read-only\n", path.display()))
                .collect();
            // Nothing is lost for the container if stderr is gone; the mounts are in place.
            let _ = std::io::Write::write_all(&mut std::io::stderr(), report.as_bytes());
            ExitCode::SUCCESS
        }
        Err(error) => fail(&error),
    }
}

fn fail(error: &StartError) -> ExitCode {
    eprintln!("ascend-ctk: error: {}", error_chain(error));
    ExitCode::FAILURE
}

/// The runtime role: on `create`/`run`, edits the bundle's `config.json` for the request it carries, then execs
/// runc with `runc_args` untouched. Returns only when something failed; a failure to prepare the bundle is also
/// appended to runc's `--log` file, where engines such as containerd's shim look for the runtime's error.
/// Anything worth a warning (a `/dev` scan instead of DCMI, an unusable chip cache) goes to stderr.
pub fn exec_runc(settings: &RuntimeSettings, runc_args: &[String]) -> StartError {
    match prepare_then_find_runc(settings, runc_args) {
        Ok(runc) => {
            let error = std::process::Command::new(&runc).args(runc_args).exec();
            StartError::Io { context: format!("exec {}", runc.display()), source: error }
        }
        Err(error) => error,
    }
}

fn prepare_then_find_runc(settings: &RuntimeSettings, runc_args: &[String]) -> Result<PathBuf, StartError> {
    let invocation = RuncInvocation::parse(runc_args)?;
    if let Some(bundle) = &invocation.bundle {
        let bundle = if bundle.is_absolute() {
            bundle.clone()
        } else {
            std::env::current_dir().map_err(StartError::io("current directory"))?.join(bundle)
        };
        if let Err(error) = prepare(settings, &bundle) {
            // The engine may only look at runc's log file; losing this line would hide the reason from the user,
            // so a failure to write it is reported too.
            if let Err(log_error) = report_to_runc_log(&invocation, &format!("ascend-ctk: {}", error_chain(&error))) {
                eprintln!("ascend-ctk: could not write the runtime log: {log_error}");
            }
            return Err(error);
        }
    }
    find_runc(&settings.runc)
}

fn prepare(settings: &RuntimeSettings, bundle: &Path) -> Result<(), StartError> {
    let delivery = match settings.delivery {
        DeliveryChoice::Spec => MountDelivery::InSpec,
        DeliveryChoice::Hook => MountDelivery::ByHookWithMounts(hook_entry(
            &settings.host_root,
            &settings.mount_list_dir,
            &settings.cdi_kind,
        )?),
    };
    let options = PrepareOptions {
        host_root: settings.host_root.clone(),
        injection: InjectionConfig { mount_list_dir: settings.mount_list_dir.clone() },
        chip_type: settings.chip_type.clone(),
        cdi_kind: settings.cdi_kind.clone(),
        delivery,
        chip_cache: settings.chip_cache.clone(),
    };
    let outcome =
        prepare_bundle(bundle, &options).map_err(StartError::step(format!("preparing bundle {}", bundle.display())))?;
    if let Some(warning) = outcome.chip_source.as_ref().and_then(ChipSource::fallback_warning) {
        eprintln!("ascend-ctk: warning: {warning}");
    }
    if let Some(note) = &outcome.cache_note {
        eprintln!("ascend-ctk: warning: {note}");
    }
    Ok(())
}

/// The `createRuntime` hook entry: [`HOOK_BINARY_NAME`] beside the running binary when it is there
/// (`<dir>/ascend-ctk-hook --host-root ...`), else the running binary itself (`<binary> hook --host-root ...`); with
/// a fixed minimal environment: a hook inherits whatever environment runc gives it, and none of it is trusted.
///
/// # Errors
/// [`StartError::Io`] when the running binary cannot be located.
pub fn hook_entry(host_root: &Path, mount_list_dir: &Path, cdi_kind: &str) -> Result<Hook, StartError> {
    let exe = std::env::current_exe().map_err(StartError::io("locating ascend-ctk"))?;
    let exe = std::fs::canonicalize(&exe).map_err(StartError::io(format!("resolving {}", exe.display())))?;
    let dedicated = exe.with_file_name(HOOK_BINARY_NAME);
    let executable = |found: std::fs::Metadata| found.is_file() && found.permissions().mode() & 0o111 != 0;
    let (exe, mut args) = if std::fs::metadata(&dedicated).is_ok_and(executable) {
        let args = vec![dedicated.to_string_lossy().into_owned()];
        (dedicated, args)
    } else {
        let args = vec![exe.to_string_lossy().into_owned(), "hook".to_owned()];
        (exe, args)
    };
    let mut hook = Hook::default();
    args.extend([
        "--host-root".to_owned(),
        host_root.to_string_lossy().into_owned(),
        "--mount-list-dir".to_owned(),
        mount_list_dir.to_string_lossy().into_owned(),
        "--cdi-kind".to_owned(),
        cdi_kind.to_owned(),
    ]);
    hook.set_args(Some(args));
    hook.set_path(exe);
    hook.set_env(Some(vec![HOOK_PATH.to_owned()]));
    Ok(hook)
}

/// Finds runc (a bare name is looked up in `PATH`, skipping ourselves) and refuses a binary that someone other
/// than root could replace.
fn find_runc(wanted: &Path) -> Result<PathBuf, StartError> {
    let candidates: Vec<PathBuf> = if wanted.components().count() > 1 {
        vec![wanted.to_path_buf()]
    } else {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
        std::env::split_paths(&path).map(|dir| dir.join(wanted)).collect()
    };
    // This binary's identity, looked up only when a candidate exists: a bare name may find the `ascend-runtime` link
    // first in PATH. Comparing device and inode costs one stat, where resolving both paths cost a readlink per
    // component of each.
    let mut own: Option<Option<(u64, u64)>> = None;
    for candidate in candidates {
        let Ok(found) = std::fs::metadata(&candidate) else {
            continue;
        };
        if !found.is_file() {
            continue;
        }
        let own = *own.get_or_insert_with(|| std::fs::metadata("/proc/self/exe").ok().map(|m| (m.dev(), m.ino())));
        if own == Some((found.dev(), found.ino())) {
            continue;
        }
        return check_trusted_file(&candidate).map_err(StartError::Plain);
    }
    Err(StartError::NoRunc(wanted.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<RuntimeSettings, Error> {
        let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| ((*k).to_owned(), OsString::from(v))).collect();
        RuntimeSettings::from_lookup(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn unset_variables_take_their_defaults() -> Result<(), Error> {
        let found = settings(&[])?;
        assert_eq!(found.host_root, PathBuf::from("/"));
        assert_eq!(found.mount_list_dir, PathBuf::from(DEFAULT_MOUNT_LIST_DIR));
        assert_eq!((found.chip_type, found.cdi_kind.as_str()), (None, DEFAULT_CDI_KIND));
        assert_eq!((found.runc, found.delivery), (PathBuf::from("runc"), DeliveryChoice::Spec));
        assert_eq!(found.chip_cache, Some(ChipCache::new(DEFAULT_CHIP_CACHE)));
        Ok(())
    }

    #[test]
    fn every_variable_is_read() -> Result<(), Error> {
        let found = settings(&[
            (HOST_ROOT_ENV, "/host"),
            (MOUNT_LIST_DIR_ENV, "/lists"),
            (CHIP_TYPE_ENV, "910B"),
            (CDI_KIND_ENV, "example.com/npu"),
            (RUNC_ENV, "/usr/bin/crun"),
            (MOUNT_DELIVERY_ENV, "hook"),
            (CHIP_CACHE_ENV, "off"),
        ])?;
        assert_eq!((found.host_root, found.mount_list_dir), (PathBuf::from("/host"), PathBuf::from("/lists")));
        assert_eq!((found.chip_type.as_deref(), found.cdi_kind.as_str()), (Some("910B"), "example.com/npu"));
        assert_eq!((found.runc, found.delivery), (PathBuf::from("/usr/bin/crun"), DeliveryChoice::Hook));
        assert_eq!(found.chip_cache, None);
        Ok(())
    }

    #[test]
    fn unusable_values_are_refused_naming_the_variable() {
        for (vars, expected) in [
            ([(CHIP_CACHE_ENV, "chips.json")], "\"chips.json\" is neither an absolute path nor \"off\""),
            ([(MOUNT_DELIVERY_ENV, "Hook")], "ASCEND_CTK_MOUNT_DELIVERY=\"Hook\""),
            ([(HOST_ROOT_ENV, "")], "ASCEND_CTK_HOST_ROOT is set but empty"),
        ] {
            let error = settings(&vars).expect_err("refused").to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn the_chain_names_every_cause() {
        let error = StartError::Step {
            context: "preparing bundle /b".to_owned(),
            source: Box::new(Error::io("open", "/b/config.json", std::io::Error::from(std::io::ErrorKind::NotFound))),
        };
        let text = error_chain(&error);
        assert!(text.starts_with("preparing bundle /b: "), "{text}");
        assert!(text.contains("/b/config.json"), "{text}");
    }
}
