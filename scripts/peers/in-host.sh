#!/usr/bin/env bash
# Runs a command inside a fake host (dcmi-sim fake-host) the way Huawei's programs need one: they open libdcmi.so,
# hccn_tool and the device nodes at fixed paths (/usr/local/Ascend/driver/..., /dev/davinci<N>) and refuse a library
# below any directory that is not root-owned or is writable by others, so the host's usr/local and dev are mounted
# over the machine's in a private mount namespace that ends with the command; nothing outside it changes.
#
#   scripts/peers/in-host.sh [--bind SOURCE:TARGET]... ROOT COMMAND [ARG...]
#
# --bind also mounts SOURCE over TARGET inside the namespace (a device plugin's kubelet directory and in-cluster
# service-account files); a missing TARGET directory is made first, empty, on the machine.
set -euo pipefail
usage="usage: scripts/peers/in-host.sh [--bind SOURCE:TARGET]... ROOT COMMAND [ARG...]"
binds=()
while [[ ${1:-} == --bind ]]; do
    [[ ${2:-} == *:* ]] || { echo "in-host: --bind takes SOURCE:TARGET; $usage" >&2; exit 2; }
    binds+=("$2")
    shift 2
done
(($# >= 2)) || { echo "$usage" >&2; exit 2; }
root=$(cd "$1" && pwd)
[[ -d $root/usr/local/Ascend/driver && -d $root/dev ]] || {
    echo "in-host: $root is not a fake host (no usr/local/Ascend/driver or dev): make one with dcmi-sim fake-host" >&2
    exit 2
}
shift
for bind in "${binds[@]}"; do
    [[ -d ${bind%%:*} ]] || { echo "in-host: --bind source ${bind%%:*} is not a directory" >&2; exit 2; }
    mkdir -p "${bind#*:}"
done
# shellcheck disable=SC2016 # the script is the inner shell's, expanded there
exec unshare --mount --propagation private -- bash -euc '
    root=$1
    IFS=" " read -r -a binds <<<"$2"
    shift 2
    for bind in "${binds[@]}"; do
        mount --bind "${bind%%:*}" "${bind#*:}"
    done
    mount --bind "$root/usr/local" /usr/local
    # A /dev of the basic nodes and the fake host own ones (cp -a keeps character devices as they are).
    mount -t tmpfs -o mode=755,size=1m ascend-peer-dev /dev
    for node in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
        IFS=: read -r name major minor <<<"$node"
        mknod -m 666 "/dev/$name" c "$major" "$minor"
    done
    cp -a "$root/dev/." /dev/
    exec "$@"
' in-host "$root" "${binds[*]}" "$@"
