"""Hot reset: Huawei's device plugin with its hot-reset manager on and ours with chips that heal, each on its own
stand-in node (peer-node --follow-seconds --pod-resources) on the same simulated host, a chip faulted with a code both
fault policies grade as a reset (RestartNPU) and every chip free of processes and pods.

Each mode pairs Huawei's -hotReset with our --recovery-mode: 0 with inference, 2 with offline-training. Both keep
Huawei's numbers (60 s idle, a boot wait of up to 180 s). Compared, from each node's timeline of the device lists:
which devices are listed unhealthy at some time (the faulty chip, and what is withheld while it is reset), whether
each device ends healthy (the chip offered again), and when the faulty chip is offered again (seconds after its node
was ready; a gap over OFFERED_AGAIN_TOLERANCE is a difference). Each run prints its times.

The simulator runs in each plugin's own process: each side resets its own copy of the chip, and the fault, raised by
the overlay before the plugins start, is cleared only by that side's reset.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .device_plugin import NODE_DIRS, SETTLE_SECONDS, start_node, start_plugin
from .differences import Collector, Key, compare_mappings
from .host import Host, free_port, wait_for

PROGRAM = "hot-reset"
# Huawei's flags and ours, per mode (mind-cluster component/ascend-device-plugin/main.go, -hotReset: -1 off,
# 0 inference, 2 offline training).
MODES = {
    "inference": (["-hotReset=0"], ["--recovery-mode=inference"]),
    "offline-training": (["-hotReset=2"], ["--recovery-mode=offline-training"]),
}
# A RestartNPU code in Huawei's faultCode.json and in ours (ascend-dcmi's fault_policy.rs): a reset clears it.
FAULT_CODE = 0x80E24E00
# How long a node follows the device lists: Huawei's 60 s idle (hot_reset_manager.go, idleWaitSeconds) after its
# first health poll, its 5 s rounds, the boot, and room for a second try.
FOLLOW_SECONDS = 200
# How far apart the two sides may offer the chip again: both wait 60 s of idle, Huawei decides in 5 s rounds
# (-listWatchPeriod) and ours withdraws the group 2 s before its reset.
OFFERED_AGAIN_TOLERANCE = 15.0
_RUNS = itertools.count()


def fault_overlay(chips: int, faulty: int) -> str:
    """The simulator overlay: chip `faulty` unhealthy with FAULT_CODE, every chip without processes."""
    entries = []
    for logic_id in range(chips):
        fault = f"health = 2\nfaults = [{FAULT_CODE:#x}]\n" if logic_id == faulty else ""
        entries.append(f"[[chip]]\nlogic_id = {logic_id}\n{fault}process = []\n")
    return "\n".join(entries)


def _write_overlay(host: Host, text: str) -> None:
    partial = host.overlay.with_suffix(".partial")
    partial.write_text(text)
    partial.rename(host.overlay)


def _run(host: Host, name: str, node_dir: Path, our_bin: Path, argv: list[str], logs: Path) -> dict:
    """A stand-in node serving PodResources, the plugin in the host wired to it; the node's record with its
    timeline."""
    record, node_log = node_dir / "record.json", logs / f"{name}.peer-node.log"
    node, port = start_node(node_dir, our_bin, node_log, ["--out", str(record), "--settle-seconds",
                                                          str(SETTLE_SECONDS), "--follow-seconds", str(FOLLOW_SECONDS),
                                                          "--pod-resources"])
    program = None
    try:
        program = start_plugin(host, node_dir, port, argv, logs / f"{name}.{Path(argv[0]).name}.out", {},
                               pod_resources=True)
        wait_for(f"{name}: the stand-in node's record", lambda: node.poll() is not None, program,
                 FOLLOW_SECONDS + 120)
        if node.returncode != 0:
            raise AssertionError(f"{name}: {node_log.read_text()[-1200:]}")
        return json.loads(record.read_text())
    finally:
        if program is not None:
            program.stop()
        if node.poll() is None:
            node.kill()
            node.wait()


def decisions(timeline: list[dict]) -> dict:
    """What a plugin's recovery did, from its node's timeline: `withheld`, the devices listed unhealthy at some time;
    `final`, each device's last health; `offered_again`, when each withheld device that ends healthy last became
    healthy (seconds after its node was ready)."""
    final: dict[str, str] = {}
    withheld: set[str] = set()
    offered_again: dict[str, float] = {}
    for change in timeline:
        device, health = change["id"], change["health"]
        final[device] = health
        if health != "Healthy":
            withheld.add(device)
            offered_again.pop(device, None)
        elif device in withheld:
            offered_again[device] = change["at"]
    return {"withheld": sorted(withheld), "final": final, "offered_again": offered_again}


def compare_decisions(host: str, mode: str, theirs: dict, mine: dict, collector: Collector) -> str:
    """The differences between two plugins' decisions; returns a line with both sides' figures."""
    def add(kind: str, what: str, example: str) -> None:
        collector.add(Key(PROGRAM, f"{host}+{mode}", kind, what), example)

    if theirs["withheld"] != mine["withheld"]:
        add("value", "withheld devices", f"Huawei {theirs['withheld']}, ours {mine['withheld']}")
    compare_mappings(add, "final health", theirs["final"], mine["final"])
    for device in sorted(set(theirs["offered_again"]) | set(mine["offered_again"])):
        their_at, my_at = theirs["offered_again"].get(device), mine["offered_again"].get(device)
        if their_at is None or my_at is None:
            continue  # a device offered again by one side only ends unhealthy on the other: "final health"
        if abs(their_at - my_at) > OFFERED_AGAIN_TOLERANCE:
            add("value", f"offered again {device}", f"Huawei at {their_at:g} s, ours at {my_at:g} s")
    return (f"{PROGRAM} on {host}+{mode}: withheld Huawei {theirs['withheld']}, ours {mine['withheld']}; offered "
            f"again Huawei {theirs['offered_again']}, ours {mine['offered_again']}")


def compare(host: Host, huawei_bin: Path, our_bin: Path, logs: Path, collector: Collector) -> None:
    """Both plugins in each mode at once, on the host with one chip faulted; the host's overlay is removed after."""
    # Huawei's plugin reads its fault policy from /usr/local, where its image has the files (device_plugin.py).
    local = host.root / "usr" / "local"
    for file in (huawei_bin / "device-plugin-files").iterdir():
        if not (local / file.name).exists():
            shutil.copyfile(file, local / file.name)
            (local / file.name).chmod(0o440)  # its reader refuses files others may read
    chips = len(list((host.root / "dev").glob("davinci[0-9]*")))
    _write_overlay(host, fault_overlay(chips, 1 if chips > 1 else 0))
    work = NODE_DIRS / f"hot-reset-{os.getpid()}-{next(_RUNS)}"
    shutil.rmtree(work, ignore_errors=True)
    label = host.label()
    try:
        with ThreadPoolExecutor(max_workers=2 * len(MODES)) as pool:
            runs = {}
            for mode, (huawei_flags, our_flags) in MODES.items():
                name = f"{label}-{PROGRAM}-{mode}"
                huawei_log = logs / f"{name}.huawei-device-plugin.log"
                huawei = [str(huawei_bin / "ascend-device-plugin"), f"-logFile={huawei_log}", *huawei_flags]
                ours = [str(our_bin / "ascend-device-plugin"), f"--listen=127.0.0.1:{free_port()}",
                        "--allocate-mode=device-specs", *our_flags]
                runs[mode] = (pool.submit(_run, host, f"{name}.huawei", work / mode / "huawei", our_bin, huawei, logs),
                              pool.submit(_run, host, f"{name}.ours", work / mode / "ours", our_bin, ours, logs))
            for mode, (theirs, mine) in runs.items():
                line = compare_decisions(label, mode, decisions(theirs.result()["timeline"]),
                                         decisions(mine.result()["timeline"]), collector)
                print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        host.overlay.unlink(missing_ok=True)
