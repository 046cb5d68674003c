#!/usr/bin/env bash
# Brings up a one-node Kubernetes on this machine: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd 2 (CDI on) with runc, and a kubelet, all on loopback, built from their Go modules (build.sh, cached).
# The node is an Atlas server simulated by dcmi-sim: its device nodes, driver files and libdcmi.so sit at the paths
# a real server has, so our daemons run there from our own manifests and images, unchanged.
#
#   scripts/cluster/up.sh [--topology NAME|FILE]     (default atlas-800t-a2: 8 Ascend 910B chips)
#   export KUBECONFIG=/var/lib/ascend-cluster/admin.kubeconfig; kubectl get nodes
#   scripts/cluster/down.sh                          stops everything and removes what up.sh made
#
# Tears down whatever an earlier run left first, so it is safe to run twice and after a crash. Prints each step's
# time. Needs root, and the Debian packages of scripts/deps/debian.txt (scripts/install-deps.sh).
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

topology=atlas-800t-a2
while (($#)); do
    case $1 in
        --topology) topology=${2:?--topology needs a value}; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[[ $(id -u) == 0 ]] || die "run as root: the kubelet, containerd and the fake host's device nodes need it"

say "tearing down what an earlier run left"
bash "$CLUSTER_SCRIPTS/down.sh" --quiet
mkdir -p "$CLUSTER_LOGS"
for log in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet audit; do
    rm -f "$CLUSTER_LOGS/$log.log"
done

say "Go programs (cached by version in $CLUSTER_CACHE)"
bash "$CLUSTER_SCRIPTS/build.sh"

# Volcano with Huawei's Ascend plugin, which cluster-tests/tests/volcano_scheduler.rs starts (volcano.sh start): only
# where there is a mind-cluster tree to build the plugin from (exit 3 when there is none; the test then says it is
# skipped).
bash "$CLUSTER_SCRIPTS/volcano.sh" build || [[ $? == 3 ]]

say "our release binaries and images"
target=${CARGO_TARGET_DIR:-$REPO_ROOT/target}
images=$CLUSTER_STATE/images
bash "$CLUSTER_SCRIPTS/images/base_images.sh" "$images"
# The host's own tools come from the same release build: the CDI spec writer and runtime configurer, and the doctor;
# and the operator's `kubectl ascend`, which cluster-tests/tests/migration.rs runs as docs/migration.md does.
python3 "$CLUSTER_SCRIPTS/images/daemon_images.py" --repo "$REPO_ROOT" --out "$images" \
    --also-feature ctk --also-feature doctor --also-feature kubectl-ascend \
    --also-bin ascend-ctk --also-bin ascend-doctor --also-bin kubectl-ascend
# Huawei's device plugin, which cluster-tests/tests/huawei_device_plugin.rs runs in place of ours: only where
# scripts/peers/build.sh finds the mind-cluster tree (exit 3 when there is none; the test then says it is skipped).
bash "$CLUSTER_SCRIPTS/images/huawei_device_plugin.sh" "$images" "$target/release/libdcmi_sim.so" || [[ $? == 3 ]]

say "credentials"
bash "$CLUSTER_SCRIPTS/pki.sh"

say "the simulated Atlas host ($topology)"
bash "$CLUSTER_SCRIPTS/fake_host.sh" install "$topology" "$target/release"

say "etcd $ETCD_VERSION"
mkdir -p "$CLUSTER_STATE/etcd"
start etcd "$ETCD_BIN/etcd" --name ascend-test --data-dir "$CLUSTER_STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster ascend-test=http://127.0.0.1:2380 --log-level warn --unsafe-no-fsync
WAIT_LOG=etcd wait_for 30 etcd curl -sf http://127.0.0.1:2379/health

bash "$CLUSTER_SCRIPTS/control_plane.sh" start
say "control plane ready"

say "containerd $CONTAINERD_VERSION"
bash "$CLUSTER_SCRIPTS/node.sh" install-containerd-config
# Our toolkit, installed as deploy/README.md tells operators to: the CDI spec of the chips, and the "ascend" runtime
# registered in the containerd configuration just written, before containerd reads it.
bash "$CLUSTER_SCRIPTS/host_toolkit.sh" install "$target/release"
bash "$CLUSTER_SCRIPTS/node.sh" start-containerd
for archive in "$images"/*.tar; do
    ctr images import --snapshotter overlayfs "$archive" >/dev/null
done
say "images imported: $(ctr images ls -q | grep -vc '^sha256:')"

say "kubelet $KUBERNETES_VERSION"
bash "$CLUSTER_SCRIPTS/node.sh" start-kubelet
WAIT_LOG=kubelet wait_for 120 "node $NODE_NAME Ready" \
    kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
WAIT_LOG=kube-controller-manager wait_for 60 "the default ServiceAccount" kubectl -n default get serviceaccount default
say "cluster up: export KUBECONFIG=$ADMIN_KUBECONFIG"
