#!/usr/bin/env bash
# Stops the test cluster and removes what scripts/cluster/up.sh made: processes (by the pids it recorded, then any
# container shim of our containerd), mounts under the kubelet's and containerd's directories, the pods' cgroups, the
# CNI bridge, the fake Atlas host's files, and the cluster's state. Idempotent: safe to run twice, after a crash, or
# when nothing is up. The Go build cache stays. Usage: scripts/cluster/down.sh [--quiet]
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"
quiet=false
[[ ${1:-} == --quiet ]] && quiet=true

for name in vc-scheduler vc-controller-manager kubelet kube-scheduler kube-controller-manager kube-apiserver; do
    stop_pid "$name"
done
# Containers first, through containerd while it runs, so that their shims and processes end with them.
if running containerd; then
    for task in $(ctr tasks ls -q 2>/dev/null); do
        ctr tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
    done
fi
stop_pid containerd
stop_pid etcd
# Shims left by a crashed containerd: only those serving our socket's namespace directory.
for pid in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io" || true); do
    kill -KILL "$pid" 2>/dev/null || true
done
# Container processes whose shim died: everything still in the kubelet's pod cgroups.
for procs in /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/*/kubepods/*/cgroup.procs \
    /sys/fs/cgroup/*/kubepods/*/*/cgroup.procs /sys/fs/cgroup/*/kubepods/*/*/*/cgroup.procs; do
    [[ -f $procs ]] || continue
    xargs -r kill -KILL <"$procs" 2>/dev/null || true
done
awk '$2 ~ "^(/var/lib/kubelet|/run/containerd|/var/lib/containerd|/run/netns/cni-)" { print $2 }' /proc/mounts |
    sort -r | while read -r mount_point; do umount -l "$mount_point" 2>/dev/null || true; done
for hierarchy in /sys/fs/cgroup/*/; do
    [[ -d $hierarchy/kubepods ]] || continue
    find "$hierarchy/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
done
ip link delete ascend-cni0 2>/dev/null || true
# The kubernetes Service's route (node.sh).
iptables -t nat -D PREROUTING -j ASCEND-TEST-SERVICES 2>/dev/null || true
iptables -t nat -F ASCEND-TEST-SERVICES 2>/dev/null || true
iptables -t nat -X ASCEND-TEST-SERVICES 2>/dev/null || true
for netns in /run/netns/cni-*; do
    if [[ -e $netns ]]; then ip netns delete "$(basename "$netns")" 2>/dev/null || true; fi
done
bash "$CLUSTER_SCRIPTS/host_toolkit.sh" remove
bash "$CLUSTER_SCRIPTS/fake_host.sh" remove
rm -rf /var/lib/kubelet /var/lib/containerd /run/containerd /var/lib/cni /etc/cni/net.d/10-ascend-test.conflist \
    "$CLUSTER_STATE"
if head -n 1 /etc/containerd/config.toml 2>/dev/null | grep -qF "# ascend-rs test cluster"; then
    rm -f /etc/containerd/config.toml /etc/containerd/config.toml.*
fi
# CDI specs our daemons wrote for this node (the DRA driver's per claim, ascend-ctk's for the host).
rm -f /var/run/cdi/huawei.com-* /var/run/cdi/ascend* /etc/cdi/huawei.com-* 2>/dev/null || true
$quiet || say "cluster down"
