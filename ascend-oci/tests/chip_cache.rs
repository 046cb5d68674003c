//! The runtime's chip cache against the simulator on a `dcmi_sim` fake host: DCMI's answer is
//! remembered and served without loading the driver, and every change the answer depends on (a
//! device node recreated or removed, the library replaced, the library search changed) makes the
//! next start ask DCMI again. A cache file nobody should trust, or one that does not parse, is
//! ignored with a note and replaced; the `/dev` scan that stands in for a broken driver is never
//! remembered.
//!
//! One test function: the simulator reads `DCMI_SIM_CONFIG` from the process environment, so the
//! steps must not run in parallel. The host lives under the target directory (the ownership
//! checks refuse anything below `/tmp`); device nodes need root (CI runs as root).
#![cfg(feature = "dcmi")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ascend_oci::ChipSource;
use ascend_oci::Error;
use ascend_oci::HostRoot;
use ascend_oci::{CachedDiscovery, ChipCache};
use dcmi_sim::fake_host::{make_character_device, DeviceNodeKind, FakeHost, FakeHostOptions, DAVINCI_MAJOR};

fn discover(cache: &ChipCache, root: &HostRoot) -> CachedDiscovery {
    cache.discover(root, None).expect("discovery")
}

fn assert_from_dcmi(found: &CachedDiscovery, step: &str) {
    assert!(matches!(found.found.source, ChipSource::Dcmi { .. }), "{step}: {}", found.found.summary());
    assert_eq!(found.note, None, "{step}");
}

fn assert_from_cache(found: &CachedDiscovery, cache: &ChipCache, step: &str) {
    match &found.found.source {
        ChipSource::DcmiCache { cache: file, .. } => assert_eq!(file, cache.path(), "{step}"),
        other => panic!("{step}: expected the cache, got {other}"),
    }
    assert_eq!(found.note, None, "{step}");
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

#[test]
fn dcmi_answer_is_remembered_until_the_host_changes() {
    assert!(rustix::process::geteuid().is_root(), "needs root for device nodes and the ownership checks");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temporary directory");
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("valid sample");
    let host = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default()).expect("fake host");
    assert_eq!(host.device_nodes, DeviceNodeKind::CharacterDevices);
    std::env::set_var("DCMI_SIM_CONFIG", &host.topology);
    std::env::remove_var("ASCEND_DCMI_LIBRARY");
    let root = HostRoot::open(&host.root).expect("host root");
    let cache = ChipCache::new(dir.path().join("run").join("ascend-ctk").join("chips.json"));

    // The first start asks DCMI and writes the cache (its directory created), root-only writable.
    let first = discover(&cache, &root);
    assert_from_dcmi(&first, "first start");
    assert_eq!(first.found.chips.node_ids().into_iter().collect::<Vec<_>>(), host.node_numbers());
    assert_eq!(first.found.chips.chip_type.as_deref(), Some("Ascend910B"));
    assert_eq!(mode_of(cache.path()), 0o644);

    // The next start is answered from the cache, identically, without the driver: the simulator
    // cannot even initialise now (its topology names a file that is not there; without the variable
    // it would read the one the fake host put beside the library).
    std::env::set_var("DCMI_SIM_CONFIG", "/nonexistent/dcmi-sim/topology.toml");
    let second = discover(&cache, &root);
    assert_from_cache(&second, &cache, "second start");
    assert_eq!(second.found.chips, first.found.chips);
    assert!(second.found.summary().contains("as remembered in"), "{}", second.found.summary());

    // A chip node recreated (a driver reload does that): DCMI is asked again. With the driver
    // broken the /dev scan answers, with its warning, and is not remembered ...
    let node = host.path("dev/davinci3");
    std::fs::remove_file(&node).expect("remove node");
    assert!(make_character_device(&node, DAVINCI_MAJOR, 3), "mknod {}", node.display());
    let scanned = discover(&cache, &root);
    assert!(scanned.found.source.fallback_warning().is_some(), "{}", scanned.found.summary());
    assert_eq!(scanned.note, None);
    let still_scanned = discover(&cache, &root);
    assert!(still_scanned.found.source.fallback_warning().is_some(), "the scan must not be cached");
    // ... and once the driver answers, its answer is remembered again.
    std::env::set_var("DCMI_SIM_CONFIG", &host.topology);
    assert_from_dcmi(&discover(&cache, &root), "after the node changed");
    assert_from_cache(&discover(&cache, &root), &cache, "after the node changed, again");

    // Another library search (ASCEND_DCMI_LIBRARY) is another answer.
    std::env::set_var("ASCEND_DCMI_LIBRARY", &host.library);
    assert_from_dcmi(&discover(&cache, &root), "library named in the environment");
    assert_from_cache(&discover(&cache, &root), &cache, "library named, again");
    std::env::remove_var("ASCEND_DCMI_LIBRARY");
    assert_from_dcmi(&discover(&cache, &root), "library search back to the default");

    // The library replaced (a driver upgrade): asked again.
    let library = std::fs::read(&host.library).expect("read library");
    let staging = host.library.with_extension("so.new");
    std::fs::write(&staging, &library).expect("copy library");
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::rename(&staging, &host.library).expect("replace library");
    assert_from_dcmi(&discover(&cache, &root), "library replaced");
    assert_from_cache(&discover(&cache, &root), &cache, "library replaced, again");

    // A cache file others could have written is not trusted: ignored with a note, replaced by a
    // root-only one.
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let distrusted = discover(&cache, &root);
    assert!(matches!(distrusted.found.source, ChipSource::Dcmi { .. }), "{}", distrusted.found.summary());
    let note = distrusted.note.expect("a note on the untrusted cache");
    assert!(note.contains("writable by group or others") && note.contains("chips.json"), "{note}");
    assert_eq!(mode_of(cache.path()), 0o644);
    assert_from_cache(&discover(&cache, &root), &cache, "after replacing the untrusted file");

    // A file that does not parse: ignored with a note naming it, replaced.
    std::fs::write(cache.path(), b"{ not json").expect("corrupt the cache");
    let corrupt = discover(&cache, &root);
    let note = corrupt.note.expect("a note on the corrupt cache");
    assert!(note.contains("parse") && note.contains("chips.json"), "{note}");
    assert_from_cache(&discover(&cache, &root), &cache, "after replacing the corrupt file");

    // The operator's chip type bypasses cache and driver alike.
    let flagged = cache.discover(&root, Some("310P".to_owned())).expect("flag");
    assert_eq!(flagged.found.source, ChipSource::ChipTypeFlag);

    // A chip node removed: DCMI still reports the chip, and the cache does not hide the missing
    // node.
    let removed = host.path("dev/davinci5");
    std::fs::remove_file(&removed).expect("remove node");
    match cache.discover(&root, None) {
        Err(Error::DeviceNodeMissing { node_id, path, .. }) => {
            assert_eq!(node_id, 5);
            assert_eq!(path, removed);
        }
        other => panic!("expected DeviceNodeMissing, got {other:?}"),
    }
}
