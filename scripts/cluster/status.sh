#!/usr/bin/env bash
# What of the test cluster runs: each daemon by its pid, the node, and every pod. Exit 0 when every daemon is alive.
# Usage: scripts/cluster/status.sh
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"
alive=0
for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
    if running "$name"; then
        printf '%-24s running (pid %s)\n' "$name" "$(cat "$CLUSTER_RUN/$name.pid")"
    else
        printf '%-24s stopped\n' "$name"
        alive=1
    fi
done
if running kube-apiserver; then
    echo
    kubectl get nodes -o wide
    echo
    kubectl get pods -A -o wide
fi
echo
echo "KUBECONFIG=$ADMIN_KUBECONFIG   logs: $CLUSTER_LOGS"
exit $alive
