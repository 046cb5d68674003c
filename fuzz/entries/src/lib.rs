//! The entry points of the fuzz targets: one function per parser of untrusted or operator input, taking arbitrary
//! bytes. Each calls the parser exactly as the product does (the same functions, the same size limits) and then
//! checks the invariants the callers rely on, panicking when one breaks: a panic, a hang or an unbounded allocation is
//! what libFuzzer reports.
//!
//! Two harnesses call them. The cargo-fuzz crate in `fuzz/` (nightly, libFuzzer) has one target per entry, named as
//! in [`TARGETS`]; `scripts/fuzz.sh` runs each for a bounded time. The test `tests/corpus_replay.rs` (stable, part of
//! the workspace's tests) feeds every file of `fuzz/corpus/<target>/` to the same entry, so CI replays the corpora,
//! including the input of every crash found so far, without a nightly build.
#![forbid(unsafe_code)]

pub mod dra;
pub mod driver;
pub mod exporter;
pub mod kubelet;
pub mod network;
pub mod oci;
pub mod runtime_config;
pub mod simulator;
pub mod versions;
pub mod volcano;

/// An entry point: arbitrary bytes in, a panic when an invariant breaks.
pub type Entry = fn(&[u8]);

/// Every target, by the name of its fuzz target and corpus directory.
pub const TARGETS: &[(&str, Entry)] = &[
    ("request_env", oci::request_env),
    ("oci_config", oci::oci_config),
    ("hook_state", oci::hook_state),
    ("cdi_spec", oci::cdi_spec),
    ("mount_list", oci::mount_list),
    ("runtime_args", oci::runtime_args),
    ("docker_daemon_json", runtime_config::docker_daemon_json),
    ("containerd_toml", runtime_config::containerd_toml),
    ("crio_toml", runtime_config::crio_toml),
    ("runtime_classes", runtime_config::runtime_classes),
    ("fault_code_json", driver::fault_code_json),
    ("driver_output", driver::driver_output),
    ("driver_v2_output", driver::driver_v2_output),
    ("exporter_web_config", exporter::web_config),
    ("metric_selection", exporter::metric_selection),
    ("manually_separated", volcano::manually_separated),
    ("pod_annotations", volcano::pod_annotations),
    ("dra_opaque_config", dra::dra_opaque_config),
    ("dra_claim", dra::dra_claim),
    ("sim_topology", simulator::sim_topology),
    ("sim_overlay", simulator::sim_overlay),
    ("version_info", versions::version_info),
    ("package_compatibility", versions::package_compatibility),
    ("pod_container", versions::pod_container),
    ("hccn_output", network::hccn_output),
    ("hccn_ub_output", network::hccn_ub_output),
    ("authority_rewrite", kubelet::authority_rewrite),
];

/// The entry named `name`.
pub fn entry(name: &str) -> Option<Entry> {
    TARGETS.iter().find(|(target, _)| *target == name).map(|(_, entry)| *entry)
}

/// `data` as text, for parsers whose callers read files with `read_to_string` (invalid UTF-8 never reaches them).
pub(crate) fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}
