#!/usr/bin/env bash
# Huawei's device plugin and DRA driver as images for the test cluster: the device plugin for
# cluster-tests/tests/huawei_device_plugin.rs, which runs it on the node in place of ours from
# cluster-tests/manifests/huawei-device-plugin.yaml; the DRA driver for benches/src/bin/perf-dra-beside-huawei.rs, which
# runs it in turn with ours from cluster-tests/manifests/huawei-dra-driver.yaml. The programs are the ones the
# comparison tier runs, built from a mind-cluster tree at the pinned commit by scripts/peers/build.sh (cached there).
# Each root filesystem holds the program where Huawei's image has it (/usr/local/bin/device-plugin,
# /usr/local/bin/ascend-dra), and the shared libraries ldd lists for it and for the driver library it loads (the
# simulated libdcmi.so, given as LIBRARY; Huawei's images have them from their base image), from this machine's
# Debian 12; the environment sets LD_LIBRARY_PATH to the driver's library directories as Huawei's images do
# (component/ascend-device-plugin/build/Dockerfile, component/ascend-dynamic-resource-allocation/build/Dockerfile),
# where the programs load libdcmi.so from. Beside the device plugin its image holds the files Huawei's image has in
# /usr/local (its build/Dockerfile), staged by scripts/peers/build.sh and laid there by the comparison tier too: the
# fault policy (faultCode.json, faultCustomization.json ...), mode 0440 as Huawei's image gives them (its reader
# refuses files others may read). Without them the plugin grades no fault code, and a chip fault never makes a chip
# unhealthy (cluster-tests/tests/volcano_scheduler.rs raises one under it).
#
#   huawei_device_plugin.sh OUT_DIR LIBRARY     writes OUT_DIR/huawei-device-plugin.tar and huawei-dra-driver.tar
#
# Exits 3, saying so, when scripts/peers/build.sh finds no mind-cluster tree: there is then no image, and the test
# says it is skipped and why (the bench, that the comparison is not measured).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: huawei_device_plugin.sh OUT_DIR LIBRARY}
library=${2:?usage: huawei_device_plugin.sh OUT_DIR LIBRARY}
[[ -f $library ]] || { echo "huawei_device_plugin: $library: no such library" >&2; exit 1; }
repo=$(cd "$here/../../.." && pwd)

status=0
built=$(bash "$repo/scripts/peers/build.sh") || status=$?
if ((status == 3)); then
    echo "huawei_device_plugin: no mind-cluster tree, so no image of Huawei's device plugin" \
        "(its cluster test is skipped, the DRA comparison not measured)"
    exit 3
elif ((status != 0)); then
    echo "huawei_device_plugin: scripts/peers/build.sh failed (exit $status)" >&2
    exit "$status"
fi
bin=$(tail -n 1 <<<"$built")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
driver=/usr/local/Ascend/driver

# pack PROGRAM IMAGE IN_IMAGE [DIR...]: the image IMAGE (its name, which the manifest gives) as OUT_DIR/<its last path
# part before the tag>.tar, with the program PROGRAM of $bin at IN_IMAGE (its entrypoint) and the libraries it needs;
# the files of each DIR of $bin go beside it in /usr/local, mode 0440.
pack() {
    local program=$bin/$1 name=$2 in_image=$3 rootfs=$work/$1 needed dir file
    shift 3
    if [[ ! -x $program ]]; then
        echo "huawei_device_plugin: scripts/peers/build.sh named $bin, which has no $(basename "$program")" >&2
        exit 1
    fi
    mkdir -p "$rootfs$(dirname "$in_image")" "$rootfs/etc" "$rootfs/tmp" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev"
    cp "$program" "$rootfs$in_image"
    for dir in "$@"; do
        for file in "$bin/$dir"/*; do
            install -m 0440 "$file" "$rootfs/usr/local/$(basename "$file")"
        done
    done
    # The libraries as ldd lists them (the dynamic loader included), at the paths it names.
    while read -r needed; do
        mkdir -p "$rootfs$(dirname "$needed")"
        cp "$(realpath "$needed")" "$rootfs$needed"
    done < <(ldd "$program" "$library" | grep -o '/[^ ]* (0x' | sed 's/ (0x$//' | sort -u)
    chmod 1777 "$rootfs/tmp"
    echo 'root:x:0:0:root:/:/sbin/nologin' >"$rootfs/etc/passwd"
    echo 'root:x:0:' >"$rootfs/etc/group"
    local tar=${name##*/}
    python3 "$here/oci_image.py" --rootfs "$rootfs" --name "$name" --entrypoint "[\"$in_image\"]" \
        --env LD_LIBRARY_PATH="$driver/lib64:$driver/lib64/driver:$driver/lib64/common" \
        --out "$out/${tar%%:*}.tar"
    echo "huawei_device_plugin: $name from $program"
}

# The names cluster-tests/manifests/huawei-device-plugin.yaml and huawei-dra-driver.yaml give the images.
pack ascend-device-plugin localhost/ascend-test/huawei-device-plugin:mind-cluster /usr/local/bin/device-plugin \
    device-plugin-files
pack ascend-dra localhost/ascend-test/huawei-dra-driver:mind-cluster /usr/local/bin/ascend-dra
