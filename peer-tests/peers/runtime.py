"""The container runtime: for the same request, the OCI spec edits of Huawei's ascend-docker-runtime, of ours
(`ascend-ctk spec inject`, what `ascend-ctk runtime exec` does before runc) and of our CDI spec.

Compared: the device nodes (path, type, major, minor, mode, owner), the device cgroup rules, and the environment
variables each adds. Huawei's runtime writes no mounts into the spec: its prestart hook has its C tool
(ascend-docker-cli) mount the driver's files when the container starts, so mounts and hooks differ by design and are
compared no further here (docs/huawei-compatibility.md).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

from .differences import Collector, Key, compare_mappings
from .host import IN_HOST, Host

PROGRAM = "ascend-docker-runtime"
BASE_SPEC = {
    "ociVersion": "1.0.2",
    "process": {"user": {"uid": 0, "gid": 0}, "args": ["sh"], "env": ["PATH=/usr/bin:/bin"], "cwd": "/"},
    "root": {"path": "rootfs"},
    "mounts": [],
    "linux": {"resources": {"devices": [{"allow": False, "access": "rwm"}]}, "namespaces": [{"type": "mount"}]},
}


def chip_ids(host: Host) -> list[int]:
    """The numbers of the host's /dev/davinci<N> nodes: what ASCEND_VISIBLE_DEVICES names."""
    return sorted(int(entry.name[len("davinci"):]) for entry in (host.root / "dev").iterdir()
                  if entry.name.startswith("davinci") and entry.name[len("davinci"):].isdigit())


def requests(host: Host) -> list[tuple[str, dict[str, str]]]:
    """(name, environment) of each request tried on the host: one chip, two chips, a range, and no driver."""
    ids = chip_ids(host)
    if not ids:
        return []
    cases = [(f"chip {ids[0]}", {"ASCEND_VISIBLE_DEVICES": str(ids[0])})]
    if len(ids) > 1:
        cases.append((f"chips {ids[0]},{ids[-1]}", {"ASCEND_VISIBLE_DEVICES": f"{ids[0]},{ids[-1]}"}))
        cases.append((f"chips {ids[0]}-{ids[1]}", {"ASCEND_VISIBLE_DEVICES": f"{ids[0]}-{ids[1]}"}))
    cases.append((f"chip {ids[-1]} NODRV", {"ASCEND_VISIBLE_DEVICES": str(ids[-1]), "ASCEND_RUNTIME_OPTIONS": "NODRV"}))
    return cases


def _bundle(directory: Path, env: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    spec = copy.deepcopy(BASE_SPEC)
    spec["process"]["env"] += [f"{key}={value}" for key, value in env.items()]
    (directory / "config.json").write_text(json.dumps(spec))
    return directory


def _edits(spec: dict) -> dict:
    """What a spec says a container gets, in comparable form."""
    linux = spec.get("linux", {})
    nodes = {node["path"]: (node.get("type"), node.get("major"), node.get("minor"), node.get("fileMode"),
                            node.get("uid"), node.get("gid")) for node in linux.get("devices") or []}
    rules = sorted((rule.get("allow"), rule.get("type"), rule.get("major"), rule.get("minor"), rule.get("access"))
                   for rule in linux.get("resources", {}).get("devices") or [])
    env = dict(line.split("=", 1) for line in spec.get("process", {}).get("env", []) if "=" in line)
    return {"nodes": nodes, "rules": rules, "env": env}


def _run(what: str, argv: list, env: dict[str, str], cwd: Path | None = None) -> str:
    """Runs a program to its end; its standard output, or a failure naming it with its exit status and stderr."""
    result = subprocess.run([str(arg) for arg in argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"{what} failed ({result.returncode}): {result.stderr[-800:]}")
    return result.stdout


def huawei_edits(host: Host, huawei_bin: Path, bundle: Path, stub_dir: Path) -> dict:
    """Huawei's runtime edits config.json on `create`, then execs runc: a runc that only exits stands in for it."""
    env = host.environment()
    env["PATH"] = f"{stub_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    _run("Huawei's runtime", [IN_HOST, host.root, huawei_bin / "ascend-docker-runtime", "create", "--bundle", bundle,
                              "peer-test"], env, cwd=bundle)
    return _edits(json.loads((bundle / "config.json").read_text()))


def our_edits(host: Host, our_bin: Path, bundle: Path) -> dict:
    _run("ascend-ctk spec inject", [our_bin / "ascend-ctk", "spec", "inject", "--bundle", bundle, "--host-root",
                                    host.root], host.environment())
    return _edits(json.loads((bundle / "config.json").read_text()))


def cdi_edits(host: Host, our_bin: Path, env: dict[str, str]) -> dict:
    """Our CDI spec applied as a CDI-aware engine does: the spec's own edits, then each requested device's."""
    output = _run("ascend-ctk cdi generate", [our_bin / "ascend-ctk", "cdi", "generate", "--host-root", host.root,
                                              "--stdout"], host.environment())
    spec = json.loads(output)
    wanted = _expand(env["ASCEND_VISIBLE_DEVICES"])
    devices = {device["name"]: device for device in spec["devices"]}
    edits = [spec.get("containerEdits", {})] + [devices[str(n)]["containerEdits"] for n in wanted if str(n) in devices]
    missing = [n for n in wanted if str(n) not in devices]
    nodes, rules, added = {}, [(False, None, None, None, "rwm")], {}
    for edit in edits:
        for node in edit.get("deviceNodes", []):
            stat = os.stat(node.get("hostPath", node["path"]))
            major, minor = node.get("major", os.major(stat.st_rdev)), node.get("minor", os.minor(stat.st_rdev))
            nodes[node["path"]] = (node.get("type", "c"), major, minor, node.get("fileMode", 0o666), 0, 0)
            rules.append((True, node.get("type", "c"), major, minor, node.get("permissions", "rwm")))
        for line in edit.get("env", []):
            key, _, value = line.partition("=")
            added[key] = value
    base = dict(line.split("=", 1) for line in BASE_SPEC["process"]["env"]) | env
    return {"nodes": nodes, "rules": sorted(rules), "env": base | added, "missing": missing}


def _expand(value: str) -> list[int]:
    ids: list[int] = []
    for part in value.split(","):
        low, _, high = part.partition("-")
        ids.extend(range(int(low), int(high or low) + 1))
    return ids


def _compare(collector: Collector, host: str, case: str, source: str, theirs: dict, mine: dict) -> None:
    def add(kind: str, what: str, example: str) -> None:
        collector.add(Key(PROGRAM, host, kind, f"{source}:{what}"), f"{case}: {example}")

    compare_mappings(add, "device", theirs["nodes"], mine["nodes"], source=source)
    if theirs["rules"] != mine["rules"]:
        only_theirs = [rule for rule in theirs["rules"] if rule not in mine["rules"]]
        only_mine = [rule for rule in mine["rules"] if rule not in theirs["rules"]]
        if only_theirs or only_mine:
            add("value", "cgroup device rules", f"only Huawei's {only_theirs}, only {source}'s {only_mine}")
    compare_mappings(add, "env", theirs["env"], mine["env"], source=source)
    for number in mine.get("missing", []):
        add("missing", "cdi device", f"the CDI spec has no device {number}")


def compare(host: Host, huawei_bin: Path, our_bin: Path, logs: Path, collector: Collector) -> None:
    work = logs.parent / "runtime" / host.name
    stub = work / "stub"
    stub.mkdir(parents=True, exist_ok=True)
    runc = stub / "runc"
    runc.write_text("#!/bin/sh\n# Stands in for runc: the comparison wants the edited config.json only.\nexit 0\n")
    runc.chmod(0o755)
    for index, (case, env) in enumerate(requests(host)):
        theirs = huawei_edits(host, huawei_bin, _bundle(work / f"huawei-{index}", env), stub)
        _compare(collector, host.name, case, "ascend-ctk", theirs,
                 our_edits(host, our_bin, _bundle(work / f"ours-{index}", env)))
        _compare(collector, host.name, case, "cdi", theirs, cdi_edits(host, our_bin, env))
