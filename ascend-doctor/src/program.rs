//! The `ascend-doctor` command line (feature `cli`); the bundled binary's main only calls [`main_with_args`].

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use super::check::Section;
use super::context::DoctorOptions;
use super::error::Result;
use super::pod_container::PodRef;
use super::report::{render_json, render_text, run};

/// `ascend-doctor`: runs the operator's troubleshooting chain and prints what is wrong and how to fix it.
#[derive(Debug, Parser)]
#[command(name = "ascend-doctor", version)]
#[command(
    about = "Checks an Ascend NPU node in troubleshooting order: driver, versions, container runtime, Kubernetes"
)]
#[command(after_help = "Exit codes: 0 no check failed (warnings allowed), 1 at least one check failed, 2 bad usage.")]
pub struct Args {
    /// Where the host's / is (for example /host in a container, or a fake host).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Print JSON (schema: docs/ascend-doctor-json.md).
    #[arg(long)]
    pub json: bool,
    /// Run only these sections (repeatable).
    #[arg(long = "section", value_enum, value_name = "SECTION")]
    pub sections: Vec<SectionArg>,
    /// A site's table of driver/firmware/CANN pairings whose verdicts join those of the installed packages'
    /// version.info files (default: ROOT/etc/ascend-doctor/compatibility.toml when present; there is no built-in one).
    #[arg(long, value_name = "FILE")]
    pub compatibility: Option<PathBuf>,
    /// Also check the CANN of a container image against the host's driver: the image's unpacked root file system
    /// (a directory on this machine holding usr/local/Ascend/...).
    #[arg(long, value_name = "DIR")]
    pub image_root: Option<PathBuf>,
    /// Also check the CANN of a pod's running container against the host's driver: the pod must run on this node;
    /// its container's root file system is found through the container runtime's state below --root (containerd,
    /// CRI-O, Docker). CONTAINER may be left out for a pod with one container. Needs the API server.
    #[arg(long, value_name = "NAMESPACE/NAME[/CONTAINER]", conflicts_with = "image_root")]
    pub pod: Option<PodRef>,
    /// RuntimeClass manifests (YAML or `kubectl get runtimeclass -o json`) to check instead of asking the API server.
    #[arg(long, value_name = "FILE")]
    pub runtime_class_manifest: Option<PathBuf>,
    /// The Kubernetes node name (default: `NODE_NAME`, which our DaemonSets set from the downward API, else the host's
    /// hostname, which in a pod is the pod's name); its Node object gives the kubelet's version and the advertised
    /// NPUs when an API server is configured (in a pod, or KUBECONFIG / ~/.kube/config).
    #[arg(long, value_name = "NAME", env = "NODE_NAME")]
    pub node: Option<String>,
    /// How long the chips, and each API server request, may take (`10`, `10s`, `1m`; plain numbers are seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = ascend_cli::duration::parse_positive_duration)]
    pub timeout: Duration,
    /// The language of titles and fixes (`--lang`; default from LC_ALL, LC_MESSAGES, LANG).
    #[command(flatten)]
    pub lang: ascend_cli::LangArgs,
}

/// A section on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SectionArg {
    /// Driver and firmware.
    Driver,
    /// Versions.
    Versions,
    /// Container runtime.
    Runtime,
    /// Kubernetes.
    Kubernetes,
}

impl From<SectionArg> for Section {
    fn from(arg: SectionArg) -> Self {
        match arg {
            SectionArg::Driver => Section::Driver,
            SectionArg::Versions => Section::Versions,
            SectionArg::Runtime => Section::ContainerRuntime,
            SectionArg::Kubernetes => Section::Kubernetes,
        }
    }
}

/// Builds the options of a parsed command line.
///
/// # Errors
/// [`crate::Error::Root`] for a root that is not a directory, [`crate::Error::CompatibilityTable`] for a compatibility
/// table that
/// does not load.
pub fn options(cli: &Args) -> Result<DoctorOptions> {
    let mut options = DoctorOptions::for_root_with_table(&cli.root, cli.timeout, cli.compatibility.as_deref())?;
    if !cli.sections.is_empty() {
        options.sections = cli.sections.iter().map(|s| Section::from(*s)).collect();
    }
    options.image_root.clone_from(&cli.image_root);
    options.pod.clone_from(&cli.pod);
    options.runtime_class_manifest.clone_from(&cli.runtime_class_manifest);
    options.node_name.clone_from(&cli.node);
    options.lang = cli.lang.lang();
    Ok(options)
}

/// Parses `args` (program name first), runs the checks, prints the report; the process exit status.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Args::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let options = match options(&cli) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("ascend-doctor: {message}");
            return ExitCode::from(2);
        }
    };
    let report = run(&options);
    let text = if cli.json {
        match render_json(&report) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("ascend-doctor: {error}");
                return ExitCode::from(2);
            }
        }
    } else {
        render_text(&report, &report.host_root)
    };
    let mut out = io::stdout().lock();
    if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
        return ExitCode::from(2);
    }
    if report.has_failures() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
