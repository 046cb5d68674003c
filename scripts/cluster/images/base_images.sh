#!/usr/bin/env bash
# The two images every test pod needs that are not ours: the pod sandbox (pause) and a small test image (busybox),
# built from this machine's files, since no registry can be reached. Usage: base_images.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: base_images.sh OUT_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/pause" "$work/busybox/bin" "$work/busybox/etc" "$work/busybox/tmp"

gcc -Os -static -o "$work/pause/pause" "$here/pause.c"
strip "$work/pause/pause"
# The pause image containerd pins as its sandbox image (config/containerd.toml) and the kubelet 1.34 asks for.
python3 "$here/oci_image.py" --rootfs "$work/pause" --name registry.k8s.io/pause:3.10.1 \
    --entrypoint '["/pause"]' --user 65535:65535 --out "$out/pause.tar"

# Debian's busybox-static needs no library; one link per applet the tests call.
cp /bin/busybox "$work/busybox/bin/busybox"
for applet in sh ls cat sleep echo env id grep stat test true wc head; do
    ln -s busybox "$work/busybox/bin/$applet"
done
echo 'root:x:0:0:root:/:/bin/sh' >"$work/busybox/etc/passwd"
echo 'root:x:0:' >"$work/busybox/etc/group"
chmod 1777 "$work/busybox/tmp"
# Also as busybox:1.36, the image deploy/kubernetes/examples name, so that they apply as they are.
python3 "$here/oci_image.py" --rootfs "$work/busybox" --name localhost/ascend-test/busybox:1 \
    --alias docker.io/library/busybox:1.36 --entrypoint '["/bin/sh"]' --out "$out/busybox.tar"
