#!/usr/bin/env python3
"""Writes an OCI image-layout archive from a root filesystem directory, for `ctr images import`.

The test cluster has no registry and no image builder, so its images (the pause image, a busybox test image and our
daemons' images) are packed here: one uncompressed layer holding the directory, an image config with the entrypoint,
command and environment, a manifest, and an index whose entry carries the `io.containerd.image.name` annotation that
containerd's importer names the image by (containerd: core/images/archive/importer.go). Layout as in the OCI image
spec (image-layout.md, manifest.md, config.md). Files are stored with uid/gid 0 and a fixed mtime, so the same rootfs
gives the same digests.

    oci_image.py --rootfs DIR --name docker.io/library/x:1 --out x.tar [--entrypoint JSON] [--cmd JSON]
                 [--env K=V]... [--user UID:GID] [--alias REFERENCE]...
"""

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile

FIXED_MTIME = 0


def layer_bytes(rootfs):
    """An uncompressed tar of `rootfs`, entries sorted, owned by root, with a fixed mtime."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for directory, subdirectories, files in os.walk(rootfs):
            subdirectories.sort()
            for name in sorted(subdirectories + files):
                path = os.path.join(directory, name)
                member = archive.gettarinfo(path, arcname=os.path.relpath(path, rootfs))
                member.uid = member.gid = 0
                member.uname = member.gname = "root"
                member.mtime = FIXED_MTIME
                if member.isreg():
                    with open(path, "rb") as content:
                        archive.addfile(member, content)
                else:
                    archive.addfile(member)
    return buffer.getvalue()


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def build(rootfs, name, entrypoint, cmd, env, user="", aliases=()):
    layer_digest, layer = blob(layer_bytes(rootfs))
    config = {
        "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine),
        "os": "linux",
        "config": {"Entrypoint": entrypoint, "Cmd": cmd, "Env": env, "WorkingDir": "/", "User": user},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    config_digest, config_data = blob(json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                   "size": len(config_data)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest,
                    "size": len(layer)}],
    }
    manifest_digest, manifest_data = blob(json.dumps(manifest, sort_keys=True).encode())
    # One index entry per name, all pointing at the same manifest: the importer creates an image for each.
    names = [name] + [alias for alias in aliases if alias != name]
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest,
            "size": len(manifest_data),
            "annotations": {"io.containerd.image.name": each, "org.opencontainers.image.ref.name": each},
        } for each in names],
    }
    entries = {"oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
               "index.json": json.dumps(index, sort_keys=True).encode()}
    for digest, data in ((layer_digest, layer), (config_digest, config_data), (manifest_digest, manifest_data)):
        entries["blobs/sha256/" + digest.split(":", 1)[1]] = data
    return entries, manifest_digest


def write_archive(entries, out):
    temporary = out + ".partial"
    with tarfile.open(temporary, mode="w") as archive:
        for directory in ("blobs", "blobs/sha256"):
            member = tarfile.TarInfo(directory)
            member.type, member.mode, member.mtime = tarfile.DIRTYPE, 0o755, FIXED_MTIME
            archive.addfile(member)
        for path, data in entries.items():
            member = tarfile.TarInfo(path)
            member.size, member.mode, member.mtime = len(data), 0o644, FIXED_MTIME
            archive.addfile(member, io.BytesIO(data))
    os.replace(temporary, out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rootfs", required=True)
    parser.add_argument("--name", required=True, help="full reference, e.g. docker.io/library/busybox:test")
    parser.add_argument("--out", required=True)
    parser.add_argument("--entrypoint", default="null", help="JSON list")
    parser.add_argument("--cmd", default="null", help="JSON list")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE, repeatable")
    parser.add_argument("--user", default="", help="UID:GID the container runs as (the Dockerfile's USER)")
    parser.add_argument("--alias", action="append", default=[], help="another full reference for the same image")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.rootfs):
        parser.error(f"--rootfs {args.rootfs}: not a directory")
    if "/" not in args.name or ":" not in args.name.rsplit("/", 1)[-1]:
        parser.error(f"--name {args.name}: give a full reference with a registry host and a tag")
    try:
        entrypoint, cmd = json.loads(args.entrypoint), json.loads(args.cmd)
    except json.JSONDecodeError as error:
        parser.error(f"--entrypoint/--cmd must be JSON lists: {error}")
    entries, digest = build(args.rootfs, args.name, entrypoint, cmd, ["PATH=/usr/local/bin:/usr/bin:/bin"] + args.env,
                            args.user, args.alias)
    write_archive(entries, args.out)
    print(f"oci_image: {args.name} {digest} -> {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
