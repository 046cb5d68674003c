//! A minimal fake Ascend host for tests: device nodes and driver files under a temporary root,
//! laid out like a real host (or like `dcmi_sim::fake_host`). Creating device nodes needs root;
//! without it the fixture fails loudly instead of letting tests pass vacuously.

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, CWD};

/// Major number of the fake `/dev/davinciN` nodes (local-use range); the minor is N.
pub const CHIP_MAJOR: u32 = 240;
/// Major numbers of `davinci_manager`, `devmm_svm`, `hisi_hdc` (minor 0 each).
pub const MANAGER_MAJORS: [(&str, u32); 3] = [("davinci_manager", 241), ("devmm_svm", 242), ("hisi_hdc", 243)];

/// Driver files the fake host carries (container paths), with their content.
pub const DRIVER_FILES: [&str; 6] = [
    "/usr/local/Ascend/driver/version.info",
    "/usr/local/Ascend/driver/lib64/common/libc_sec.so",
    "/usr/local/Ascend/driver/lib64/driver/libdcmi.so",
    "/usr/local/Ascend/driver/include/dcmi_interface_api.h",
    "/usr/local/dcmi/dcmi_interface_api.h",
    "/usr/local/bin/npu-smi",
];

/// The mount points `base.list` gives on this fake host.
pub const BASE_MOUNTS: [&str; 5] = [
    "/usr/local/Ascend/driver/include",
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/bin/npu-smi",
    "/usr/local/dcmi",
    "/var/queue_schedule",
];

/// A fake host root; removed on drop.
pub struct FakeHost {
    dir: tempfile::TempDir,
}

impl FakeHost {
    /// Builds a host with chips `ids`.
    pub fn new(ids: &[u32]) -> Self {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test builds device nodes with mknod and must run as root (CI runs as root)"
        );
        let dir = tempfile::Builder::new().prefix("ascend-fake-host").tempdir().expect("temporary directory");
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod host root");
        let host = FakeHost { dir };
        host.mkdir("/dev");
        for &id in ids {
            host.mknod(&format!("/dev/davinci{id}"), CHIP_MAJOR, id);
        }
        for (name, major) in MANAGER_MAJORS {
            host.mknod(&format!("/dev/{name}"), major, 0);
        }
        for file in DRIVER_FILES {
            host.write(file, &format!("fake content of {file}\n"));
        }
        fs::set_permissions(host.path("/usr/local/bin/npu-smi"), fs::Permissions::from_mode(0o755)).expect("chmod");
        host.mkdir("/var/queue_schedule");
        host
    }

    /// The host root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Host path of an absolute path on the fake host.
    pub fn path(&self, absolute: &str) -> PathBuf {
        self.dir.path().join(absolute.trim_start_matches('/'))
    }

    /// Creates a directory (and parents) with mode 0755.
    pub fn mkdir(&self, absolute: &str) {
        let path = self.path(absolute);
        fs::create_dir_all(&path).expect("mkdir");
        let mut current = Some(path.as_path());
        while let Some(dir) = current {
            if !dir.starts_with(self.root()) {
                break;
            }
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).expect("chmod dir");
            current = dir.parent();
        }
    }

    /// Writes a file (mode 0644), creating its directory.
    pub fn write(&self, absolute: &str, content: &str) {
        let path = self.path(absolute);
        if let Some(parent) = Path::new(absolute).parent() {
            self.mkdir(&parent.to_string_lossy());
        }
        fs::write(&path, content).expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod file");
    }

    /// Creates a character device node (mode 0660).
    pub fn mknod(&self, absolute: &str, major: u32, minor: u32) {
        let path = self.path(absolute);
        rustix::fs::mknodat(
            CWD,
            &path,
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o660),
            rustix::fs::makedev(major, minor),
        )
        .unwrap_or_else(|e| panic!("mknod {}: {e}", path.display()));
    }
}
