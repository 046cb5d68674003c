#!/usr/bin/env bash
# Makes this machine look like an Atlas server to our daemons: `dcmi-sim fake-host` lays the host out in a staging
# root, and its device nodes (/dev/davinci<phy>, the manager nodes, Ascend950's UB nodes) and driver files
# (/usr/local/Ascend, /usr/local/dcmi, npu-smi) are copied to the real paths, with the simulator as libdcmi.so and its
# topology beside it (dcmi-sim finds it there without any environment variable). /sys and the kernel entries are
# left out: they are the kernel's. Every path it creates is recorded, and `remove` deletes exactly those.
#
#   fake_host.sh install TOPOLOGY RELEASE_DIR     (RELEASE_DIR holds dcmi-sim and libdcmi_sim.so)
#   fake_host.sh remove
#   fake_host.sh overlay TOML                      writes the simulator's overlay (faults) that the daemons watch
#
# It refuses to install over an Ascend driver it did not install itself: never run the test bed on a real NPU host.
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

installed=$CLUSTER_STATE/fake-host.installed
overlay=/usr/local/Ascend/driver/lib64/driver/dcmi-sim-overlay.toml

remove() {
    [[ -f $installed ]] || return 0
    local path
    while read -r path; do
        rm -rf -- "$path"
    done < <(sort -r "$installed")
    rm -f "$installed"
}

install() {
    local topology=$1 release=$2 staging=$CLUSTER_STATE/fake-host
    if [[ -e /usr/local/Ascend && ! -f $installed ]]; then
        die "/usr/local/Ascend exists and was not installed by this script: a real Ascend driver? Not touching it"
    fi
    remove
    rm -rf "$staging"
    "$release/dcmi-sim" fake-host --topology "$topology" --root "$staging" --library "$release/libdcmi_sim.so" \
        >/dev/null
    mkdir -p "$CLUSTER_STATE"
    : >"$installed"
    local relative
    while read -r relative; do
        [[ -e /$relative ]] && die "/$relative already exists"
        mkdir -p "$(dirname "/$relative")"
        cp -a "$staging/$relative" "/$relative"
        echo "/$relative" >>"$installed"
    done < <(cd "$staging" && {
        find dev -mindepth 1 -maxdepth 1
        for path in usr/local/Ascend usr/local/dcmi usr/local/bin/npu-smi etc/dcmi-sim; do
            [[ -e $path ]] && echo "$path"
        done
    })
    rm -rf "$staging"
}

case ${1:-} in
    install) install "${2:?topology}" "${3:?release directory}" ;;
    remove) remove ;;
    overlay)
        # Written whole and renamed, so a daemon never reads half a file.
        cp "${2:?overlay file}" "$overlay.partial" && mv "$overlay.partial" "$overlay"
        ;;
    *) die "usage: fake_host.sh install TOPOLOGY RELEASE_DIR | remove | overlay TOML" ;;
esac
