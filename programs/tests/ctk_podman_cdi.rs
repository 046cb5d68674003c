//! A real CDI consumer: podman from Debian runs a busybox container with
//! `--device <kind>=<n>` using the spec `ascend-ctk cdi generate` wrote for a fake host: an Atlas 300I Pro (DCMI V1)
//! and an Atlas 950 node (DCMI V2).
//! Podman 4.3 reads specs only from /etc/cdi and /var/run/cdi, so the test writes there under
//! a kind unique to this run and removes the file afterwards. Needs root; CI runs as root.

mod ctk_support;

use std::path::{Path, PathBuf};

use ctk_support::podman::Podman;
use ctk_support::sim_host::SimHost;
use ctk_support::{atlas_950_shared_nodes, ctk, describe, expected_npu_nodes, run, Probe, V1_SHARED_NODES};

const CDI_DIR: &str = "/var/run/cdi";

/// Removes the generated spec even when an assertion fails.
struct SpecFile(PathBuf);

impl Drop for SpecFile {
    fn drop(&mut self) {
        // Best effort: leaving the file behind only adds an unused kind to the host.
        let _ = std::fs::remove_file(&self.0);
    }
}

fn generate(host: &SimHost, kind: &str) -> SpecFile {
    let output = run(host
        .with_driver(&mut ctk())
        .args(["cdi", "generate", "--cdi-kind", kind, "--output-dir", CDI_DIR, "--host-root"])
        .arg(host.root()));
    assert!(output.status.success(), "cdi generate failed\n{}", describe(&output));
    let file_name = format!("{}.json", kind.replace('/', "-"));
    let path = Path::new(CDI_DIR).join(file_name);
    assert!(path.is_file(), "{} was not written\n{}", path.display(), describe(&output));
    SpecFile(path)
}

/// Podman runs busybox with `<kind>=<one>` and then `<kind>=all` of the spec generated on the `sample` host; each
/// container sees the chip nodes plus `shared` (the family's manager and unified-bus nodes), every one allowed.
fn podman_runs_one_chip_and_all(sample: &str, one: u32, shared: &[String]) {
    let host = SimHost::sample(sample);
    let kind = format!("ctk-test-{}-{sample}.example.com/npu", std::process::id());
    let spec = generate(&host, &kind);
    let text = std::fs::read_to_string(&spec.0).expect("read spec");
    assert!(text.contains("\"cdiVersion\": \"0.5.0\""), "podman 4.3 accepts at most 0.5.0:\n{text}");

    let listed = run(ctk().args(["cdi", "list", "--spec-dir", CDI_DIR]));
    let listed_text = String::from_utf8_lossy(&listed.stdout);
    let mut phys = host.phy_ids().to_vec();
    phys.sort_unstable();
    for name in phys.iter().map(ToString::to_string).chain(["all".to_owned()]) {
        assert!(listed_text.lines().any(|l| l == format!("{kind}={name}")), "{kind}={name} not listed:\n{listed_text}");
    }

    let podman = Podman::new();
    podman.import_busybox("localhost/ascend-ctk-busybox");
    let output = podman.run_with_devices("localhost/ascend-ctk-busybox", &[format!("{kind}={one}")]);
    let context = describe(&output);
    assert!(output.status.success(), "podman run failed\n{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, expected_npu_nodes(&[one], shared), "{context}");
    probe.assert_driver_mounted_read_only(&host, &context);
    probe.assert_devices_allowed(&context);
    assert_eq!(probe.ld_library_path, "/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver");

    let all = podman.run_with_devices("localhost/ascend-ctk-busybox", &[format!("{kind}=all")]);
    let all_context = describe(&all);
    assert!(all.status.success(), "podman run with all failed\n{all_context}");
    let all_probe = Probe::parse(&all.stdout);
    assert_eq!(all_probe.npu_devices, expected_npu_nodes(&phys, shared), "{all_context}");
    all_probe.assert_devices_allowed(&all_context);
}

#[test]
fn podman_runs_a_container_with_one_chip_from_our_spec() {
    podman_runs_one_chip_and_all("atlas-300i-pro", 1, &V1_SHARED_NODES.map(str::to_owned));
}

/// An Atlas 950 node (DCMI V2): no `devmm_svm`, and every unified-bus node goes with any NPU.
#[test]
fn podman_runs_a_container_with_one_npu_of_an_atlas_950_node() {
    podman_runs_one_chip_and_all("atlas-950-8", 6, &atlas_950_shared_nodes(8));
}
