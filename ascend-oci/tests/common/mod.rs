//! Shared test fixtures.

#![allow(dead_code)]

pub mod golden;

use dcmi_sim::fake_host::{DeviceNodeKind, FakeHost, FakeHostOptions};

/// A fake Atlas 800T A2 (chips 0 to 7) laid out by `dcmi_sim::fake_host` in a temporary directory (removed when the
/// returned directory drops), where only the chips `phy_ids` have a `/dev/davinci<phy>` node. These tests read the
/// host's files and never load its driver, so a placeholder stands in for the simulator library. Device nodes need
/// root: without it the fixture fails loudly instead of letting tests pass vacuously.
pub fn fake_host(phy_ids: &[u32]) -> (tempfile::TempDir, FakeHost) {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test builds device nodes with mknod and must run as root (CI runs as root)"
    );
    let dir = tempfile::Builder::new().prefix("ascend-fake-host").tempdir().expect("temporary directory");
    let library = dir.path().join("placeholder-libdcmi.so");
    std::fs::write(&library, b"never loaded by these tests").expect("placeholder library");
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("valid sample");
    let options =
        FakeHostOptions { library: Some(library), chip_nodes: Some(phy_ids.to_vec()), ..FakeHostOptions::default() };
    let host = FakeHost::build(&topology, &dir.path().join("host"), &options).expect("fake host");
    assert_eq!(host.device_nodes, DeviceNodeKind::CharacterDevices);
    (dir, host)
}
