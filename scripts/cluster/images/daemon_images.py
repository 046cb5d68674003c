#!/usr/bin/env python3
"""Builds our daemons' images for the test cluster from deploy/docker/*.Dockerfile, without a Docker engine.

Each Dockerfile's builder stage runs `cargo build --release --locked -p ascend-programs --no-default-features
--features F --bin B`, may relink one binary with other code-generation flags (`cargo rustc ... --bin B -- FLAGS`,
as the static ascend-ctk-hook), and its runtime stage copies the binaries to /usr/local/bin, sets USER and an exec-form
ENTRYPOINT. This reads exactly those lines, runs one release build for all the images (the union of the features
and binaries), and lays out each image's root filesystem as the Dockerfile's runtime stage would: the binaries, and
in place of debian:bookworm-slim the shared libraries they and the simulated libdcmi.so load (ldd), from this
machine's Debian 12, which is the same release. The image is named as the manifests name it
(`ascend-device-plugin:0.1.0` is `docker.io/library/ascend-device-plugin:0.1.0`), and also by every name the plain
manifests of deploy/kubernetes give it (the Helm chart's placeholder registry), so that the manifests apply as they
are; packed by oci_image.py.

    daemon_images.py --out DIR [--repo ROOT] [--also-feature F --also-bin B]...
        writes DIR/<image>.tar and prints each image's name; --also-* builds host tools in the same cargo run
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import oci_image  # noqa: E402


def cargo_steps(line):
    """The `cargo build` and `cargo rustc` commands of one RUN line: (subcommand, its words), in order."""
    steps = []
    for command in line.split("&&"):
        words = shlex.split(command)
        for index, word in enumerate(words[:-1]):
            if word == "cargo" and words[index + 1] in ("build", "rustc"):
                steps.append((words[index + 1], words[index + 2:]))
                break
    return steps


def dockerfile_plan(path):
    """(features, binaries, relinks, copied, entrypoint, user) from one Dockerfile, joining continued lines; relinks
    are (binary, rustc flags) of its `cargo rustc --bin B -- FLAGS` steps."""
    text = re.sub(r"\\\n", " ", path.read_text())
    features, binaries, relinks, copied, entrypoint, user = set(), [], [], [], None, ""
    for line in text.splitlines():
        line = line.strip()
        steps = cargo_steps(line) if "cargo " in line else []
        for subcommand, words in steps:
            split = words.index("--") if "--" in words else len(words)
            cargo_words, rustc_flags = words[:split], words[split + 1:]
            for flag, value in zip(cargo_words, cargo_words[1:] + [""]):
                if flag == "--features":
                    features.update(value.split(","))
                elif flag == "--bin":
                    binaries.append(value)
                    if subcommand == "rustc":
                        relinks.append((value, rustc_flags))
        if steps:
            continue
        if line.startswith("COPY --from=builder"):
            source, target = line.split()[-2:]
            copied.append((Path(source).name, target))
        elif line.startswith("ENTRYPOINT"):
            entrypoint = json.loads(line[len("ENTRYPOINT"):].strip())
        elif line.startswith("USER"):
            user = line.split()[1]
    if not binaries:
        binaries = [name for name, _ in copied]
    if not features or not copied or entrypoint is None:
        raise SystemExit(f"daemon_images: {path}: no cargo build features, COPY --from=builder or ENTRYPOINT found")
    return features, binaries, relinks, copied, entrypoint, user


def shared_libraries(binary):
    """The absolute paths ldd names for `binary`, the dynamic loader included; none for a static executable."""
    listed = subprocess.run(["ldd", str(binary)], check=False, capture_output=True, text=True)
    if listed.returncode != 0 and "not a dynamic executable" in listed.stdout + listed.stderr:
        return []
    if listed.returncode != 0:
        raise SystemExit(f"daemon_images: ldd {binary} failed: {listed.stderr.strip()}")
    output = listed.stdout
    paths = []
    for line in output.splitlines():
        match = re.search(r"(/\S+) \(0x", line)
        if match:
            paths.append(match.group(1))
    return paths


def full_reference(name):
    """`name` as containerd stores it: Docker's normalisation (a first component without a dot, colon or `localhost`
    is not a registry host, and an official image lives under library/)."""
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return name
    return f"docker.io/{name}" if rest else f"docker.io/library/{name}"


def manifest_aliases(repo, image, version):
    """The references the plain manifests of deploy/kubernetes (the Helm chart's renders) give `image`: the same
    repository name under their registry, such as the chart's placeholder registry.example.com/ascend-rs."""
    aliases = set()
    for path in (repo / "deploy/kubernetes").glob("*.yaml"):
        for reference in re.findall(r"^\s*image:\s*(\S+)\s*$", path.read_text(), re.MULTILINE):
            name, _, tag = reference.rpartition(":")
            if name.rsplit("/", 1)[-1] == image and tag:
                aliases.add(f"{full_reference(name)}:{tag}")
    aliases.discard(f"{full_reference(image)}:{version}")
    return sorted(aliases)


def workspace_version(repo):
    metadata = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=repo,
                                         check=True, capture_output=True, text=True).stdout)
    return next(package["version"] for package in metadata["packages"] if package["name"] == "ascend-programs")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--repo", type=Path, default=HERE.parents[2])
    parser.add_argument("--also-feature", action="append", default=[], help="another ascend-programs feature to build")
    parser.add_argument("--also-bin", action="append", default=[], help="another ascend-programs binary to build")
    args = parser.parse_args(argv)
    repo = args.repo
    plans = {path.name.removesuffix(".Dockerfile"): dockerfile_plan(path)
             for path in sorted((repo / "deploy/docker").glob("*.Dockerfile"))}
    features = sorted(set().union(*(plan[0] for plan in plans.values()), args.also_feature))
    binaries = sorted({binary for plan in plans.values() for binary in plan[1]} | set(args.also_bin))
    # One build for everything: the images' binaries, the host's tools and the simulator with its hccn_tool (which
    # `dcmi-sim fake-host` installs beside it, as a driver installs its own; Huawei's device plugin runs it), so that no
    # dependency is compiled twice for two feature sets.
    command = ["cargo", "build", "--release", "--locked", "-p", "ascend-programs", "-p", "dcmi-sim",
               "--no-default-features", "--features", ",".join(f"ascend-programs/{feature}" for feature in features),
               "--lib", "--bin", "dcmi-sim", "--bin", "hccn_tool"]
    command += [flag for binary in binaries for flag in ("--bin", binary)]
    print("daemon_images:", " ".join(command), flush=True)
    subprocess.run(command, cwd=repo, check=True)
    # The Dockerfiles' relinks, with the same features as the build so that only the binary itself is linked again.
    relinks = {binary: flags for plan in plans.values() for binary, flags in plan[2]}
    for binary, flags in sorted(relinks.items()):
        relink = ["cargo", "rustc", "--release", "--locked", "-p", "ascend-programs", "--no-default-features",
                  "--features", ",".join(features), "--bin", binary, "--", *flags]
        print("daemon_images:", " ".join(relink), flush=True)
        subprocess.run(relink, cwd=repo, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target")) / "release"
    simulator = target / "libdcmi_sim.so"
    version = workspace_version(repo)
    args.out.mkdir(parents=True, exist_ok=True)
    for image, (_, _, _, copied, entrypoint, user) in plans.items():
        rootfs = args.out / f"{image}.rootfs"
        shutil.rmtree(rootfs, ignore_errors=True)
        libraries = set(shared_libraries(simulator))
        for binary, destination in copied:
            placed = rootfs / destination.lstrip("/")
            placed.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target / binary, placed)
            libraries.update(shared_libraries(target / binary))
        for library in sorted(libraries):
            placed = rootfs / library.lstrip("/")
            placed.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(library), placed)
        for directory in ("tmp", "etc", "proc", "sys", "dev"):
            (rootfs / directory).mkdir(exist_ok=True)
        (rootfs / "tmp").chmod(0o1777)
        (rootfs / "etc/passwd").write_text("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532::/:/sbin/nologin\n")
        (rootfs / "etc/group").write_text("root:x:0:\nnonroot:x:65532:\n")
        name = f"{full_reference(image)}:{version}"
        aliases = manifest_aliases(repo, image, version)
        entries, digest = oci_image.build(str(rootfs), name, entrypoint, None,
                                          ["PATH=/usr/local/bin:/usr/bin:/bin"], user, aliases)
        oci_image.write_archive(entries, str(args.out / f"{image}.tar"))
        shutil.rmtree(rootfs)
        print(f"daemon_images: {' '.join([name] + aliases)} {digest}")


if __name__ == "__main__":
    main(sys.argv[1:])
