//! `ascend-ctk runtime exec` (the OCI runtime in front of runc) and `ascend-ctk runtime configure`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::chip_cache::{ChipCache, DEFAULT_CHIP_CACHE};
use crate::inject::MountDelivery;
use crate::runtime_config::{
    configure, parse_runtime_classes, runtime_class_manifest, runtime_class_warnings, ConfigureOptions, RuntimeKind,
    DEFAULT_RUNTIME_NAME,
};
use crate::runtime_shim::{prepare_bundle, report_to_runc_log, PrepareOptions, RuncInvocation};
use crate::secure_path::check_trusted_file;
use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use oci_spec::runtime::Hook;

use super::settings::{report_fallback, HostSettings};
use super::RUNTIME_LINK_NAME;

/// Runtime subcommands.
#[derive(Debug, Subcommand)]
pub enum RuntimeCommand {
    /// Edit the bundle's config.json on `create`/`run`, then exec runc with the same arguments.
    Exec(ExecArgs),
    /// Register the runtime with a container engine.
    Configure(ConfigureArgs),
}

/// The `--chip-cache` value that turns the cache off.
const CHIP_CACHE_OFF: &str = "off";

/// How driver mounts are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Delivery {
    /// Bind mounts in config.json, performed by runc.
    Spec,
    /// A createRuntime hook (`ascend-ctk hook`) mounting inside the container's namespace.
    Hook,
}

/// Settings of the runtime role; every one also has an environment variable because engines
/// start the runtime without letting us choose its flags.
#[derive(Debug, Clone, Parser)]
#[command(name = RUNTIME_LINK_NAME)]
pub struct ExecSettings {
    #[command(flatten)]
    host: HostSettings,
    /// The low-level runtime to exec (a name is looked up in PATH).
    #[arg(long, env = "ASCEND_CTK_RUNC", default_value = "runc")]
    runc: PathBuf,
    /// How driver mounts reach the container.
    #[arg(long, env = "ASCEND_CTK_MOUNT_DELIVERY", value_enum, default_value_t = Delivery::Spec)]
    mount_delivery: Delivery,
    /// The file remembering DCMI's answer between container starts (root-owned; checked against the
    /// boot, the /dev/davinci* nodes and the library before use), or `off` to ask DCMI every time.
    #[arg(long, env = "ASCEND_CTK_CHIP_CACHE", default_value = DEFAULT_CHIP_CACHE, value_parser = parse_chip_cache)]
    chip_cache: ChipCacheSetting,
}

/// `--chip-cache`: a file, or off.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ChipCacheSetting {
    Off,
    File(PathBuf),
}

/// An absolute path or `off`: a relative path would land wherever the engine starts the runtime (often the bundle).
fn parse_chip_cache(text: &str) -> Result<ChipCacheSetting, String> {
    if text == CHIP_CACHE_OFF {
        return Ok(ChipCacheSetting::Off);
    }
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        return Err(format!("{text:?} is neither an absolute path nor {CHIP_CACHE_OFF:?}"));
    }
    Ok(ChipCacheSetting::File(path))
}

impl ExecSettings {
    /// The chip cache, unless turned off.
    fn chip_cache(&self) -> Option<ChipCache> {
        match &self.chip_cache {
            ChipCacheSetting::Off => None,
            ChipCacheSetting::File(path) => Some(ChipCache::new(path)),
        }
    }
}

/// Arguments of `runtime exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    settings: ExecSettings,
    /// runc's arguments, after `--`.
    #[arg(last = true, required = true)]
    runc_args: Vec<String>,
}

/// Arguments of `runtime configure`.
#[derive(Debug, Args)]
pub struct ConfigureArgs {
    /// The engine.
    #[arg(long, value_parser = parse_kind)]
    runtime: RuntimeKind,
    /// The configuration file (default: the engine's usual path; a drop-in for CRI-O).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The runtime (handler) name to register.
    #[arg(long, default_value = DEFAULT_RUNTIME_NAME)]
    runtime_name: String,
    /// The runtime binary: a link named ascend-runtime pointing at ascend-ctk.
    #[arg(long, default_value = "/usr/local/bin/ascend-runtime")]
    runtime_path: PathBuf,
    /// Make it the engine's default runtime.
    #[arg(long)]
    set_as_default: bool,
    /// Enable CDI in the engine (containerd enable_cdi, Docker features.cdi, CRI-O spec dirs).
    #[arg(long)]
    cdi: bool,
    /// Print the diff instead of writing.
    #[arg(long)]
    dry_run: bool,
    /// RuntimeClasses of the cluster (`kubectl get runtimeclass -o json` or YAML) to check.
    #[arg(long)]
    runtime_class_file: Option<PathBuf>,
}

fn parse_kind(text: &str) -> Result<RuntimeKind, String> {
    text.parse().map_err(|e: crate::Error| e.to_string())
}

/// Runs a runtime subcommand.
pub fn run(command: RuntimeCommand) -> anyhow::Result<ExitCode> {
    match command {
        RuntimeCommand::Exec(args) => exec(&args.settings, args.runc_args),
        RuntimeCommand::Configure(args) => configure_engine(&args),
    }
}

/// The `ascend-runtime` link: settings from the environment, all arguments for runc.
pub fn exec_from_link(runc_args: Vec<String>) -> anyhow::Result<ExitCode> {
    let settings =
        ExecSettings::try_parse_from([RUNTIME_LINK_NAME]).context("runtime settings from the environment")?;
    exec(&settings, runc_args)
}

fn exec(settings: &ExecSettings, runc_args: Vec<String>) -> anyhow::Result<ExitCode> {
    let invocation = RuncInvocation::parse(&runc_args)?;
    if let Some(bundle) = &invocation.bundle {
        let bundle = if bundle.is_absolute() {
            bundle.clone()
        } else {
            std::env::current_dir().context("current directory")?.join(bundle)
        };
        if let Err(error) = prepare(settings, &bundle) {
            let message = format!("ascend-ctk: {error:#}");
            // The engine may only look at runc's log file; losing this line would hide the
            // reason from the user, so a failure to write it is reported too.
            if let Err(log_error) = report_to_runc_log(&invocation, &message) {
                eprintln!("ascend-ctk: could not write the runtime log: {log_error}");
            }
            return Err(error);
        }
    }
    let runc = find_runc(&settings.runc)?;
    let error = std::process::Command::new(&runc).args(&runc_args).exec();
    Err(error).with_context(|| format!("exec {}", runc.display()))
}

fn prepare(settings: &ExecSettings, bundle: &Path) -> anyhow::Result<()> {
    let delivery = match settings.mount_delivery {
        Delivery::Spec => MountDelivery::InSpec,
        Delivery::Hook => MountDelivery::ByHook(hook_entry(&settings.host)?),
    };
    let options = PrepareOptions {
        host_root: settings.host.host_root.clone(),
        injection: settings.host.injection(),
        chip_type: settings.host.chip_type.clone(),
        cdi_kind: settings.host.cdi_kind.clone(),
        delivery,
        chip_cache: settings.chip_cache(),
    };
    let outcome = prepare_bundle(bundle, &options).with_context(|| format!("preparing bundle {}", bundle.display()))?;
    if let Some(source) = &outcome.chip_source {
        report_fallback(source);
    }
    if let Some(note) = &outcome.cache_note {
        eprintln!("ascend-ctk: warning: {note}");
    }
    Ok(())
}

/// The createRuntime hook entry pointing back at this binary, with a fixed minimal environment.
pub fn hook_entry(host: &HostSettings) -> anyhow::Result<Hook> {
    let exe = std::env::current_exe().context("locating ascend-ctk")?;
    let exe = std::fs::canonicalize(&exe).with_context(|| format!("resolving {}", exe.display()))?;
    let mut hook = Hook::default();
    hook.set_args(Some(vec![
        exe.to_string_lossy().into_owned(),
        "hook".to_owned(),
        "--host-root".to_owned(),
        host.host_root.to_string_lossy().into_owned(),
        "--mount-list-dir".to_owned(),
        host.mount_list_dir.to_string_lossy().into_owned(),
        "--cdi-kind".to_owned(),
        host.cdi_kind.clone(),
    ]));
    hook.set_path(exe);
    hook.set_env(Some(vec!["PATH=/usr/sbin:/usr/bin:/sbin:/bin".to_owned()]));
    Ok(hook)
}

/// Finds runc (a bare name is looked up in PATH, skipping ourselves) and refuses a binary that
/// someone other than root could replace.
fn find_runc(wanted: &Path) -> anyhow::Result<PathBuf> {
    let own = std::env::current_exe().ok().and_then(|p| std::fs::canonicalize(p).ok());
    let candidates: Vec<PathBuf> = if wanted.components().count() > 1 {
        vec![wanted.to_path_buf()]
    } else {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
        std::env::split_paths(&path).map(|dir| dir.join(wanted)).collect()
    };
    for candidate in candidates {
        // One stat per PATH entry; only a file that exists is resolved.
        if !candidate.is_file() {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if Some(&real) == own.as_ref() {
            continue;
        }
        return Ok(check_trusted_file(&real)?);
    }
    bail!("no {} found (set --runc or ASCEND_CTK_RUNC)", wanted.display())
}

fn configure_engine(args: &ConfigureArgs) -> anyhow::Result<ExitCode> {
    let path = args.config.clone().unwrap_or_else(|| args.runtime.default_config_path().to_path_buf());
    let options = ConfigureOptions {
        runtime_name: args.runtime_name.clone(),
        runtime_path: args.runtime_path.clone(),
        set_as_default: args.set_as_default,
        enable_cdi: args.cdi,
    };
    let edit = configure(args.runtime, &path, &options)?;
    if args.dry_run {
        print!("{}", edit.diff());
    } else if edit.changes_file() {
        let backup = edit.write()?;
        match backup {
            Some(backup) => eprintln!("wrote {} (original kept in {})", path.display(), backup.display()),
            None => eprintln!("wrote {}", path.display()),
        }
        eprintln!("restart {} to load it", args.runtime);
    } else {
        eprintln!("{} already registers {:?}: unchanged", path.display(), args.runtime_name);
    }
    let manifest_name = if args.runtime_name == DEFAULT_RUNTIME_NAME { "ascend" } else { &args.runtime_name };
    println!("---\n{}", runtime_class_manifest(manifest_name, &args.runtime_name));
    if let Some(file) = &args.runtime_class_file {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        for warning in runtime_class_warnings(&parse_runtime_classes(&text), &edit.handlers) {
            eprintln!("warning: {warning}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_cache_is_an_absolute_file_or_off() {
        let settings = ExecSettings::try_parse_from(["ascend-runtime", "--chip-cache", "off"]).expect("off parses");
        assert_eq!(settings.chip_cache(), None);
        let settings = ExecSettings::try_parse_from(["ascend-runtime"]).expect("the default parses");
        assert_eq!(settings.chip_cache(), Some(ChipCache::new(DEFAULT_CHIP_CACHE)));
        let error = ExecSettings::try_parse_from(["ascend-runtime", "--chip-cache", "chips.json"])
            .expect_err("a relative path is refused")
            .to_string();
        assert!(error.contains("\"chips.json\" is neither an absolute path nor \"off\""), "{error}");
    }
}
