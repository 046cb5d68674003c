#!/usr/bin/env bash
# Huawei's device plugin as an image for the test cluster, for cluster-tests/tests/huawei_device_plugin.rs, which runs
# it on the node in place of ours from cluster-tests/manifests/huawei-device-plugin.yaml. The program is the one the
# comparison tier runs, built from a mind-cluster tree at the pinned commit by scripts/peers/build.sh (cached there).
# Its root filesystem holds the program, as /usr/local/bin/device-plugin where Huawei's image has it, and the shared
# libraries ldd lists for it and for the driver library it loads (the simulated libdcmi.so, given as LIBRARY;
# Huawei's image has them from its base image), from this machine's Debian 12; the environment sets LD_LIBRARY_PATH
# to the driver's library directories as Huawei's image does (component/ascend-device-plugin/build/Dockerfile),
# where the plugin loads libdcmi.so from. Beside the program it holds the files Huawei's image has in /usr/local (its
# build/Dockerfile), staged by scripts/peers/build.sh and laid there by the comparison tier too: the fault policy
# (faultCode.json, faultCustomization.json ...), mode 0440 as Huawei's image gives them (its reader refuses files
# others may read). Without them the plugin grades no fault code, and a chip fault never makes a chip unhealthy
# (cluster-tests/tests/volcano_scheduler.rs raises one under it).
#
#   huawei_device_plugin.sh OUT_DIR LIBRARY     writes OUT_DIR/huawei-device-plugin.tar
#
# Exits 3, saying so, when scripts/peers/build.sh finds no mind-cluster tree: there is then no image, and the test
# says it is skipped and why.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: huawei_device_plugin.sh OUT_DIR LIBRARY}
library=${2:?usage: huawei_device_plugin.sh OUT_DIR LIBRARY}
[[ -f $library ]] || { echo "huawei_device_plugin: $library: no such library" >&2; exit 1; }
repo=$(cd "$here/../../.." && pwd)

# The name cluster-tests/manifests/huawei-device-plugin.yaml gives the image.
name=localhost/ascend-test/huawei-device-plugin:mind-cluster

status=0
built=$(bash "$repo/scripts/peers/build.sh") || status=$?
if ((status == 3)); then
    echo "huawei_device_plugin: no mind-cluster tree, so no image of Huawei's device plugin" \
        "(its cluster test is skipped)"
    exit 3
elif ((status != 0)); then
    echo "huawei_device_plugin: scripts/peers/build.sh failed (exit $status)" >&2
    exit "$status"
fi
bin=$(tail -n 1 <<<"$built")
program=$bin/ascend-device-plugin
if [[ ! -x $program ]]; then
    echo "huawei_device_plugin: scripts/peers/build.sh named $bin, which has no ascend-device-plugin" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev"
cp "$program" "$rootfs/usr/local/bin/device-plugin"
for file in "$bin/device-plugin-files"/*; do
    install -m 0440 "$file" "$rootfs/usr/local/$(basename "$file")"
done
# The libraries as ldd lists them (the dynamic loader included), at the paths it names.
while read -r needed; do
    mkdir -p "$rootfs$(dirname "$needed")"
    cp "$(realpath "$needed")" "$rootfs$needed"
done < <(ldd "$program" "$library" | grep -o '/[^ ]* (0x' | sed 's/ (0x$//' | sort -u)
chmod 1777 "$rootfs/tmp"
echo 'root:x:0:0:root:/:/sbin/nologin' >"$rootfs/etc/passwd"
echo 'root:x:0:' >"$rootfs/etc/group"
mkdir -p "$out"
driver=/usr/local/Ascend/driver
python3 "$here/oci_image.py" --rootfs "$rootfs" --name "$name" --entrypoint '["/usr/local/bin/device-plugin"]' \
    --env LD_LIBRARY_PATH="$driver/lib64:$driver/lib64/driver:$driver/lib64/common" \
    --out "$out/huawei-device-plugin.tar"
echo "huawei_device_plugin: $name from $program"
