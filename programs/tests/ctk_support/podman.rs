//! Podman as a real CDI consumer (podman 4.3 from Debian reads specs from /etc/cdi and /var/run/cdi only).

use std::process::Command;

use super::{busybox_rootfs, describe, require_tool, run, PROBE_SCRIPT};

/// Podman with private storage (vfs: plain directories, removed with the temporary directory)
/// and the flags a machine without systemd needs (cgroupfs as the cgroup manager, events to a file) and runc as
/// the runtime; containers run with `--network none`.
pub struct Podman {
    dir: tempfile::TempDir,
}

impl Podman {
    pub fn new() -> Self {
        require_tool("podman", "podman");
        require_tool("runc", "runc");
        Podman { dir: tempfile::Builder::new().prefix("ascend-ctk-podman").tempdir().expect("podman dir") }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new("podman");
        command
            .arg("--root")
            .arg(self.dir.path().join("root"))
            .arg("--runroot")
            .arg(self.dir.path().join("runroot"))
            .args(["--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file"])
            .args(["--runtime", "runc"]);
        command
    }

    pub fn import_busybox(&self, image: &str) {
        let rootfs = self.dir.path().join("rootfs");
        busybox_rootfs(&rootfs);
        let tarball = self.dir.path().join("rootfs.tar");
        let tar = run(Command::new("tar").arg("-C").arg(&rootfs).arg("-cf").arg(&tarball).arg("."));
        assert!(tar.status.success(), "tar failed\n{}", describe(&tar));
        let imported = run(self.command().arg("import").arg(&tarball).arg(image));
        assert!(imported.status.success(), "podman import failed\n{}", describe(&imported));
    }

    pub fn run_with_devices(&self, image: &str, devices: &[String]) -> std::process::Output {
        let mut command = self.command();
        command.args([
            "run",
            "--rm",
            "--network",
            "none",
            "--ulimit",
            "nofile=4096:4096",
            "--ulimit",
            "nproc=4096:4096",
        ]);
        for device in devices {
            command.args(["--device", device]);
        }
        command.args([image, "sh", "-c", PROBE_SCRIPT]);
        run(&mut command)
    }
}
