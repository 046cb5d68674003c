#!/usr/bin/env bash
# Makes this machine look like an Atlas server to our daemons: `dcmi-sim fake-host` lays the host out in a staging
# root, and its device nodes (/dev/davinci<phy>, the manager nodes, Ascend950's UB nodes) and driver files
# (/usr/local/Ascend, /usr/local/dcmi, npu-smi) are copied to the real paths, with the simulator as libdcmi.so and its
# topology beside it (dcmi-sim finds it there without any environment variable), and the kernel headers the driver
# builds against when the machine has none. /sys is the kernel's: the fake PCI devices and driver modules are kept in
# $CLUSTER_STATE/fake-kernel, for doctor.sh to show the doctor in a mount namespace of its own. Every path it
# creates is recorded, and `remove` deletes exactly those.
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
kernel=$CLUSTER_STATE/fake-kernel
overlay=/usr/local/Ascend/driver/lib64/driver/dcmi-sim-overlay.toml

remove() {
    [[ -f $installed ]] || return 0
    local path
    while read -r path; do
        rm -rf -- "$path"
    done < <(sort -r "$installed")
    rm -f "$installed"
    rm -rf "$kernel"
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
        # Kernel headers are files a package installs, not the kernel's: added only where the machine has none.
        if [[ ! -e /lib/modules ]]; then
            echo lib/modules
        elif [[ ! -e /lib/modules/$(uname -r) ]]; then
            echo "lib/modules/$(uname -r)"
        fi
    })
    rm -rf "$kernel"
    mkdir -p "$kernel/sys/bus/pci"
    cp -a "$staging/sys/bus/pci/devices" "$kernel/sys/bus/pci/"
    cp -a "$staging/sys/module" "$kernel/sys/"
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
