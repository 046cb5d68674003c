//! A runc bundle for the container tests: a busybox rootfs running the probe script, runc's default
//! `config.json`, and a runc state directory of its own; the container is removed on drop.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::sim_host::SimHost;
use super::{busybox_rootfs, ctk, describe, require_tool, run, PROBE_SCRIPT};

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// A bundle with a busybox rootfs and runc's default config, plus a runc state directory.
pub struct Bundle {
    dir: tempfile::TempDir,
    /// The container id.
    pub id: String,
}

impl Bundle {
    /// A bundle whose container has `env` added to runc's default environment.
    pub fn new(env: &[&str]) -> Self {
        require_tool("runc", "runc");
        let dir = tempfile::Builder::new().prefix("ascend-ctk-bundle").tempdir().expect("bundle dir");
        busybox_rootfs(&dir.path().join("rootfs"));
        let spec = run(std::process::Command::new("runc").arg("spec").current_dir(dir.path()));
        assert!(spec.status.success(), "runc spec failed\n{}", describe(&spec));
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
        Bundle { dir, id }
    }

    /// The bundle directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// runc's `--root` for this bundle.
    pub fn state_root(&self) -> PathBuf {
        self.dir.path().join("runc-state")
    }

    /// The bundle's `config.json`, parsed.
    pub fn config(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.path().join("config.json")).expect("read")).expect("parse")
    }

    /// `runc run` through `ascend-ctk runtime exec` with extra ctk flags, the driver reachable.
    pub fn run_through_ctk(&self, host: &SimHost, ctk_flags: &[&str]) -> std::process::Output {
        let state_root = self.state_root();
        let bundle = self.path();
        let mut command = ctk();
        host.with_driver(&mut command);
        command.args(["runtime", "exec", "--host-root"]).arg(host.root()).args(ctk_flags).arg("--");
        command.arg("--root").arg(&state_root).args(["run", "--bundle"]).arg(bundle).arg(&self.id);
        run(&mut command)
    }

    /// `runc run` without ascend-ctk.
    pub fn run_plain(&self) -> std::process::Output {
        let mut command = std::process::Command::new("runc");
        command.arg("--root").arg(self.state_root()).args(["run", "--bundle"]).arg(self.path()).arg(&self.id);
        run(&mut command)
    }

    /// Whether runc knows the container.
    pub fn container_exists(&self) -> bool {
        let mut command = std::process::Command::new("runc");
        command.arg("--root").arg(self.state_root()).args(["state", &self.id]);
        run(&mut command).status.success()
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        // Best effort: a container left behind by a failed assertion.
        let _ = std::process::Command::new("runc")
            .arg("--root")
            .arg(self.state_root())
            .args(["delete", "--force", &self.id])
            .output();
    }
}
