//! Malicious or careless mount lists and host trees: symlink escapes, `..`, relative paths,
//! world-writable or non-root-owned directories, all refused with the path named.

mod common;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use ascend_oci::Error;
use ascend_oci::HostRoot;
use ascend_oci::{resolve_given_sources, resolve_mounts, MountList};
use common::fake_host;
use common::golden::read_fixture;
use dcmi_sim::fake_host::FakeHost;

fn resolve(host: &FakeHost, list_text: &str, allow_link: bool) -> Result<Vec<String>, Error> {
    let root = HostRoot::open(&host.root)?;
    let list = MountList::parse("test", list_text)?;
    Ok(resolve_mounts(&root, &[list], allow_link)?
        .into_iter()
        .map(|m| m.container_path.to_string_lossy().into_owned())
        .collect())
}

#[test]
fn vendor_base_list_resolves_on_a_clean_host() {
    let (_dir, host) = fake_host(&[0]);
    let mounts = resolve(&host, &read_fixture("mount-lists/base.list"), false).expect("clean host");
    assert_eq!(
        mounts,
        [
            "/usr/local/Ascend/driver/lib64",
            "/usr/local/Ascend/driver/include",
            "/usr/local/dcmi",
            "/usr/local/bin/npu-smi",
            "/var/queue_schedule"
        ]
    );
}

#[test]
fn lists_with_dotdot_relative_paths_or_inner_wildcards_do_not_parse() {
    for fixture in ["mount-lists/escape-dotdot.list", "mount-lists/relative.list", "mount-lists/wildcard-dir.list"] {
        let err = MountList::parse("bad", &read_fixture(fixture)).expect_err(fixture);
        assert!(err.to_string().contains("line 1"), "{fixture}: {err}");
    }
}

#[test]
fn wildcards_expand_within_their_directory_and_missing_entries_are_skipped() {
    let (_dir, host) = fake_host(&[0]);
    host.write_file("/usr/lib64/libummu.so.1", "x").expect("write");
    host.write_file("/usr/lib64/liburma.so", "x").expect("write");
    host.create_dir("/usr/lib64/urma").expect("mkdir");
    let mounts = resolve(&host, &read_fixture("mount-lists/ub_driver.list"), false).expect("ub list");
    assert_eq!(mounts, ["/usr/lib64/libummu.so.1", "/usr/lib64/liburma.so", "/usr/lib64/urma"]);
}

#[test]
fn symlink_out_of_the_host_root_is_refused() {
    let (_dir, host) = fake_host(&[0]);
    symlink("/proc", host.path("/usr/local/Ascend/driver/escape")).expect("symlink");
    let err = resolve(&host, "/usr/local/Ascend/driver/escape\n", false).expect_err("symlink");
    assert!(matches!(err, Error::UnsafePath { .. }), "{err}");
    assert!(err.to_string().contains("driver/escape"), "{err}");
    // With links allowed, the absolute target is taken inside the host root, where /proc does
    // not exist: the entry is skipped rather than mounting the real /proc.
    let mounts = resolve(&host, "/usr/local/Ascend/driver/escape\n", true).expect("confined");
    assert!(mounts.is_empty(), "{mounts:?}");
}

#[test]
fn symlinked_parent_directory_is_refused() {
    let (_dir, host) = fake_host(&[0]);
    std::fs::rename(host.path("/usr/local/dcmi"), host.path("/usr/local/dcmi-real")).expect("rename");
    symlink("dcmi-real", host.path("/usr/local/dcmi")).expect("symlink");
    let err = resolve(&host, "/usr/local/dcmi/dcmi_interface_api.h\n", false).expect_err("parent symlink");
    assert!(err.to_string().contains("/usr/local/dcmi") && err.to_string().contains("symlink"), "{err}");
    let allowed = resolve(&host, "/usr/local/dcmi/dcmi_interface_api.h\n", true).expect("allowed link inside root");
    assert_eq!(allowed, ["/usr/local/dcmi/dcmi_interface_api.h"]);
}

#[test]
fn world_writable_directory_is_refused_with_owner_and_mode() {
    let (_dir, host) = fake_host(&[0]);
    std::fs::set_permissions(host.path("/usr/local"), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let err = resolve(&host, "/usr/local/bin/npu-smi\n", false).expect_err("world-writable parent");
    let message = err.to_string();
    assert!(matches!(err, Error::InsecurePermissions { uid: 0, mode: 0o777, .. }), "{message}");
    assert!(message.contains(&host.path("/usr/local").display().to_string()), "{message}");
}

#[test]
fn group_writable_file_inside_a_mounted_directory_is_refused() {
    let (_dir, host) = fake_host(&[0]);
    let file = host.path("/usr/local/Ascend/driver/lib64/common/libc_sec.so");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).expect("chmod");
    let err = resolve(&host, "/usr/local/Ascend/driver/lib64\n", false).expect_err("group-writable child");
    assert!(err.to_string().contains("libc_sec.so") && err.to_string().contains("0664"), "{err}");
}

#[test]
fn writable_subdirectory_and_foreign_symlink_inside_a_mounted_directory_are_refused() {
    let (_dir, host) = fake_host(&[0]);
    let subdirectory = host.path("/usr/local/Ascend/driver/lib64/driver");
    std::fs::set_permissions(&subdirectory, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let err = resolve(&host, "/usr/local/Ascend/driver/lib64\n", false).expect_err("world-writable subdirectory");
    assert!(err.to_string().contains("lib64/driver") && err.to_string().contains("0777"), "{err}");

    std::fs::set_permissions(&subdirectory, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    let link = host.path("/usr/local/Ascend/driver/lib64/common/libfoo.so");
    std::os::unix::fs::symlink("libc_sec.so", &link).expect("symlink");
    rustix::fs::chownat(
        rustix::fs::CWD,
        &link,
        Some(rustix::fs::Uid::from_raw(1000)),
        None,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .expect("chown the link itself");
    let err = resolve(&host, "/usr/local/Ascend/driver/lib64\n", false).expect_err("link owned by 1000");
    assert!(err.to_string().contains("libfoo.so") && err.to_string().contains("not owned by root"), "{err}");
}

#[test]
fn file_not_owned_by_root_is_refused() {
    let (_dir, host) = fake_host(&[0]);
    let file = host.path("/usr/local/bin/npu-smi");
    rustix::fs::chown(&file, Some(rustix::fs::Uid::from_raw(1000)), None).expect("chown");
    let err = resolve(&host, "/usr/local/bin/npu-smi\n", false).expect_err("owned by 1000");
    assert!(matches!(err, Error::InsecurePermissions { uid: 1000, .. }), "{err}");
    assert!(err.to_string().contains("not owned by root"), "{err}");
}

#[test]
fn list_names_cannot_leave_the_list_directory() {
    let (_dir, host) = fake_host(&[0]);
    host.write_file("/etc/ascend-docker-runtime.d/extra.list", "/usr/local/dcmi\n").expect("write");
    let root = HostRoot::open(&host.root).expect("root");
    let dir = Path::new("/etc/ascend-docker-runtime.d");
    let list = MountList::load(&root, dir, "extra").expect("load extra");
    assert_eq!(list.entries.len(), 1);
    assert!(ascend_oci::parse_mount_list_names("../../etc/passwd").is_err());
    let missing = MountList::load(&root, dir, "nope").expect_err("missing list");
    assert!(missing.to_string().contains("nope.list"), "{missing}");
}

/// What the hook checks when the runtime hands it the mounts (`--mount` arguments) instead of the lists: a tampered
/// hand-over gets every refusal a tampered list gets, and the same paths as the lists when nothing was tampered with.
#[test]
fn mounts_handed_to_the_hook_get_the_same_checks_as_the_lists() {
    let (_dir, host) = fake_host(&[0]);
    let root = HostRoot::open(&host.root).expect("root");
    let given = |paths: &[&str], allow_link: bool| {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        resolve_given_sources(&root, &paths, allow_link)
            .map(|sources| sources.into_iter().map(|s| s.container_path.display().to_string()).collect::<Vec<_>>())
    };
    let listed = resolve(&host, &read_fixture("mount-lists/base.list"), false).expect("clean host");
    let listed_refs: Vec<&str> = listed.iter().map(String::as_str).collect();
    assert_eq!(given(&listed_refs, false).expect("the same paths"), listed);
    // Missing paths are skipped and a path given twice is kept once, as with the lists.
    let kept = given(&["/usr/local/dcmi", "/usr/local/nothing-here", "/usr/local/dcmi"], false).expect("kept");
    assert_eq!(kept, ["/usr/local/dcmi"]);

    for (path, expected) in [
        ("/usr/local/../../etc", "contains '..'"),
        ("usr/local/dcmi", "not an absolute path"),
        ("/usr/local/Ascend/driver/escape", "symlink"),
    ] {
        if path.ends_with("escape") {
            symlink("/proc", host.path(path)).expect("symlink");
        }
        let err = given(&["/usr/local/dcmi", path], false).expect_err(path);
        assert!(matches!(err, Error::UnsafePath { .. }), "{path}: {err}");
        assert!(err.to_string().contains(expected), "{path}: {err}");
    }
    // With links allowed the link is followed inside the host root only, where /proc does not exist: skipped.
    assert_eq!(given(&["/usr/local/Ascend/driver/escape"], true).expect("confined"), Vec::<String>::new());

    let file = host.path("/usr/local/Ascend/driver/lib64/common/libc_sec.so");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).expect("chmod");
    let err = given(&["/usr/local/Ascend/driver/lib64"], false).expect_err("group-writable child");
    assert!(err.to_string().contains("libc_sec.so") && err.to_string().contains("0664"), "{err}");
}
