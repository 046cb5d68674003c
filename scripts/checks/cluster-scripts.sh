#!/usr/bin/env bash
# The test bed's own scripts, checked before the cluster tier uses them (run by scripts/test.sh): shellcheck of
# scripts/cluster, and the OCI image writer's output checked against the image-layout rules containerd's importer
# relies on (every blob's name is its digest, the index names the image by io.containerd.image.name, aliases share one
# manifest, the Dockerfile reader finds every image's build and entrypoint).
set -euo pipefail
cd "$(dirname "$0")/../.."
shellcheck -x scripts/cluster/*.sh scripts/cluster/kubectl scripts/cluster/helm scripts/cluster/images/*.sh scripts/cargo-nightly.sh \
    scripts/checks/cluster-scripts.sh
python3 - <<'PY'
import hashlib, json, sys, tarfile, tempfile, os
from pathlib import Path
sys.path.insert(0, "scripts/cluster/images")
import oci_image, daemon_images

with tempfile.TemporaryDirectory() as work:
    rootfs = Path(work, "rootfs"); (rootfs / "bin").mkdir(parents=True)
    (rootfs / "bin/tool").write_bytes(b"#!/bin/sh\n"); (rootfs / "bin/tool").chmod(0o755)
    entries, digest = oci_image.build(str(rootfs), "example.com/a/b:1", ["/bin/tool"], None, ["A=1"], "1:1",
                                      ["docker.io/library/b:1"])
    out = os.path.join(work, "image.tar")
    oci_image.write_archive(entries, out)
    with tarfile.open(out) as archive:
        files = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
    for name, data in files.items():
        if name.startswith("blobs/sha256/"):
            assert hashlib.sha256(data).hexdigest() == name.rsplit("/", 1)[1], f"{name}: digest mismatch"
    index = json.loads(files["index.json"])
    names = [m["annotations"]["io.containerd.image.name"] for m in index["manifests"]]
    assert names == ["example.com/a/b:1", "docker.io/library/b:1"], names
    assert {m["digest"] for m in index["manifests"]} == {digest}, "aliases share one manifest"
    manifest = json.loads(files["blobs/sha256/" + digest.split(":")[1]])
    config = json.loads(files["blobs/sha256/" + manifest["config"]["digest"].split(":")[1]])
    assert config["config"]["Entrypoint"] == ["/bin/tool"] and config["config"]["User"] == "1:1", config
    layer = files["blobs/sha256/" + manifest["layers"][0]["digest"].split(":")[1]]
    with tarfile.open(fileobj=__import__("io").BytesIO(layer)) as archive:
        member = archive.getmember("bin/tool")
        assert member.uid == 0 and member.mode & 0o111, "root-owned, executable"
    again, _ = oci_image.build(str(rootfs), "example.com/a/b:1", ["/bin/tool"], None, ["A=1"], "1:1",
                               ["docker.io/library/b:1"])
    assert again == entries, "the same rootfs gives the same image"

for dockerfile in sorted(Path("deploy/docker").glob("*.Dockerfile")):
    features, binaries, relinks, copied, entrypoint, user = daemon_images.dockerfile_plan(dockerfile)
    assert binaries and entrypoint[0] in {target for _, target in copied}, dockerfile
    # Every binary the runtime stage copies is one the builder stage builds (with `cargo build` or `cargo rustc`).
    assert {name for name, _ in copied} <= set(binaries), (dockerfile, copied, binaries)
    assert all(flags for _, flags in relinks), (dockerfile, relinks)
steps = daemon_images.cargo_steps(
    "RUN --mount=type=cache,target=/t cargo build --release --bin a && install x y "
    "&& cargo rustc --release --bin b -- -C target-feature=+crt-static")
assert steps == [("build", ["--release", "--bin", "a"]),
                 ("rustc", ["--release", "--bin", "b", "--", "-C", "target-feature=+crt-static"])], steps
for name, full in [("busybox:1.36", "docker.io/library/busybox:1.36"), ("a/b", "docker.io/a/b"),
                   ("registry.example.com/x/y", "registry.example.com/x/y"), ("localhost/y", "localhost/y")]:
    assert daemon_images.full_reference(name) == full, (name, daemon_images.full_reference(name))
print("cluster scripts: shellcheck clean; image writer and Dockerfile reader checked")
PY
