#!/usr/bin/env python3
"""Static checks of the Dockerfiles in deploy/docker, for a CI machine that has no Docker engine and no hadolint.

For each Dockerfile it checks that:
- every base image is pinned to a tag or digest (no implicit or explicit `latest`), and stage names are unique;
- every `COPY --from=<stage>` names an earlier stage, and the copied path is produced in that stage;
- every `cargo build` uses `--locked` and names packages (`-p`) and binaries (`--bin`) the workspace builds
  (from `cargo metadata`, or the JSON given with --metadata);
- the final stage copies the binary its exec-form ENTRYPOINT runs, and sets USER; a root USER must be explained by
  the comment right above it;
- a `<name>.Dockerfile.dockerignore` next to it keeps `target/` out of the build context;
- the EXPOSEd port is the containerPort of the container running that image in the manifests under deploy/kubernetes
  (base and overlays).

Usage: check_dockerfiles.py [--metadata FILE] [--manifests DIR] DOCKERFILE...
Exit status 0 when every check passes, 1 otherwise (each problem printed with its file and line).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT_USERS = ("0", "root")


@dataclass
class Instruction:
    """One Dockerfile instruction with continuation lines joined, and the comment lines right above it."""

    keyword: str
    arguments: str
    line: int
    comments: list[str] = field(default_factory=list)


@dataclass
class Stage:
    """A build stage: its FROM line and its instructions."""

    image: str
    name: str | None
    index: int
    line: int
    instructions: list[Instruction] = field(default_factory=list)


@dataclass
class Workspace:
    """What the workspace can build: package names and, per package, binary names."""

    binaries: dict[str, set[str]]

    @classmethod
    def from_metadata(cls, metadata: dict) -> "Workspace":
        binaries = {}
        for package in metadata.get("packages", []):
            binaries[package["name"]] = {t["name"] for t in package.get("targets", []) if "bin" in t.get("kind", [])}
        return cls(binaries)

    def all_binaries(self) -> set[str]:
        return set().union(*self.binaries.values()) if self.binaries else set()


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions in order. Parser directives and comments are kept as the comments of the next instruction."""
    instructions: list[Instruction] = []
    comments: list[str] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending:
            if not stripped:
                comments = []
                continue
            if stripped.startswith("#"):
                comments.append(stripped.lstrip("#").strip())
                continue
            start = number
        elif stripped.startswith("#"):
            continue  # comment lines inside a continued instruction are dropped, as Docker does
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined = " ".join(part for part in pending if part)
        keyword, _, arguments = joined.partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip(), start, comments))
        pending, comments = [], []
    if pending:
        instructions.append(Instruction("ERROR", "unterminated line continuation", start))
    return instructions


def split_stages(instructions: list[Instruction]) -> tuple[list[Stage], list[str]]:
    stages: list[Stage] = []
    problems: list[str] = []
    for instruction in instructions:
        if instruction.keyword == "ERROR":
            problems.append(f"line {instruction.line}: {instruction.arguments}")
        elif instruction.keyword == "FROM":
            words = [w for w in instruction.arguments.split() if not w.startswith("--")]
            name = None
            if len(words) == 3 and words[1].lower() == "as":
                name = words[2]
            elif len(words) != 1:
                problems.append(f"line {instruction.line}: FROM {instruction.arguments!r} is not 'image [AS name]'")
            stages.append(Stage(words[0] if words else "", name, len(stages), instruction.line))
        elif not stages:
            if instruction.keyword != "ARG":
                problems.append(f"line {instruction.line}: {instruction.keyword} before the first FROM")
        else:
            stages[-1].instructions.append(instruction)
    if not stages:
        problems.append("no FROM instruction")
    return stages, problems


def image_is_pinned(image: str) -> bool:
    if "@sha256:" in image:
        return True
    last_part = image.rsplit("/", 1)[-1]
    return ":" in last_part and not last_part.endswith(":latest")


def copy_from(instruction: Instruction) -> tuple[str | None, list[str]]:
    """(the --from value or None, the other words) of a COPY instruction."""
    words = shlex.split(instruction.arguments)
    source = None
    rest = []
    for word in words:
        if word.startswith("--from="):
            source = word.split("=", 1)[1]
        elif not word.startswith("--"):
            rest.append(word)
    return source, rest


def check_stages(stages: list[Stage]) -> list[str]:
    problems = []
    names: dict[str, Stage] = {}
    for stage in stages:
        if not image_is_pinned(stage.image) and stage.image not in names:
            problems.append(f"line {stage.line}: base image {stage.image!r} is not pinned to a tag or digest")
        if stage.name:
            if stage.name in names:
                problems.append(f"line {stage.line}: stage name {stage.name!r} used twice")
            names[stage.name] = stage
        for instruction in stage.instructions:
            if instruction.keyword != "COPY":
                continue
            source_stage, paths = copy_from(instruction)
            if source_stage is None:
                continue
            earlier = names.get(source_stage)
            if earlier is None and source_stage.isdigit() and int(source_stage) < stage.index:
                earlier = stages[int(source_stage)]
            if earlier is None or earlier.index >= stage.index:
                known = ", ".join(s.name or str(s.index) for s in stages[:stage.index]) or "none"
                problems.append(f"line {instruction.line}: COPY --from={source_stage} names no earlier stage "
                                f"(stages: {known})")
                continue
            produced = " ".join(i.arguments for i in earlier.instructions if i.keyword in ("RUN", "COPY", "ADD"))
            for path in paths[:-1]:
                if path not in produced:
                    problems.append(f"line {instruction.line}: COPY --from={source_stage} {path}: no RUN/COPY of "
                                    f"stage {source_stage!r} mentions {path}")
    return problems


def check_cargo_builds(stages: list[Stage], workspace: Workspace) -> list[str]:
    problems = []
    for stage in stages:
        for instruction in stage.instructions:
            if instruction.keyword != "RUN" or "cargo build" not in instruction.arguments:
                continue
            for command in re.split(r"&&|;|\|\|", instruction.arguments):
                words = shlex.split(command)
                if "cargo" not in words or "build" not in words:
                    continue
                problems.extend(check_cargo_words(words, instruction.line, workspace))
    return problems


def check_cargo_words(words: list[str], line: int, workspace: Workspace) -> list[str]:
    problems = []
    if "--locked" not in words:
        problems.append(f"line {line}: cargo build without --locked (the image would not build what Cargo.lock pins)")
    packages = option_values(words, ("-p", "--package"))
    binaries = option_values(words, ("--bin",))
    for package in packages:
        if package not in workspace.binaries:
            problems.append(f"line {line}: package {package!r} is not a workspace member "
                            f"({', '.join(sorted(workspace.binaries))})")
    allowed = set().union(*(workspace.binaries.get(p, set()) for p in packages)) if packages \
        else workspace.all_binaries()
    for binary in binaries:
        if binary not in allowed:
            problems.append(f"line {line}: binary {binary!r} is not built by "
                            f"{'package ' + ', '.join(packages) if packages else 'the workspace'} "
                            f"(it builds: {', '.join(sorted(allowed)) or 'nothing'})")
    if not binaries:
        problems.append(f"line {line}: cargo build without --bin builds every binary; name the one the image runs")
    return problems


def option_values(words: list[str], options: tuple[str, ...]) -> list[str]:
    values = []
    for index, word in enumerate(words):
        if word in options and index + 1 < len(words):
            values.append(words[index + 1])
        for option in options:
            if option.startswith("--") and word.startswith(option + "="):
                values.append(word.split("=", 1)[1])
    return values


def check_final_stage(stage: Stage) -> list[str]:
    problems = []
    entrypoints = [i for i in stage.instructions if i.keyword == "ENTRYPOINT"]
    if not entrypoints:
        problems.append(f"line {stage.line}: the final stage has no ENTRYPOINT")
    else:
        try:
            command = json.loads(entrypoints[-1].arguments)
        except json.JSONDecodeError:
            command = None
        if not isinstance(command, list) or not command or not all(isinstance(w, str) for w in command):
            problems.append(f"line {entrypoints[-1].line}: ENTRYPOINT must be in exec form "
                            "([\"/path\", ...]) so that signals reach the daemon")
        else:
            destinations = [copy_from(i)[1][-1] for i in stage.instructions
                            if i.keyword == "COPY" and copy_from(i)[1]]
            if command[0] not in destinations:
                problems.append(f"line {entrypoints[-1].line}: ENTRYPOINT runs {command[0]}, which no COPY of the "
                                f"final stage puts there (copies to: {', '.join(destinations) or 'nothing'})")
    users = [i for i in stage.instructions if i.keyword == "USER"]
    if not users:
        problems.append(f"line {stage.line}: the final stage sets no USER; say which user the daemon runs as")
    else:
        user = users[-1]
        if user.arguments.split(":")[0] in ROOT_USERS and not any("root" in c.lower() for c in user.comments):
            problems.append(f"line {user.line}: USER {user.arguments} runs as root; explain why in the comment "
                            "right above it")
    return problems


def exposed_ports(stage: Stage) -> set[int]:
    ports = set()
    for instruction in stage.instructions:
        if instruction.keyword == "EXPOSE":
            for word in instruction.arguments.split():
                number = word.split("/")[0]
                if number.isdigit():
                    ports.add(int(number))
    return ports


def manifest_ports(manifests: Path, image_name: str) -> set[int] | None:
    """containerPorts of containers whose image is `[registry/path/]image_name[:tag]` in the manifests; None if no
    container runs it."""
    found = None
    for path in sorted(manifests.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if not isinstance(document, dict):
                continue
            pod = (document.get("spec") or {}).get("template", {}).get("spec", {})
            for container in pod.get("containers", []) or []:
                image = str(container.get("image", ""))
                if image.split("@")[0].rsplit(":", 1)[0].rsplit("/", 1)[-1] == image_name:
                    found = found or set()
                    found.update(p["containerPort"] for p in container.get("ports", []) or [])
    return found


def check_dockerfile(path: Path, workspace: Workspace, manifests: Path | None) -> list[str]:
    stages, problems = split_stages(parse_dockerfile(path.read_text()))
    if stages:
        problems += check_stages(stages)
        problems += check_cargo_builds(stages, workspace)
        problems += check_final_stage(stages[-1])
    ignore = path.with_name(path.name + ".dockerignore")
    if not ignore.is_file():
        problems.append(f"no {ignore.name}: the build context would include target/")
    elif not any(line.strip().rstrip("/") in ("target", "/target", "**/target")
                 for line in ignore.read_text().splitlines()):
        problems.append(f"{ignore.name} does not exclude target/")
    if manifests is not None and stages and path.name.endswith(".Dockerfile"):
        image_name = path.name[: -len(".Dockerfile")]
        ports = manifest_ports(manifests, image_name)
        if ports is None:
            problems.append(f"no container in {manifests} runs image {image_name!r}")
        elif exposed_ports(stages[-1]) != ports:
            problems.append(f"EXPOSE {sorted(exposed_ports(stages[-1]))} differs from the containerPorts "
                            f"{sorted(ports)} of {image_name} in {manifests}")
    return [f"{path}: {problem}" for problem in problems]


def load_workspace(metadata_file: Path | None) -> Workspace:
    if metadata_file is not None:
        return Workspace.from_metadata(json.loads(metadata_file.read_text()))
    result = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"check_dockerfiles: cargo metadata failed: {result.stderr.strip()}")
    return Workspace.from_metadata(json.loads(result.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dockerfiles", nargs="+", type=Path)
    parser.add_argument("--metadata", type=Path, help="cargo metadata JSON (default: run cargo metadata)")
    parser.add_argument("--manifests", type=Path, help="directory of Kubernetes manifests to cross-check ports with")
    args = parser.parse_args(argv)
    workspace = load_workspace(args.metadata)
    problems = []
    for dockerfile in args.dockerfiles:
        problems += check_dockerfile(dockerfile, workspace, args.manifests)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"check_dockerfiles: {len(args.dockerfiles)} Dockerfile(s) pass")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
