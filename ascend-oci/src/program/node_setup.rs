//! `ascend-ctk node-setup`: what deploy/host/install.sh does on a node, done from a privileged container that has the
//! host's root filesystem mounted: the init step of the Helm chart's node daemons. It installs this binary, its
//! `ascend-runtime` link and the hook's own binary (`ascend-ctk-hook`, found beside this one) on the host, writes the
//! host's CDI spec of its chips, and, when asked, registers the runtime with the container engine.
//!
//! Everything after reading this binary happens inside the host's root (chroot), and the steps after the copy run
//! the installed binary there: they see the host's paths (the engine's configuration, the driver, `/var/run/cdi`)
//! as the engine will when it runs the runtime, and a binary that cannot run on the host (a C library older than the
//! one it was built against) fails here, in the init container's log, rather than at the first container start.
//!
//! Like install.sh it never restarts the engine: a restart interrupts pod management on the node (and kills every
//! container under Docker), so the operator restarts it, node by node, when a node is drained.

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{bail, Context};
use clap::Args;

use crate::atomic_file::{write_atomically_with, WriteOptions};
use crate::runtime_config::{RuntimeKind, DEFAULT_RUNTIME_NAME};
use crate::runtime_exec::HOOK_BINARY_NAME;

use super::runtime::{parse_kind, RUNTIME_LINK_NAME};

/// The name the toolkit is installed under.
const BINARY_NAME: &str = "ascend-ctk";

/// The search path of the steps run on the host: the host's own, not the container's environment.
const HOST_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Arguments of `node-setup`.
#[derive(Debug, Args)]
pub struct NodeSetupArgs {
    /// Where the host's root filesystem is mounted in this container.
    #[arg(long, default_value = "/host")]
    host_root: PathBuf,
    /// The host directory to install ascend-ctk and its ascend-runtime link into (created root-owned, mode 0755).
    #[arg(long, default_value = "/usr/local/bin")]
    install_dir: PathBuf,
    /// Register the runtime with this engine (containerd, crio or docker); without it the engine's configuration is
    /// not touched.
    #[arg(long, value_parser = parse_kind)]
    runtime: Option<RuntimeKind>,
    /// The engine's configuration file on the host (default: the engine's usual path; a drop-in for CRI-O).
    #[arg(long, requires = "runtime")]
    config: Option<PathBuf>,
    /// The runtime handler name to register: the RuntimeClass's handler.
    #[arg(long, default_value = DEFAULT_RUNTIME_NAME)]
    runtime_name: String,
    /// Leave CDI as it is in the engine's configuration (by default it is turned on: the device plugin's cdi mode
    /// and the DRA driver hand out CDI names).
    #[arg(long)]
    no_cdi: bool,
    /// Chip type for the CDI spec (910B, 310P ...); without it, from DCMI as `cdi generate` finds it.
    #[arg(long)]
    chip_type: Option<String>,
}

/// Runs `node-setup`.
pub fn run(args: &NodeSetupArgs) -> anyhow::Result<ExitCode> {
    for (flag, path) in [("--install-dir", Some(&args.install_dir)), ("--config", args.config.as_ref())] {
        if let Some(path) = path.filter(|path| !path.is_absolute()) {
            bail!("{flag} {}: must be an absolute path on the host", path.display());
        }
    }
    let binary = std::fs::read("/proc/self/exe").context("reading this binary (/proc/self/exe)")?;
    let hook_binary = read_hook_binary()?;
    std::os::unix::fs::chroot(&args.host_root).with_context(|| {
        format!(
            "entering the host's root filesystem at {} (the container must be privileged and have the host's / \
             mounted there)",
            args.host_root.display()
        )
    })?;
    std::env::set_current_dir("/").context("changing to / in the host's root filesystem")?;

    let installed = install(&binary, &args.install_dir)?;
    check_runs_on_host(&installed)?;
    match &hook_binary {
        Some(hook_binary) => {
            let hook = install_file(hook_binary, &args.install_dir.join(HOOK_BINARY_NAME), "this toolkit's hook")?;
            check_runs_on_host(&hook)?;
        }
        None => eprintln!(
            "ascend-ctk node-setup: warning: no {HOOK_BINARY_NAME} beside this binary: hook mode starts `ascend-ctk \
             hook` instead, which takes longer on every container start"
        ),
    }

    let mut generate = vec!["cdi".to_owned(), "generate".to_owned()];
    if let Some(chip_type) = &args.chip_type {
        generate.push(format!("--chip-type={chip_type}"));
    }
    run_on_host(&installed, &generate, "the CDI spec of the node's chips")?;

    if let Some(runtime) = args.runtime {
        let link = args.install_dir.join(RUNTIME_LINK_NAME);
        let mut configure = vec![
            "runtime".to_owned(),
            "configure".to_owned(),
            format!("--runtime={runtime}"),
            format!("--runtime-name={}", args.runtime_name),
            format!("--runtime-path={}", link.display()),
        ];
        if let Some(config) = &args.config {
            configure.push(format!("--config={}", config.display()));
        }
        if !args.no_cdi {
            configure.push("--cdi".to_owned());
        }
        run_on_host(&installed, &configure, &format!("the runtime registration with {runtime}"))?;
    } else {
        eprintln!("ascend-ctk node-setup: no --runtime: the container engine's configuration is left as it is");
    }
    eprintln!("ascend-ctk node-setup: done");
    Ok(ExitCode::SUCCESS)
}

/// Installs `binary` as `<dir>/ascend-ctk` with the `ascend-runtime` link beside it; an identical binary is left in
/// place. The runtime refuses a helper that anyone but root could replace, so the file is written root-owned with
/// mode 0755 (this runs as root) and new directories get 0755.
fn install(binary: &[u8], dir: &Path) -> anyhow::Result<PathBuf> {
    DirBuilder::new().recursive(true).mode(0o755).create(dir).with_context(|| format!("creating {}", dir.display()))?;
    let target = install_file(binary, &dir.join(BINARY_NAME), "this toolkit")?;
    let link = dir.join(RUNTIME_LINK_NAME);
    if std::fs::read_link(&link).ok().as_deref() != Some(Path::new(BINARY_NAME)) {
        // A new link renamed over the old name, so that the engine never finds the runtime missing.
        let temporary = dir.join(format!(".{RUNTIME_LINK_NAME}.tmp{}", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        std::os::unix::fs::symlink(BINARY_NAME, &temporary)
            .with_context(|| format!("creating the link {}", temporary.display()))?;
        std::fs::rename(&temporary, &link).with_context(|| format!("renaming the link to {}", link.display()))?;
        eprintln!("ascend-ctk node-setup: linked {} -> {BINARY_NAME}", link.display());
    }
    Ok(target)
}

/// Writes `binary` (`what` it is, for the log) to `target` (root-owned, mode 0755) unless the file there is identical.
fn install_file(binary: &[u8], target: &Path, what: &str) -> anyhow::Result<PathBuf> {
    if std::fs::read(target).is_ok_and(|existing| existing == binary) {
        eprintln!("ascend-ctk node-setup: {} is {what} already: unchanged", target.display());
    } else {
        let options = WriteOptions { mode: 0o755, keep_existing_mode: false, durable: true };
        write_atomically_with(target, binary, options)?;
        eprintln!("ascend-ctk node-setup: installed {}", target.display());
    }
    Ok(target.to_path_buf())
}

/// The hook's own binary beside this one in the image, if it is there.
fn read_hook_binary() -> anyhow::Result<Option<Vec<u8>>> {
    let exe = std::env::current_exe().context("locating this binary")?;
    let hook = exe.with_file_name(HOOK_BINARY_NAME);
    match std::fs::read(&hook) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", hook.display())),
    }
}

/// Fails with what to do when the installed binary does not start on the host.
fn check_runs_on_host(installed: &Path) -> anyhow::Result<()> {
    let problem = match host_command(installed).arg("--version").stdout(Stdio::piped()).output() {
        Ok(output) if output.status.success() => return Ok(()),
        Ok(output) => format!("{}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim()),
        // The file is there, so "not found" means the dynamic loader it names is missing.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            "the dynamic loader it names is not on this host".to_owned()
        }
        Err(error) => error.to_string(),
    };
    bail!(
        "{} does not run on this host ({problem}). The image's build links against the C library of its Debian \
         release; install a build for this host with deploy/host/install.sh and turn the chart's node setup off \
         (nodeSetup.enabled=false)",
        installed.display()
    )
}

/// Runs one step on the host; its messages go to this process's stderr, its stdout (the RuntimeClass manifest of
/// `runtime configure`) is dropped.
fn run_on_host(installed: &Path, args: &[String], what: &str) -> anyhow::Result<()> {
    let status = host_command(installed)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("starting {} on the host", installed.display()))?
        .status;
    if !status.success() {
        bail!("{what}: `{BINARY_NAME} {}` failed on the host ({status}); its message is above", args.join(" "));
    }
    Ok(())
}

/// The installed binary with the host's search path and nothing of this container's environment. Its stdin is an
/// empty pipe rather than /dev/null, which [`Command::output`] would open in the host's root.
fn host_command(installed: &Path) -> Command {
    let mut command = Command::new(installed);
    command.env_clear().env("PATH", HOST_PATH).stdin(Stdio::piped());
    command
}
