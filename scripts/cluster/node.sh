#!/usr/bin/env bash
# Starts (or restarts) the test node's container runtime and kubelet.
# Usage: scripts/cluster/node.sh install-containerd-config|start-containerd|start-kubelet|restart-containerd|
#        restart-kubelet
# Called by up.sh; the fault tests call the restarts.
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

# containerd's configuration sits where containerd, ascend-ctk runtime configure and ascend-doctor look for it on
# a real node. The first line marks it as the test bed's, so that down.sh removes only its own.
CONTAINERD_CONFIG=/etc/containerd/config.toml
CONFIG_MARKER="# ascend-rs test cluster (scripts/cluster/config/containerd.toml)"

install_containerd_config() {
    if [[ -e $CONTAINERD_CONFIG ]] && ! head -n 1 "$CONTAINERD_CONFIG" | grep -qF "$CONFIG_MARKER"; then
        die "$CONTAINERD_CONFIG exists and is not the test cluster's: not replacing it"
    fi
    mkdir -p /etc/containerd
    { echo "$CONFIG_MARKER"; sed "s|@RUNC@|$RUNC_BIN/runc|g" "$CLUSTER_SCRIPTS/config/containerd.toml"; } >"$CONTAINERD_CONFIG"
}

# The cluster runs no kube-proxy, but pods reach the API server the in-cluster way, at the `kubernetes` Service's
# address (KUBERNETES_SERVICE_HOST=10.0.0.1, port 443), as every kube-rs and client-go client does. This one rule does
# for that one Service what kube-proxy's iptables mode would: it sends it to the API server on 127.0.0.1:6443 (whose
# certificate names 10.0.0.1), which the kernel allows for traffic from the pods' bridge with route_localnet.
SERVICE_CHAIN=ASCEND-TEST-SERVICES
route_kubernetes_service() {
    sysctl -qw net.ipv4.conf.all.route_localnet=1
    iptables -t nat -N "$SERVICE_CHAIN" 2>/dev/null || iptables -t nat -F "$SERVICE_CHAIN"
    iptables -t nat -A "$SERVICE_CHAIN" -d 10.0.0.1/32 -p tcp --dport 443 -j DNAT --to-destination 127.0.0.1:6443
    iptables -t nat -C PREROUTING -j "$SERVICE_CHAIN" 2>/dev/null || iptables -t nat -I PREROUTING -j "$SERVICE_CHAIN"
}

# The pods' subnet: the first of these that no route of the host overlaps, chosen once per cluster and kept in its
# state for the restarts. Not 10.88.0.0/16, the default of podman's and containerd's own configurations: a podman
# container started on podman's default network leaves a cni-podman0 bridge routing that subnet, and when its route
# comes first the host answers our pods through that bridge: every pod's connection to the API server times out.
POD_SUBNETS=(10.244.0.0/16 10.245.0.0/16 10.246.0.0/16 172.30.0.0/16)
POD_SUBNET_FILE=$CLUSTER_STATE/pod-subnet

# Routes of the host that overlap SUBNET (inside it, or covering it short of the default route), our bridge's aside.
overlapping_routes() {
    { ip -4 -o route show root "$1"; ip -4 -o route show match "$1"; } | grep -v -e '^default ' -e ' dev ascend-cni0 ' |
        sort -u
}

pod_subnet() {
    if [[ -s $POD_SUBNET_FILE ]]; then
        cat "$POD_SUBNET_FILE"
        return
    fi
    local subnet
    for subnet in "${POD_SUBNETS[@]}"; do
        if [[ -z $(overlapping_routes "$subnet") ]]; then
            mkdir -p "$CLUSTER_STATE"
            echo "$subnet" >"$POD_SUBNET_FILE"
            echo "$subnet"
            return
        fi
    done
    for subnet in "${POD_SUBNETS[@]}"; do
        echo "cluster: $subnet is routed already: $(overlapping_routes "$subnet" | tr '\n' ';')" >&2
    done
    die "no free subnet for the pods among ${POD_SUBNETS[*]}"
}

install_cni_config() {
    local subnet
    subnet=$(pod_subnet)
    mkdir -p /etc/cni/net.d
    sed "s|@POD_SUBNET@|$subnet|g" "$CLUSTER_SCRIPTS/config/cni.conflist" >/etc/cni/net.d/10-ascend-test.conflist
}

start_containerd() {
    route_kubernetes_service
    mkdir -p /etc/cdi /var/run/cdi
    install_cni_config
    # The kind and local-up-cluster default of 128 inotify instances is too few for a kubelet, containerd and pods.
    sysctl -qw fs.inotify.max_user_instances=8192 fs.inotify.max_user_watches=524288
    # containerd finds containerd-shim-runc-v2 on its PATH, and the "ascend" runtime (ascend-runtime) finds runc
    # there, as on a node whose runc is installed in /usr/bin.
    PATH=$CONTAINERD_BIN:$RUNC_BIN:$PATH start containerd "$CONTAINERD_BIN/containerd" \
        --config "$CONTAINERD_CONFIG"
    WAIT_LOG=containerd wait_for 30 containerd "$CONTAINERD_BIN/ctr" --address "$CONTAINERD_SOCKET" version
}

start_kubelet() {
    mkdir -p /var/lib/kubelet
    sed "s|@PKI@|$CLUSTER_PKI|g" "$CLUSTER_SCRIPTS/config/kubelet.yaml" >"$CLUSTER_STATE/kubelet.yaml"
    PATH=$CONTAINERD_BIN:$PATH start kubelet "$KUBE_BIN/kubelet" --config="$CLUSTER_STATE/kubelet.yaml" \
        --kubeconfig="$CLUSTER_STATE/kubelet.kubeconfig" --hostname-override="$NODE_NAME" --v=1
    WAIT_LOG=kubelet wait_for 60 kubelet curl -sf http://127.0.0.1:10248/healthz
}

case ${1:-} in
    install-containerd-config) install_containerd_config ;;
    start-containerd) start_containerd ;;
    start-kubelet) start_kubelet ;;
    restart-containerd) stop_pid containerd && start_containerd ;;
    restart-kubelet) stop_pid kubelet && start_kubelet ;;
    *) die "usage: node.sh install-containerd-config|start-containerd|start-kubelet|restart-containerd|restart-kubelet" ;;
esac
