# Sourced by scripts/test.sh and scripts/checks/examples.sh: forget_hashless_outputs.
#
# dcmi-sim is a cdylib as well as an rlib, and Cargo names both outputs without the metadata hash that keeps apart the
# builds of other crates with other features (a cdylib's name must be predictable). Every build of dcmi-sim with
# another feature set (deploy/e2e.sh, an example's dependencies, the cluster tier) overwrites the one
# libdcmi_sim.rlib, and a later build whose own fingerprint is still fresh links against it: a second run of
# scripts/test.sh in one checkout then failed to build the benches ("the trait `Serialize` is not implemented for
# `Topology`"). Removing the two files before a build makes Cargo rebuild dcmi-sim for that build's features (seconds).
forget_hashless_outputs() {
    rm -f "${CARGO_TARGET_DIR:-target}"/debug/deps/libdcmi_sim.rlib "${CARGO_TARGET_DIR:-target}"/debug/deps/libdcmi_sim.so
}
