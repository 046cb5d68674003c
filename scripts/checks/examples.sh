#!/usr/bin/env bash
# The library crates' examples (`cargo run -p <crate> --example <name>`), each run as a user would run it: on the
# simulator, where an example needs a driver. Each must exit 0; the examples check what they show (watch_health fails
# if the injected fault never arrives, serve_metrics if a chip's temperature or health series is missing, inject_spec
# if no chip was injected, network on any failed reading). An example file that is not listed here fails the check,
# so a new one is run from its first commit.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}

# An example's dependencies unify differently from the workspace build: its build of dcmi-sim is forgotten before and
# after, so that each later build rebuilds the simulator for its own features.
# shellcheck source=scripts/forget_hashless_outputs.sh
source scripts/forget_hashless_outputs.sh
forget_hashless_outputs
trap forget_hashless_outputs EXIT

run() { # crate example [args...]
    local crate=$1 example=$2
    shift 2
    echo "example: $crate/$example $*"
    cargo run -q -p "$crate" --all-features --example "$example" -- "$@"
}

listed=(
    ascend-dcmi/examples/watch_health.rs
    ascend-dcmi/examples/sample_chips.rs
    ascend-exporter/examples/serve_metrics.rs
    ascend-node/examples/health_snapshot.rs
    ascend-deviceplugin/examples/serve_plugin.rs
    dra-kubelet-plugin/examples/driver_skeleton.rs
    ascend-oci/examples/inject_spec.rs
    ascend-smi/examples/host_table.rs
    dcmi-sim/examples/fake_atlas_host.rs
    ascend-cli/examples/tiny_daemon.rs
    ascend-kube/examples/label_node.rs
    kubelet-socket/examples/socket_lifecycle.rs
    ascend-dra/examples/node_driver.rs
    dcmi-sys/examples/raw_calls.rs
    ascend-doctor/examples/check_fake_host.rs
    ascend-hccn/examples/network.rs
    ascend-cluster/examples/demo_cluster.rs
)
for file in */examples/*.rs; do
    if [[ ! " ${listed[*]} " == *" $file "* ]]; then
        echo "examples: $file is not run by scripts/checks/examples.sh; add it" >&2
        exit 1
    fi
done

run ascend-dcmi watch_health
run ascend-dcmi sample_chips
run ascend-exporter serve_metrics
run ascend-node health_snapshot
run ascend-deviceplugin serve_plugin
run dra-kubelet-plugin driver_skeleton
run ascend-oci inject_spec
run ascend-smi host_table
run dcmi-sim fake_atlas_host
run dcmi-sim fake_atlas_host atlas-950-8
run ascend-cli tiny_daemon
run ascend-kube label_node
run kubelet-socket socket_lifecycle
run ascend-dra node_driver
run ascend-doctor check_fake_host >/dev/null
# The raw bindings take the library's path: the simulator's, built beside the other examples.
cargo build -q -p dcmi-sim --lib
DCMI_SIM_CONFIG=sample:atlas-800t-a2 run dcmi-sys raw_calls "$target/debug/libdcmi_sim.so"
# The simulated hccn_tool answers for the sample's chips; phy 4 is the Atlas 800T A2's first.
cargo build -q -p dcmi-sim --bin hccn_tool
DCMI_SIM_CONFIG=sample:atlas-800t-a2 run ascend-hccn network "$target/debug/hccn_tool" 4
run ascend-cluster demo_cluster >/dev/null
echo "examples: all ran"
