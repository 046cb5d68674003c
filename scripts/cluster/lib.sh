# Shared by the scripts/cluster/ scripts: the pinned versions, where things live, and small helpers.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the scripts that source this file
CLUSTER_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$CLUSTER_SCRIPTS/../.." && pwd)
# shellcheck source=scripts/cluster/versions.env
source "$CLUSTER_SCRIPTS/versions.env"

# Go-built binaries and their build modules, outside the repository so that every clone on the machine shares them.
CLUSTER_CACHE=${CLUSTER_CACHE:-/var/cache/ascend-rs-cluster}
cache_bin() { echo "$CLUSTER_CACHE/$1-$2/bin"; }
KUBE_BIN=$(cache_bin kubernetes "$KUBERNETES_VERSION")
ETCD_BIN=$(cache_bin etcd "$ETCD_VERSION")
CONTAINERD_BIN=$(cache_bin containerd "$CONTAINERD_VERSION")
RUNC_BIN=$(cache_bin runc "$RUNC_VERSION")
HELM_BIN=$(cache_bin helm "$HELM_VERSION")

# A running cluster's files: PKI, kubeconfigs, configs, etcd data, pid files, images. One directory, so that
# down.sh can remove all of it; the kubelet's and containerd's own state stays at the paths they insist on.
CLUSTER_STATE=${CLUSTER_STATE:-/var/lib/ascend-cluster}
CLUSTER_RUN=$CLUSTER_STATE/run
# The daemons' logs outlive down.sh, for a look after a failed run; up.sh starts them afresh.
CLUSTER_LOGS=${CLUSTER_LOGS:-/var/log/ascend-cluster}
CLUSTER_PKI=$CLUSTER_STATE/pki
ADMIN_KUBECONFIG=$CLUSTER_STATE/admin.kubeconfig
# The node is named by its loopback address: the kubelet then reports 127.0.0.1 as its InternalIP, so the API server
# reaches it (logs, exec) on loopback only (pkg/kubelet/nodestatus/setters.go takes an IP hostname override as the
# node's address).
NODE_NAME=127.0.0.1
CONTAINERD_SOCKET=/run/containerd/containerd.sock

kubectl() { "$KUBE_BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }
ctr() { "$CONTAINERD_BIN/ctr" --address "$CONTAINERD_SOCKET" --namespace k8s.io "$@"; }

# Prints a step with the seconds since the script started.
say() { printf 'cluster [%4ds] %s\n' "$SECONDS" "$*"; }
die() {
    echo "cluster: error: $*" >&2
    exit 1
}

# start NAME COMMAND...: runs a daemon in the background with its output in $CLUSTER_LOGS/NAME.log and its pid in
# $CLUSTER_RUN/NAME.pid, in a session of its own so that the caller's terminal signals do not reach it.
start() {
    local name=$1
    shift
    mkdir -p "$CLUSTER_RUN" "$CLUSTER_LOGS"
    setsid "$@" >>"$CLUSTER_LOGS/$name.log" 2>&1 </dev/null &
    echo $! >"$CLUSTER_RUN/$name.pid"
}

# running NAME: whether the daemon started as NAME is alive.
running() {
    local pid
    pid=$(cat "$CLUSTER_RUN/$1.pid" 2>/dev/null) || return 1
    kill -0 "$pid" 2>/dev/null
}

# wait_for SECONDS WHAT COMMAND...: retries COMMAND every 0.2 s; on time-out names WHAT and shows the log tail of the
# daemon named by $WAIT_LOG, if set.
wait_for() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            [[ -n ${WAIT_LOG:-} ]] && tail -n 30 "$CLUSTER_LOGS/$WAIT_LOG.log" >&2
            die "$what: not ready after ${limit} s"
        fi
        sleep 0.2
    done
}

# stop_pid NAME: stops the daemon started as NAME (SIGTERM, then SIGKILL after 10 s) and forgets its pid.
stop_pid() {
    local pid tries=0
    pid=$(cat "$CLUSTER_RUN/$1.pid" 2>/dev/null) || return 0
    if kill -TERM "$pid" 2>/dev/null; then
        while kill -0 "$pid" 2>/dev/null && ((tries++ < 100)); do sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$CLUSTER_RUN/$1.pid"
}
