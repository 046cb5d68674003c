#!/usr/bin/env bash
# Runs ascend-doctor on the test node as an operator runs it on an Atlas node: the release binary at the host's /,
# with the admin kubeconfig and the node's name, so every section runs (driver, versions, container runtime,
# Kubernetes). The one thing the fake host cannot put at the real path is the kernel's: the doctor runs in a mount
# namespace of its own where the fake Atlas's PCI devices and driver modules (fake_host.sh) are bind-mounted over
# /sys/bus/pci/devices and /sys/module. Nothing outside that namespace sees them.
#
#   scripts/cluster/doctor.sh [ascend-doctor arguments]      (for example --json, --section kubernetes)
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

doctor=${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/ascend-doctor
kernel=$CLUSTER_STATE/fake-kernel
[[ -x $doctor ]] || die "$doctor missing: scripts/cluster/up.sh builds it"
[[ -d $kernel ]] || die "$kernel missing: is the test cluster up (scripts/cluster/up.sh)?"
export KUBECONFIG=${KUBECONFIG:-$ADMIN_KUBECONFIG}

# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private -- bash -c '
    kernel=$1 doctor=$2
    shift 2
    mount --bind "$kernel/sys/bus/pci/devices" /sys/bus/pci/devices
    mount --bind "$kernel/sys/module" /sys/module
    exec "$doctor" "$@"
' doctor "$kernel" "$doctor" --node "$NODE_NAME" "$@"
