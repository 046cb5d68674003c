"""The device plugin: Huawei's and ours, each on its own stand-in node (peer-node: the in-repo fake kubelet and a TLS
fake API server, peer-tests/harness) on the same simulated host, in plain and in Volcano mode.

Compared: the resources registered with the kubelet, the devices and their health listed to it, the Allocate response
for the first one and two healthy devices (device nodes, mounts, environment, annotations), the Node's labels and
annotations and every ConfigMap, as each side's node software leaves them; in the faults scenario the device lists,
the Node and the ConfigMaps again after the fault is cleared while the plugins run (a recovery). Ours is what our chart runs on a node: the
device plugin and the node labeller (Huawei's plugin labels the Node itself).
"""

from __future__ import annotations

import itertools
import json
import os
from concurrent.futures import ThreadPoolExecutor
import shutil
import subprocess
import time
from pathlib import Path

from .differences import Collector, Key, compare_mappings
from .host import Host, Program, free_port, wait_for

PROGRAM = "device-plugin"
NODE_NAME = "peer-node"
# What the stand-in Node has before any plugin runs: not compared.
SEEDED_LABELS = {"kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch"}
SEEDED_ANNOTATIONS = {"node.alpha.kubernetes.io/ttl", "volumes.kubernetes.io/controller-managed-attach-detach"}
# Each mode: Huawei's flags and environment, ours, and whether the stand-in binds Volcano's pods before Allocate.
# Huawei's plugin hands out device specs unless its own container runs under Huawei's runtime, which sets
# ASCEND_DOCKER_RUNTIME=True in it (mind-cluster component/ascend-device-plugin/main.go, setUseAscendDocker); then it
# hands out ASCEND_VISIBLE_DEVICES for the runtime. Ours says which with --allocate-mode (its default, CDI, is
# compared by the runtime comparison).
MODES = {
    "device-specs": ([], {}, ["--allocate-mode=device-specs"], False),
    "runtime-env": ([], {"ASCEND_DOCKER_RUNTIME": "True"}, ["--allocate-mode=runtime-env"], False),
    "volcano": (["-volcanoType=true"], {"ASCEND_DOCKER_RUNTIME": "True"}, ["--volcano", "--allocate-mode=runtime-env"],
                True),
}
# How long the device lists must hold still before the record: Huawei's plugin lists every chip healthy at its start
# and applies faults at its first health poll 5 s later (its default -listWatchPeriod), when it also writes the
# device-info ConfigMap in every mode (server/manager.go, useVolcanoNotify); the record is taken after that.
SETTLE_SECONDS = 12

# The stand-in nodes' directories: short, for the kubelet's unix sockets there (a socket path has at most 107 bytes,
# and the fake kubelet dials `<dir>/device-plugins/<endpoint>`); made and removed per run.
NODE_DIRS = Path("/run/ascend-peer-tests")
# Numbers the runs of this process: hosts are compared side by side, each run has its own directory.
_RUNS = itertools.count()

# Keys of the device-info document that carry a time or a checksum of the rest: not compared.
VOLATILE_KEYS = {"UpdateTime", "CheckCode"}


def start_node(node_dir: Path, our_bin: Path, log: Path, node_args: list[str]) -> tuple[subprocess.Popen, str]:
    """A stand-in node (peer-node with `node_args`) in `node_dir`, once it serves: (its process, its API server's
    port). The performance report's comparison (benches/scripts/beside_huawei.py) starts its nodes the same way."""
    node_dir.mkdir(parents=True, exist_ok=True)
    (node_dir / "ready").unlink(missing_ok=True)
    node = subprocess.Popen([str(our_bin / "peer-node"), "--dir", str(node_dir), "--node-name", NODE_NAME,
                             *node_args], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not (node_dir / "ready").exists():
        if node.poll() is not None or time.monotonic() > deadline:
            if node.poll() is None:
                node.kill()
                node.wait()
            raise AssertionError(f"{log.stem}: the stand-in node did not start: {log.read_text()[-800:]}")
        time.sleep(0.1)
    port = (node_dir / "ready").read_text().strip()
    if not port.isdigit():
        node.kill()
        node.wait()
        raise AssertionError(f"{log.stem}: the stand-in node's ready file holds no port: {port!r}")
    return node, port


def start_plugin(host: Host, node_dir: Path, port: str, argv: list[str], log: Path, env: dict[str, str],
                 pod_resources: bool = False) -> Program:
    """A plugin program in the host wired to the stand-in node of `node_dir` serving its API server on `port`: the
    node's kubelet directory and in-cluster files at the paths a pod has them, and with `pod_resources` the node's
    PodResources socket directory (peer-node --pod-resources)."""
    binds = [f"{node_dir / 'device-plugins'}:/var/lib/kubelet/device-plugins",
             f"{node_dir / 'serviceaccount'}:/var/run/secrets/kubernetes.io/serviceaccount",
             *([f"{node_dir / 'pod-resources'}:/var/lib/kubelet/pod-resources"] if pod_resources else [])]
    environment = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port, "NODE_NAME": NODE_NAME,
                   **env}
    return Program(host, argv, log, binds=binds, extra_env=environment)


def _run(host: Host, name: str, node_dir: Path, our_bin: Path, plugins: list[list[str]], logs: Path,
         env: dict[str, str], volcano: bool, recover_signal: Path | None) -> dict:
    """Starts a stand-in node, then the plugin programs in the host wired to it; returns the node's record. With
    `recover_signal` the node writes `faulted` in its directory after the first part of its record and waits for that
    file before the second (peer-tests/harness)."""
    node_dir.mkdir(parents=True, exist_ok=True)
    (node_dir / "record.json").unlink(missing_ok=True)
    record = node_dir / "record.json"
    node, port = start_node(node_dir, our_bin, logs / f"{name}.peer-node.log",
                            ["--allocate", "1", "--allocate", "2", "--out", str(record),
                             "--settle-seconds", str(SETTLE_SECONDS),
                             *(["--volcano"] if volcano else []),
                             *(["--recover-signal", str(recover_signal)] if recover_signal else [])])
    programs = [start_plugin(host, node_dir, port, argv, logs / f"{name}.{Path(argv[0]).name}.out", env)
                for argv in plugins]
    try:
        wait_for(f"{name}: the stand-in node's record", lambda: node.poll() is not None, programs[0], 180)
        if node.returncode != 0:
            raise AssertionError(f"{name}: {(logs / f'{name}.peer-node.log').read_text()[-1200:]}")
        return json.loads(record.read_text())
    finally:
        for program in programs:
            program.stop()
        if node.poll() is None:
            node.kill()
            node.wait()


def lay_image_files(host: Host, huawei_bin: Path) -> None:
    """Huawei's plugin reads its fault policy (faultCode.json ...) from /usr/local, where its image holds them
    (mind-cluster component/ascend-device-plugin/build/Dockerfile); in the mount namespace /usr/local is the fake
    host's, so they are laid there. Our programs read none of them."""
    for file in (huawei_bin / "device-plugin-files").iterdir():
        target = host.root / "usr" / "local" / file.name
        if not target.exists():
            shutil.copyfile(file, target)
            target.chmod(0o440)  # the mode its image gives them; Huawei's reader refuses files others can read or write


def _records(host: Host, huawei_bin: Path, our_bin: Path, logs: Path, mode: str, work: Path,
             recover_signal: Path | None) -> tuple[dict, dict]:
    huawei_flags, huawei_env, our_flags, volcano = MODES[mode]
    name = f"{host.label()}-{mode}"
    huawei_log = logs / f"{name}.huawei-device-plugin.log"
    # Both sides at once, each on its own stand-in node: the run takes one side's time.
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs = pool.submit(_run, host, f"{name}.huawei", work / "huawei", our_bin,
                             [[str(huawei_bin / "ascend-device-plugin"), f"-logFile={huawei_log}", *huawei_flags]],
                             logs, huawei_env, volcano, recover_signal)
        mine = pool.submit(_run, host, f"{name}.ours", work / "ours", our_bin,
                           [[str(our_bin / "ascend-device-plugin"), f"--listen=127.0.0.1:{free_port()}", *our_flags],
                            [str(our_bin / "ascend-node-labeller"), "--interval=1s"]], logs, {}, volcano,
                           recover_signal)
        return theirs.result(), mine.result()


def _recover_once_faulted(host: Host, work: Path, signal: Path, runs: list) -> None:
    """Clears the host's fault once every stand-in node has recorded the faulted state (or a run has ended: failed),
    then signals the nodes to record again."""
    deadline = time.monotonic() + 120
    nodes = 2 * len(MODES)
    try:
        while len(list(work.glob("*/*/faulted"))) < nodes:
            if any(run.done() for run in runs) or time.monotonic() > deadline:
                return
            time.sleep(0.2)
        host.recover()
    finally:
        signal.touch()


def _flatten(value, prefix: str, out: dict) -> dict:
    """A JSON document as path -> leaf, without its volatile keys; a string holding JSON is read as JSON."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in VOLATILE_KEYS:
                _flatten(inner, f"{prefix}.{key}" if prefix else key, out)
    else:
        out[prefix] = value
    return out


def _data_differences(add, what: str, theirs: dict, mine: dict) -> None:
    compare_mappings(add, what, _flatten(theirs, "", {}), _flatten(mine, "", {}))


def _allocation(record: dict, count: int) -> dict | None:
    return next((a for a in record["allocations"] if len(a["ids"]) == count), None)


def compare_records(host: str, mode: str, theirs: dict, mine: dict, collector: Collector) -> None:
    def add(kind: str, what: str, example: str) -> None:
        collector.add(Key(PROGRAM, f"{host}+{mode}", kind, what), example)

    their_resources = sorted(r["resource"] for r in theirs["registrations"])
    my_resources = sorted(r["resource"] for r in mine["registrations"])
    if their_resources != my_resources:
        add("value", "registered resources", f"Huawei {their_resources}, ours {my_resources}")
    _compare_devices(add, mode, their_resources, theirs, mine)
    _compare_allocations(add, theirs, mine)
    _compare_api_objects(add, theirs, mine)
    if "recovered" in theirs or "recovered" in mine:
        # What follows the fault's clearing is told apart by its host key (`<host>+recovered+<mode>`), so that the
        # known differences' host globs apply to it as to the faulted state.
        def add_recovered(kind: str, what: str, example: str) -> None:
            collector.add(Key(PROGRAM, f"{host}+recovered+{mode}", kind, what), example)

        if "recovered" not in theirs or "recovered" not in mine:
            add_recovered("missing", "record", f"Huawei {'recovered' in theirs}, ours {'recovered' in mine}")
            return
        _compare_devices(add_recovered, mode, their_resources, theirs["recovered"], mine["recovered"])
        _compare_api_objects(add_recovered, theirs["recovered"], mine["recovered"])


def _compare_devices(add, mode: str, resources: list[str], theirs: dict, mine: dict) -> None:
    """The devices and their health as listed to the kubelet."""
    for resource in resources:
        their_devices = {d["id"]: d["health"] for d in theirs["devices"].get(resource, [])}
        my_devices = {d["id"]: d["health"] for d in mine["devices"].get(resource, [])}
        if mode == "volcano":
            # In Volcano mode the ids Huawei's plugin lists to the kubelet are slots, not chips: it reports an
            # unhealthy chip under another chip's name ("inner device: Ascend910-1 Unhealthy, real device:
            # Ascend910-5 Unhealthy", plugin.go ListAndWatch), since the pod's annotation, not the kubelet's ids, says
            # which chips a container gets. What the kubelet can act on is the set of ids and how many are healthy.
            compare_mappings(add, f"{resource} device", dict.fromkeys(their_devices, "listed"),
                             dict.fromkeys(my_devices, "listed"))
            counts = lambda devices: {health: list(devices.values()).count(health) for health in set(devices.values())}
            compare_mappings(add, f"{resource} devices", counts(their_devices), counts(my_devices))
        else:
            compare_mappings(add, f"{resource} device", their_devices, my_devices)


def _compare_allocations(add, theirs: dict, mine: dict) -> None:
    """The Allocate responses for the first one and two healthy devices."""
    for count in (1, 2):
        their_allocation, my_allocation = _allocation(theirs, count), _allocation(mine, count)
        if their_allocation is None or my_allocation is None:
            if their_allocation is not my_allocation:
                add("missing", f"allocate {count}", f"Huawei {their_allocation}, ours {my_allocation}")
            continue
        if their_allocation["ids"] != my_allocation["ids"]:
            add("value", f"allocate {count} ids", f"Huawei {their_allocation['ids']}, ours {my_allocation['ids']}")
        if "error" in their_allocation or "error" in my_allocation:
            add("value", f"allocate {count} error", f"Huawei {their_allocation.get('error')}, ours {my_allocation.get('error')}")
            continue
        theirs_c, mine_c = their_allocation["containers"][0], my_allocation["containers"][0]
        devices = lambda c: {d["container_path"]: (d["host_path"], d["permissions"]) for d in c["devices"]}
        mounts = lambda c: {m["container_path"]: (m["host_path"], m["read_only"]) for m in c["mounts"]}
        compare_mappings(add, f"allocate {count} device", devices(theirs_c), devices(mine_c))
        compare_mappings(add, f"allocate {count} mount", mounts(theirs_c), mounts(mine_c))
        compare_mappings(add, f"allocate {count} env", theirs_c["envs"], mine_c["envs"])
        compare_mappings(add, f"allocate {count} annotation", theirs_c["annotations"], mine_c["annotations"])
        ignored = {their_allocation["resource"], "predicate-time"}
        compare_mappings(add, f"allocate {count} pod annotation", their_allocation.get("pod_annotations"),
                             my_allocation.get("pod_annotations"), ignored)
        if theirs_c["cdi_devices"] != mine_c["cdi_devices"]:
            add("value", f"allocate {count} cdi devices", f"Huawei {theirs_c['cdi_devices']}, ours {mine_c['cdi_devices']}")


def _compare_api_objects(add, theirs: dict, mine: dict) -> None:
    """The Node's labels and annotations and every ConfigMap."""
    compare_mappings(add, f"node label", theirs["node"]["labels"], mine["node"]["labels"], SEEDED_LABELS)
    compare_mappings(add, f"node annotation", theirs["node"]["annotations"], mine["node"]["annotations"],
                     SEEDED_ANNOTATIONS)
    maps = lambda record: {f"{m['namespace']}/{m['name']}": m for m in record["configmaps"]}
    their_maps, my_maps = maps(theirs), maps(mine)
    for name in sorted(set(their_maps) | set(my_maps)):
        if name not in my_maps:
            add("missing", f"configmap {name}", "Huawei's plugin writes it")
        elif name not in their_maps:
            add("extra", f"configmap {name}", "ours writes it")
        else:
            compare_mappings(add, f"configmap {name} label", their_maps[name]["labels"],
                             my_maps[name]["labels"])
            _data_differences(add, f"configmap {name}", their_maps[name]["data"] or {},
                              my_maps[name]["data"] or {})


def compare(host: Host, huawei_bin: Path, our_bin: Path, logs: Path, collector: Collector) -> None:
    """Both plugins in each mode; in the faults scenario, also after the fault is cleared while they run."""
    lay_image_files(host, huawei_bin)
    work = NODE_DIRS / f"{os.getpid()}-{next(_RUNS)}"
    shutil.rmtree(work, ignore_errors=True)
    signal = work / "recover" if host.scenario == "faults" else None
    try:
        # The modes at once, each pair of plugins on its own stand-in nodes: the run takes about one mode's time.
        with ThreadPoolExecutor(max_workers=len(MODES)) as pool:
            records = {mode: pool.submit(_records, host, huawei_bin, our_bin, logs, mode, work / mode, signal)
                       for mode in MODES}
            if signal is not None:
                _recover_once_faulted(host, work, signal, list(records.values()))
            for mode, record in records.items():
                theirs, mine = record.result()
                compare_records(host.label(), mode, theirs, mine, collector)
    finally:
        # Also when a side failed: the stand-in nodes' sockets and in-cluster files go with the run.
        shutil.rmtree(work, ignore_errors=True)
