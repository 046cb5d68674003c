//! Hostile input on the root path, end to end with Debian's runc: images whose symlinks point mount targets out of
//! their rootfs (also while the container starts), driver files and mount lists others can write, a container
//! environment that names its own loader, runc and driver library, oversized and deeply nested `config.json`, and
//! `all` on a node that lost a chip. Each case asserts the clear refusal (or the containment), and that nothing was
//! mounted or created outside the container. Needs root (mknod, runc); CI runs as root.

mod ctk_support;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ctk_support::bundle::Bundle;
use ctk_support::sim_host::SimHost;
use ctk_support::{describe, Probe};

/// A host directory that images try to reach; removed on drop.
fn outside_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("ascend-ctk-outside").tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|list| list.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// Mount points in this (the host's) mount namespace below `dir`.
fn host_mounts_below(dir: &Path) -> Vec<String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let prefix = dir.to_string_lossy().into_owned();
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|m| m.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

/// A refused start: a non-zero exit naming `expected`, no container, `config.json` as it was, no mount left.
fn assert_refused_untouched(bundle: &Bundle, before: &[u8], output: &std::process::Output, expected: &[&str]) {
    let context = describe(output);
    assert!(!output.status.success(), "the start must be refused\n{context}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for text in expected {
        assert!(stderr.contains(text), "the refusal must say {text:?}\n{context}");
    }
    assert!(!stderr.contains("panicked"), "{context}");
    assert!(!bundle.container_exists(), "no container may be created\n{context}");
    assert_eq!(std::fs::read(bundle.path().join("config.json")).expect("read config.json"), before, "{context}");
    assert_eq!(host_mounts_below(bundle.path()), Vec::<String>::new(), "{context}");
}

fn config_bytes(bundle: &Bundle) -> Vec<u8> {
    std::fs::read(bundle.path().join("config.json")).expect("read config.json")
}

#[test]
fn image_symlinks_out_of_the_rootfs_are_resolved_inside_it() {
    let host = SimHost::sample("atlas-300i-pro");
    let outside = outside_dir();
    let absolute = outside.path().to_string_lossy().into_owned();
    let relative = format!("{}{}", "../".repeat(12), absolute.trim_start_matches('/'));
    for (target, delivery) in [(&absolute, "hook"), (&relative, "hook"), (&absolute, "spec"), (&relative, "spec")] {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
        let rootfs = bundle.path().join("rootfs");
        // The image's /usr names the host directory; the same path exists in the image, so that a lookup confined
        // to the rootfs succeeds there, and one that escaped would land in the host's directory.
        let inside = rootfs.join(absolute.trim_start_matches('/'));
        std::fs::create_dir_all(&inside).expect("the link's target inside the image");
        symlink(target, rootfs.join("usr")).expect("image symlink");
        let output = bundle.run_through_ctk(&host, &["--mount-delivery", delivery]);
        let context = format!("/usr -> {target}, delivery {delivery}\n{}", describe(&output));
        assert!(output.status.success(), "{context}");
        assert_eq!(
            entries(outside.path()),
            Vec::<String>::new(),
            "something was created outside the rootfs\n{context}"
        );
        assert_eq!(host_mounts_below(outside.path()), Vec::<String>::new(), "{context}");
        let mount_point = inside.join("local/Ascend/driver/lib64");
        assert!(mount_point.is_dir(), "the mount point must be made inside the rootfs\n{context}");
    }
}

#[test]
fn a_dangling_image_symlink_on_the_mount_path_is_refused_by_the_hook() {
    let host = SimHost::sample("atlas-300i-pro");
    let outside = outside_dir();
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
    // Resolved inside the rootfs the link leads nowhere; resolved from the host's / it is a real directory.
    symlink(outside.path(), bundle.path().join("rootfs/usr")).expect("image symlink");
    let before = config_bytes(&bundle);
    let output = bundle.run_through_ctk(&host, &["--mount-delivery", "hook"]);
    assert!(!output.status.success(), "{}", describe(&output));
    let after = config_bytes(&bundle);
    assert_ne!(after, before, "the runtime adds its hook before runc runs it");
    assert_refused_untouched(&bundle, &after, &output, &["rootfs/usr", "does not resolve inside its root filesystem"]);
    assert_eq!(entries(outside.path()), Vec::<String>::new(), "something was created outside the rootfs");
}

#[test]
fn swapping_a_mount_target_for_a_symlink_during_the_start_never_reaches_out() {
    let host = SimHost::sample("atlas-300i-pro");
    let outside = outside_dir();
    for attempt in 0..6 {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
        let rootfs = bundle.path().join("rootfs");
        std::fs::create_dir_all(rootfs.join("usr/local")).expect("image /usr/local");
        symlink(outside.path(), rootfs.join("usr.link")).expect("symlink");
        // The image flips /usr between its directory and a link to the host directory, atomically and without
        // pause, while the hook creates and mounts its targets.
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (stop, rootfs) = (Arc::clone(&stop), rootfs.clone());
            std::thread::spawn(move || {
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let exchanged = rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        rootfs.join("usr"),
                        rustix::fs::CWD,
                        rootfs.join("usr.link"),
                        rustix::fs::RenameFlags::EXCHANGE,
                    );
                    flips += u64::from(exchanged.is_ok());
                }
                flips
            })
        };
        let output = bundle.run_through_ctk(&host, &["--mount-delivery", "hook"]);
        stop.store(true, Ordering::Relaxed);
        let flips = flipper.join().expect("flipper");
        let context = format!("attempt {attempt}, {flips} flips\n{}", describe(&output));
        assert!(flips > 0, "{context}");
        assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"), "{context}");
        assert_eq!(
            entries(outside.path()),
            Vec::<String>::new(),
            "something was created outside the rootfs\n{context}"
        );
        assert_eq!(host_mounts_below(outside.path()), Vec::<String>::new(), "{context}");
        assert_eq!(host_mounts_below(bundle.path()), Vec::<String>::new(), "{context}");
    }
}

#[test]
fn a_group_writable_driver_file_is_refused_naming_it() {
    let host = SimHost::sample("atlas-300i-pro");
    let lib64 = host.path("/usr/local/Ascend/driver/lib64");
    let file = walk_files(&lib64).into_iter().next().expect("a driver file");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).expect("chmod");
    for delivery in ["spec", "hook"] {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
        let before = config_bytes(&bundle);
        let output = bundle.run_through_ctk(&host, &["--mount-delivery", delivery]);
        let name = file.file_name().expect("name").to_string_lossy().into_owned();
        assert_refused_untouched(&bundle, &before, &output, &[&name, "664"]);
    }
}

/// The mounts the runtime hands the hook in its arguments, tampered with in `config.json` before runc runs it: the
/// hook checks each as it checks what a mount list names, and refuses the container's creation naming the path.
#[test]
fn a_tampered_mount_hand_over_is_refused_by_the_hook() {
    let host = SimHost::sample("atlas-300i-pro");
    let open = host.path("/usr/local/open");
    std::fs::create_dir_all(&open).expect("mkdir");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let outside = outside_dir();
    symlink(outside.path(), host.path("/usr/local/escape")).expect("host symlink");
    for (tampered, expected) in [
        ("--mount=/usr/local/../../../etc", &["contains '..'"][..]),
        ("--mount=usr/local/dcmi", &["not an absolute path"][..]),
        ("--mount=/usr/local/escape", &["usr/local/escape", "symlink"][..]),
        ("--mount=/usr/local/open", &["usr/local/open", "0777"][..]),
    ] {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
        bundle.inject_by_hook(&host);
        let mut config = bundle.config();
        let args = config["hooks"]["createRuntime"][0]["args"].as_array_mut().expect("hook arguments");
        assert!(args.iter().any(|a| a.as_str().is_some_and(|a| a.starts_with("--mount="))), "{args:?}");
        args.push(serde_json::Value::String(tampered.to_owned()));
        let text = config.to_string();
        std::fs::write(bundle.path().join("config.json"), &text).expect("write config.json");
        let output = bundle.run_plain();
        eprintln!("{tampered}: {}", String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or_default());
        assert_refused_untouched(&bundle, text.as_bytes(), &output, expected);
    }
}

#[test]
fn a_world_writable_mount_list_directory_is_refused() {
    let host = SimHost::sample("atlas-300i-pro");
    let lists = host.path("/etc/ascend-docker-runtime.d");
    std::fs::create_dir_all(&lists).expect("mkdir");
    std::fs::write(lists.join("base.list"), "/usr/local/Ascend/driver/lib64\n").expect("base.list");
    std::fs::set_permissions(&lists, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
    let before = config_bytes(&bundle);
    let output = bundle.run_through_ctk(&host, &[]);
    assert_refused_untouched(&bundle, &before, &output, &["ascend-docker-runtime.d", "777"]);
}

#[test]
fn the_container_environment_cannot_choose_the_loader_runc_or_driver_library() {
    let host = SimHost::sample("atlas-300i-pro");
    let evil = outside_dir();
    let marker = evil.path().join("ran");
    let fake_runc = evil.path().join("runc");
    std::fs::write(&fake_runc, format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display())).expect("fake runc");
    std::fs::set_permissions(&fake_runc, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(evil.path().join("libdcmi.so"), b"not a library").expect("fake libdcmi.so");
    let evil_dir = evil.path().display();
    let env = [
        "ASCEND_VISIBLE_DEVICES=1".to_owned(),
        format!("LD_PRELOAD={evil_dir}/libdcmi.so"),
        format!("LD_LIBRARY_PATH={evil_dir}"),
        format!("PATH={evil_dir}:/bin"),
        format!("ASCEND_DCMI_LIBRARY={evil_dir}/libdcmi.so"),
        format!("ASCEND_CTK_HOST_ROOT={evil_dir}"),
    ];
    let env: Vec<&str> = env.iter().map(String::as_str).collect();
    for delivery in ["spec", "hook"] {
        let bundle = Bundle::new(&env);
        let output = bundle.run_through_ctk(&host, &["--mount-delivery", delivery]);
        let context = describe(&output);
        assert!(output.status.success(), "{context}");
        assert!(!marker.exists(), "the container's PATH chose runc\n{context}");
        assert!(!context.contains("not a library") && !context.contains("ELF"), "{context}");
        let probe = Probe::parse(&output.stdout);
        assert_eq!(probe.npu_devices, ["davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");
        probe.assert_driver_mounted_read_only(&host, &context);
    }
}

#[test]
fn oversized_and_deeply_nested_config_json_are_refused_before_any_work() {
    let host = SimHost::sample("atlas-300i-pro");
    let cases: [(&str, ConfigEdit, &[&str]); 2] = [
        ("oversized", oversized_config, &["config.json", "exceeds the limit"]),
        ("nested", deeply_nested_config, &["config.json", "recursion limit"]),
    ];
    for (name, make, expected) in cases {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
        let text = make(&mut bundle.config());
        std::fs::write(bundle.path().join("config.json"), &text).expect("write config.json");
        let output = bundle.run_through_ctk(&host, &[]);
        eprintln!("{name}: {}", String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or_default());
        assert_refused_untouched(&bundle, text.as_bytes(), &output, expected);
    }
}

#[test]
fn all_on_a_node_that_lost_a_chip_node_is_refused_naming_it() {
    let host = SimHost::sample("atlas-800t-a2");
    std::fs::remove_file(host.path("/dev/davinci3")).expect("remove /dev/davinci3");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=all"]);
    let before = config_bytes(&bundle);
    let output = bundle.run_through_ctk(&host, &[]);
    assert_refused_untouched(&bundle, &before, &output, &["davinci3"]);
}

/// Turns a valid `config.json` into a hostile one, as text.
type ConfigEdit = fn(&mut serde_json::Value) -> String;

/// 17 MiB, over the 16 MiB the runtime reads.
fn oversized_config(config: &mut serde_json::Value) -> String {
    config["annotations"] = serde_json::json!({ "padding": "x".repeat(17 * 1024 * 1024) });
    config.to_string()
}

/// An unknown field nested 100,000 arrays deep: a recursive parser without a limit would overflow its stack.
fn deeply_nested_config(config: &mut serde_json::Value) -> String {
    let text = config.to_string();
    let depth = 100_000;
    format!("{},\"x-nested\":{}{}}}", &text[..text.len() - 1], "[".repeat(depth), "]".repeat(depth))
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").filter_map(|e| e.ok()) {
        let path = entry.path();
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            files.extend(walk_files(&path));
        } else if kind.is_file() {
            files.push(path);
        }
    }
    files.sort();
    files
}
