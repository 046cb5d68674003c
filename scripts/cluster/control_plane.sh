#!/usr/bin/env bash
# Starts (or restarts) the test cluster's control plane after etcd: kube-apiserver, kube-controller-manager and
# kube-scheduler, each waiting for the one before it.
# Usage: scripts/cluster/control_plane.sh start|restart-apiserver [SECONDS_DOWN]
# Called by up.sh; the fault tests call restart-apiserver, benches/src/bin/perf-api-requests.rs with an outage of a
# few seconds (the API server stays stopped that long).
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

# Alpha features the tests exercise, on every component that reads them: the Pod status of a chip's health
# (ResourceHealthStatus: the API server drops the field without it, pkg/api/pod/util.go), DRA device taints and
# partitionable devices.
FEATURE_GATES=ResourceHealthStatus=true,DRADeviceTaints=true,DRAPartitionableDevices=true

start_apiserver() {
    start kube-apiserver "$KUBE_BIN/kube-apiserver" \
        --etcd-servers=http://127.0.0.1:2379 \
        --bind-address=127.0.0.1 --secure-port=6443 --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
        --tls-cert-file="$CLUSTER_PKI/apiserver.crt" --tls-private-key-file="$CLUSTER_PKI/apiserver.key" \
        --client-ca-file="$CLUSTER_PKI/ca.crt" --token-auth-file="$CLUSTER_PKI/tokens.csv" \
        --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
        --allow-privileged=true --service-cluster-ip-range=10.0.0.0/24 \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$CLUSTER_PKI/sa.pub" --service-account-signing-key-file="$CLUSTER_PKI/sa.key" \
        --kubelet-client-certificate="$CLUSTER_PKI/apiserver-kubelet-client.crt" \
        --kubelet-client-key="$CLUSTER_PKI/apiserver-kubelet-client.key" \
        --kubelet-certificate-authority="$CLUSTER_PKI/ca.crt" \
        --kubelet-preferred-address-types=InternalIP,Hostname \
        --runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,resource.k8s.io/v1alpha3=true \
        --feature-gates="$FEATURE_GATES" --audit-log-path="$CLUSTER_LOGS/audit.log" \
        --audit-policy-file="$CLUSTER_SCRIPTS/config/audit-policy.yaml" --audit-log-maxsize=200 --v=1
    WAIT_LOG=kube-apiserver wait_for 120 kube-apiserver kubectl get --raw /readyz
}

case ${1:-} in
    start)
        start_apiserver
        # The API server's client certificate may call the kubelet (logs, exec), as hack/local-up-cluster.sh grants.
        kubectl create clusterrolebinding kube-apiserver-kubelet-admin --clusterrole=system:kubelet-api-admin \
            --user=kube-apiserver >/dev/null
        start kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
            --kubeconfig="$CLUSTER_STATE/controller-manager.kubeconfig" \
            --authentication-kubeconfig="$CLUSTER_STATE/controller-manager.kubeconfig" \
            --authorization-kubeconfig="$CLUSTER_STATE/controller-manager.kubeconfig" \
            --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
            --service-account-private-key-file="$CLUSTER_PKI/sa.key" --root-ca-file="$CLUSTER_PKI/ca.crt" \
            --cluster-signing-cert-file="$CLUSTER_PKI/ca.crt" --cluster-signing-key-file="$CLUSTER_PKI/ca.key" \
            --service-cluster-ip-range=10.0.0.0/24 --controllers='*' --feature-gates="$FEATURE_GATES" --v=1
        sed "s|@STATE@|$CLUSTER_STATE|g" "$CLUSTER_SCRIPTS/config/scheduler.yaml" >"$CLUSTER_STATE/scheduler.yaml"
        start kube-scheduler "$KUBE_BIN/kube-scheduler" --config="$CLUSTER_STATE/scheduler.yaml" \
            --authentication-kubeconfig="$CLUSTER_STATE/scheduler.kubeconfig" \
            --authorization-kubeconfig="$CLUSTER_STATE/scheduler.kubeconfig" \
            --bind-address=127.0.0.1 --feature-gates="$FEATURE_GATES" --v=1
        WAIT_LOG=kube-controller-manager wait_for 60 kube-controller-manager curl -skf https://127.0.0.1:10257/healthz
        WAIT_LOG=kube-scheduler wait_for 60 kube-scheduler curl -skf https://127.0.0.1:10259/healthz
        ;;
    restart-apiserver)
        stop_pid kube-apiserver
        sleep "${2:-0}"
        start_apiserver
        ;;
    *) die "usage: control_plane.sh start|restart-apiserver [SECONDS_DOWN]" ;;
esac
