//! An OCI bundle for the container tests: a busybox rootfs running the probe script, the OCI runtime's default
//! `config.json`, and a state directory of its own; the container is removed on drop. The runtime is runc or crun
//! ([`OciRuntime`]): the hook and the shim write one OCI spec for both, and each test that starts a container under
//! both proves it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::sim_host::SimHost;
use super::{busybox_rootfs, ctk, describe, require_tool, run, PROBE_SCRIPT};

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// crun 1.8 refuses cgroup v1 "hybrid" hosts (as the CI machines are) while `/sys/fs/cgroup/unified` is mounted:
/// it runs in a private mount namespace without it. On a cgroup v2 host the unmount fails harmlessly.
const CRUN_NAMESPACE_SCRIPT: &str = "umount /sys/fs/cgroup/unified 2>/dev/null; exec \"$@\"";

/// The low-level OCI runtime a bundle runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OciRuntime {
    /// Debian's runc.
    Runc,
    /// Debian's crun.
    Crun,
}

impl OciRuntime {
    /// The runtime's executable name (also what `ascend-ctk runtime exec --runc` takes).
    pub fn name(self) -> &'static str {
        match self {
            OciRuntime::Runc => "runc",
            OciRuntime::Crun => "crun",
        }
    }

    /// A command running `program` where this runtime can start containers.
    pub fn command(self, program: impl AsRef<OsStr>) -> Command {
        match self {
            OciRuntime::Runc => Command::new(program),
            OciRuntime::Crun => {
                require_tool("unshare", "util-linux");
                let mut command = Command::new("unshare");
                command.args(["--mount", "--propagation", "private", "sh", "-c", CRUN_NAMESPACE_SCRIPT, "sh"]);
                command.arg(program);
                command
            }
        }
    }
}

/// A bundle with a busybox rootfs and its runtime's default config, plus a state directory.
pub struct Bundle {
    dir: tempfile::TempDir,
    runtime: OciRuntime,
    /// The container id.
    pub id: String,
}

impl Bundle {
    /// A runc bundle whose container has `env` added to runc's default environment.
    pub fn new(env: &[&str]) -> Self {
        Bundle::with_runtime(OciRuntime::Runc, env)
    }

    /// A bundle for `runtime` whose container has `env` added to the runtime's default environment.
    pub fn with_runtime(runtime: OciRuntime, env: &[&str]) -> Self {
        require_tool(runtime.name(), runtime.name());
        let dir = tempfile::Builder::new().prefix("ascend-ctk-bundle").tempdir().expect("bundle dir");
        busybox_rootfs(&dir.path().join("rootfs"));
        let spec = run(Command::new(runtime.name()).arg("spec").current_dir(dir.path()));
        assert!(spec.status.success(), "{} spec failed\n{}", runtime.name(), describe(&spec));
        let path = dir.path().join("config.json");
        let mut config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read config.json"))
                .expect("parse config.json");
        config["process"]["terminal"] = serde_json::Value::Bool(false);
        config["process"]["args"] = serde_json::json!(["sh", "-c", PROBE_SCRIPT]);
        let env_list = config["process"]["env"].as_array_mut().expect("env");
        env_list.extend(env.iter().map(|e| serde_json::Value::String((*e).to_owned())));
        std::fs::write(&path, config.to_string()).expect("write config.json");
        let id = format!("ascend-ctk-test-{}-{}", std::process::id(), NEXT_ID.fetch_add(1, Ordering::SeqCst));
        Bundle { dir, runtime, id }
    }

    /// The bundle directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The runtime's `--root` for this bundle.
    pub fn state_root(&self) -> PathBuf {
        self.dir.path().join("runc-state")
    }

    /// The bundle's `config.json`, parsed.
    pub fn config(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.path().join("config.json")).expect("read")).expect("parse")
    }

    /// `<runtime> run` through `ascend-ctk runtime exec` with extra ctk flags, the driver reachable.
    pub fn run_through_ctk(&self, host: &SimHost, ctk_flags: &[&str]) -> std::process::Output {
        let state_root = self.state_root();
        let bundle = self.path();
        let mut command = self.runtime.command(ctk().get_program());
        host.with_driver(&mut command);
        command.args(["runtime", "exec", "--runc", self.runtime.name(), "--host-root"]).arg(host.root());
        command.args(ctk_flags).arg("--");
        command.arg("--root").arg(&state_root).args(["run", "--bundle"]).arg(bundle).arg(&self.id);
        run(&mut command)
    }

    /// Edits `config.json` for hook mode with `ascend-ctk spec inject --mount-by-hook`, as the runtime does before
    /// runc: the devices, and the createRuntime hook with the mounts it resolved.
    pub fn inject_by_hook(&self, host: &SimHost) {
        let mut inject = ctk();
        host.with_driver(&mut inject);
        inject.args(["spec", "inject", "--mount-by-hook", "--bundle"]).arg(self.path());
        let injected = run(inject.arg("--host-root").arg(host.root()));
        assert!(
            injected.status.success(),
            "spec inject failed
{}",
            describe(&injected)
        );
    }

    /// `<runtime> run` without ascend-ctk.
    pub fn run_plain(&self) -> std::process::Output {
        let mut command = self.runtime.command(self.runtime.name());
        command.arg("--root").arg(self.state_root()).args(["run", "--bundle"]).arg(self.path()).arg(&self.id);
        run(&mut command)
    }

    /// Whether the runtime knows the container.
    pub fn container_exists(&self) -> bool {
        let mut command = Command::new(self.runtime.name());
        command.arg("--root").arg(self.state_root()).args(["state", &self.id]);
        run(&mut command).status.success()
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        // Best effort: a container left behind by a failed assertion.
        let _ = Command::new(self.runtime.name())
            .arg("--root")
            .arg(self.state_root())
            .args(["delete", "--force", &self.id])
            .output();
    }
}
