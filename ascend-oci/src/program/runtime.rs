//! `ascend-ctk runtime exec` (the OCI runtime in front of runc) and `ascend-ctk runtime configure`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::chip_cache::{ChipCache, DEFAULT_CHIP_CACHE};
use crate::runtime_config::{
    configure, parse_runtime_classes, runtime_class_manifest, runtime_class_warnings, ConfigureOptions, RuntimeKind,
    DEFAULT_RUNTIME_NAME,
};
use crate::runtime_exec::{
    self, exec_runc, parse_chip_cache, DeliveryChoice, RuntimeSettings, CHIP_CACHE_ENV, MOUNT_DELIVERY_ENV, RUNC_ENV,
};
use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use oci_spec::runtime::Hook;

use super::settings::HostSettings;

/// The name under which the binary acts as an OCI runtime.
pub const RUNTIME_LINK_NAME: &str = "ascend-runtime";

/// Runtime subcommands.
#[derive(Debug, Subcommand)]
pub enum RuntimeCommand {
    /// Edit the bundle's config.json on `create`/`run`, then exec runc with the same arguments.
    Exec(ExecArgs),
    /// Register the runtime with a container engine.
    Configure(ConfigureArgs),
}

/// How driver mounts are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Delivery {
    /// Bind mounts in config.json, performed by runc.
    Spec,
    /// A createRuntime hook (`ascend-ctk hook`) mounting inside the container's namespace.
    Hook,
}

/// Settings of the runtime role; every one also has an environment variable because engines
/// start the runtime without letting us choose its flags (the `ascend-runtime` link reads only those, without clap:
/// [`RuntimeSettings::from_environment`]).
#[derive(Debug, Clone, Parser)]
#[command(name = RUNTIME_LINK_NAME)]
pub struct ExecSettings {
    #[command(flatten)]
    host: HostSettings,
    /// The low-level runtime to exec (a name is looked up in PATH).
    #[arg(long, env = RUNC_ENV, default_value = "runc")]
    runc: PathBuf,
    /// How driver mounts reach the container.
    #[arg(long, env = MOUNT_DELIVERY_ENV, value_enum, default_value_t = Delivery::Spec)]
    mount_delivery: Delivery,
    /// The file remembering DCMI's answer between container starts (root-owned; checked against the
    /// boot, the /dev/davinci* nodes and the library before use), or `off` to ask DCMI every time.
    #[arg(long, env = CHIP_CACHE_ENV, default_value = DEFAULT_CHIP_CACHE, value_parser = parse_chip_cache_setting)]
    chip_cache: ChipCacheSetting,
}

/// `--chip-cache`: the cache, or none when off.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ChipCacheSetting(Option<ChipCache>);

fn parse_chip_cache_setting(text: &str) -> Result<ChipCacheSetting, String> {
    parse_chip_cache(text).map(ChipCacheSetting)
}

impl ExecSettings {
    /// The chip cache, unless turned off.
    fn chip_cache(&self) -> Option<ChipCache> {
        self.chip_cache.0.clone()
    }

    /// The settings as the runtime role takes them.
    fn runtime_settings(&self) -> RuntimeSettings {
        RuntimeSettings {
            host_root: self.host.host_root.clone(),
            mount_list_dir: self.host.mount_list_dir.clone(),
            chip_type: self.host.chip_type.clone(),
            cdi_kind: self.host.cdi_kind.clone(),
            runc: self.runc.clone(),
            delivery: match self.mount_delivery {
                Delivery::Spec => DeliveryChoice::Spec,
                Delivery::Hook => DeliveryChoice::Hook,
            },
            chip_cache: self.chip_cache(),
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

/// An engine name as clap parses it (`--runtime`), shared with `node-setup`.
pub(super) fn parse_kind(text: &str) -> Result<RuntimeKind, String> {
    text.parse().map_err(|e: crate::Error| e.to_string())
}

/// Runs a runtime subcommand.
pub fn run(command: RuntimeCommand) -> anyhow::Result<ExitCode> {
    match command {
        RuntimeCommand::Exec(args) => Err(exec_runc(&args.settings.runtime_settings(), &args.runc_args).into()),
        RuntimeCommand::Configure(args) => configure_engine(&args),
    }
}

/// The createRuntime hook entry pointing back at this binary, with a fixed minimal environment.
pub fn hook_entry(host: &HostSettings) -> anyhow::Result<Hook> {
    Ok(runtime_exec::hook_entry(&host.host_root, &host.mount_list_dir, &host.cdi_kind)?)
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
