"""docs/performance.md section 11, container start: a container started through Huawei's docker runtime and hook
(mind-cluster `component/ascend-docker-runtime`), through ours in runtime mode and in hook mode, and by plain runc, on
the same fake host in the same run (benches/scripts/beside_huawei.py --part container-start).

The host is the comparison tier's Atlas 800T A2 (peer-tests/peers/host.py), every side run in its private mount
namespace (scripts/peers/in-host.sh: the host's /dev and /usr/local at the machine's paths), because Huawei's programs
open fixed paths: the chips' device nodes under /dev (runtime/process/process.go, `addDevice`), libdcmi.so of the
driver, the mount lists /etc/ascend-docker-runtime.d/<name>.list (hook/process/process.go, `readMountConfig`) and
their logs under /var/log/ascend-docker-runtime; the last two are directories of this run bound over those paths.
Huawei's runtime edits the spec only on `create` (runtime/process/process.go, `DoProcess`) and finds runc on PATH
(runtime/common/common.go, `ExecRunc`) and its hook beside itself (`addHook`); the hook runs ascend-docker-cli from
its own directory (`DoPrestartHook`), which enters the container's mount namespace and mounts the listed files. So
every side does what Docker and containerd ask of a runc replacement: `create --bundle`, then `start`, here through
one small shell script that runs the side's runtime (runc itself for plain runc), so every side pays the same shell.
Section 6's bundle (busybox, /bin/true, ASCEND_VISIBLE_DEVICES=0) and hyperfine machinery are reused
(container_start.py); before each run the previous container is deleted and config.json restored (not timed).

Both runtimes' driver files are the same: both read the mount list /etc/ascend-docker-runtime.d/base.list (ours reads
Huawei's lists too, ascend-oci's mount_list.rs), written from the mounts our runtime mode puts in the spec on this host
without one (the defaults of Huawei's install that exist here). Before timing, each side starts one container, from a
fresh rootfs, whose process checks that /dev/davinci0 is a character device and that every listed driver file is there
(in a directory, its first entry; plain runc: that the chip is not there).
Ours runs with its chip cache warm, as on a node after its first container (Huawei's runtime asks DCMI every time;
given LD_LIBRARY_PATH, as the tier gives it, it finds libdcmi.so there rather than running `ldconfig -p`). The sides
alternate within each round, in an order reversed every other round; a round's figure per side is the median of its
runs, ratios are ours / Huawei's per round, reported as the median and range over the rounds.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import container_start as section6
import perf_common as common

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peer-tests"))
# pylint: disable=wrong-import-position
from peers.host import IN_HOST, Host  # noqa: E402

HOST = "atlas-800t-a2"
CONTAINER_ID = "perf-start-beside-huawei"
SIDES = ("plain", "runtime", "hook", "huawei")
# Huawei's programs, all in one directory: the runtime runs the hook beside it, the hook the cli beside it.
HUAWEI_PROGRAMS = ("ascend-docker-runtime", "ascend-docker-hook", "ascend-docker-cli")
# Their fixed paths (mind-cluster component/ascend-common/api/default_name.go: RunTimeDConfigPath, the log paths).
HUAWEI_CONFIG_DIR = "/etc/ascend-docker-runtime.d"
HUAWEI_LOG_DIR = "/var/log/ascend-docker-runtime"
# The list the hook reads when ASCEND_RUNTIME_MOUNTS is unset (hook/process/process.go, parseMounts: "base").
BASE_LIST = "base.list"
# Where the bundles' tmpfs is mounted (see StartBench).
RUN_PARENT = "/run/ascend-perf"
CHIP_MARK = "chip:/dev/davinci0"
MISSING_MARK = "missing:"
# Creates then starts the bundle's container through a runtime, as an engine does: the timed command of every side.
START_SCRIPT = """#!/bin/sh
# start.sh RUNTIME STATE BUNDLE ID
"$1" --root "$2" create --bundle "$3" "$4" && exec "$1" --root "$2" start "$4"
"""


def check_command(paths):
    """The check container's process: prints CHIP_MARK when /dev/davinci0 is a character device, and MISSING_MARK and
    the path of each of `paths` absent from the container."""
    tests = "".join(f"[ -e {path} ] || echo {MISSING_MARK}{path}; " for path in paths)
    return ["/bin/sh", "-c", f"[ -c /dev/davinci0 ] && echo {CHIP_MARK}; {tests}true"]


def judge_check(side, output, paths):
    """What a side's check container printed, against what the side claims: the chip and every driver path for the
    three injecting sides, no chip for plain runc. Returns nothing; raises MeasurementError naming the problem."""
    lines = output.split()
    chip = CHIP_MARK in lines
    missing = [line[len(MISSING_MARK):] for line in lines if line.startswith(MISSING_MARK)]
    if side == "plain":
        if chip:
            raise common.MeasurementError("plain runc: /dev/davinci0 is in a container no runtime injected")
        return
    if not chip:
        raise common.MeasurementError(f"{side}: no character device /dev/davinci0 in the container; it printed "
                                      f"{output.strip()!r}")
    if missing:
        raise common.MeasurementError(f"{side}: driver files missing in the container: {', '.join(missing)}")


def mounted_paths(paths, host_root):
    """What the check looks for in the container: each driver file, and in each driver directory its first entry
    on the host (a directory seen empty would be a mount point left by an earlier start, not a mount)."""
    looked_for = []
    for path in paths:
        on_host = Path(host_root) / path.lstrip("/") if path.startswith("/usr/local/") else Path(path)
        entries = sorted(os.listdir(on_host)) if on_host.is_dir() else []
        looked_for.append(f"{path}/{entries[0]}" if entries else path)
    return looked_for


def driver_mounts(pristine_spec, injected_spec):
    """The sources of the bind mounts our runtime mode added to the spec: the driver files and directories of the
    mount list both sides then read, so that both mount the same ones."""
    before = pristine_spec.get("mounts") or []
    return sorted({mount["source"] for mount in injected_spec.get("mounts") or []
                   if mount not in before and mount.get("source", "").startswith("/")})


def round_order(number):
    """The sides' order in round `number`: reversed every other round."""
    return SIDES if number % 2 == 0 else SIDES[::-1]


def summarise(rounds):
    """Per side: the per-round medians' spread; per mode of ours: ours / Huawei's per round, and plain runc's."""
    summary = {side: common.spread([r[side] for r in rounds]) for side in SIDES}
    for side in ("runtime", "hook", "plain"):
        summary[f"{side}_to_huawei"] = common.spread([r[side] / r["huawei"] for r in rounds])
    return summary


class StartBench:
    """The fake host, the bundle on a tmpfs, the programs' directories and each side's runtime."""

    def __init__(self, huawei_bin, our_bin, work):
        self.work = work
        self.logs = work / "huawei-logs"
        self.config_dir = work / "huawei-config"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        self.host = Host(HOST, work / "host", our_bin)
        # Huawei's hook refuses a bundle under a directory anyone may write to (every parent up to /, as
        # mindxcheckutils checks it: "write permission not right /tmp"), so the bundle's tmpfs is not made under the
        # work directory, which may lie in /tmp: it is under /run, root's and 0755 all the way up, where engines keep
        # their bundles on a node.
        self.run_parent = Path(RUN_PARENT) / f"start-{os.getpid()}"
        self.run_parent.mkdir(parents=True, mode=0o755)
        self.run_dir = Path(section6.mount_run_dir(str(self.run_parent)))
        self.bundle = self.run_dir / "bundle"
        self.bundle.mkdir()
        self.pristine = Path(section6.make_bundle(str(self.bundle)))
        # Each check starts from this rootfs, so that a driver path is found only if that start mounted it (runc and
        # Huawei's cli leave the mount points they make in the rootfs).
        self.pristine_rootfs = self.run_dir / "rootfs.pristine"
        shutil.copytree(self.bundle / "rootfs", self.pristine_rootfs, symlinks=True)
        self.config = self.bundle / "config.json"
        self.state = self.run_dir / "runc"
        self.start_script = work / "start.sh"
        self.start_script.write_text(START_SCRIPT)
        # Huawei's programs check that what they read is root's and writable by nobody else (mind-cluster
        # component/ascend-docker-runtime/mindxcheckutils, RealFileChecker), as on a server.
        for directory in (self.logs, self.config_dir):
            directory.mkdir(mode=0o750)
        our_runtime = work / "bin" / section6.RUNTIME_LINK
        our_runtime.parent.mkdir()
        our_runtime.symlink_to((our_bin / "ascend-ctk").resolve())
        self.runtimes = {"plain": "runc", "runtime": str(our_runtime), "hook": str(our_runtime),
                         "huawei": str(huawei_bin / "ascend-docker-runtime")}
        # Every program in the host gets its environment (the simulator's topology, the driver's library directory);
        # ours its settings as section 6 gives them, the host root being / in the namespace.
        host_env = self.host.environment()
        ours = section6.mode_environments("/", str(self.run_dir / "ascend-ctk" / "chips.json"))
        self.environments = {"plain": host_env, "huawei": host_env,
                             "runtime": host_env | {k: v for k, v in ours["base"].items() if k.startswith("ASCEND_")},
                             "hook": host_env | {k: v for k, v in ours["hook"].items() if k.startswith("ASCEND_")}}
        self.prefix = [str(IN_HOST), "--bind", f"{self.config_dir}:{HUAWEI_CONFIG_DIR}", "--bind",
                       f"{self.logs}:{HUAWEI_LOG_DIR}", str(self.host.root)]

    def command(self, side):
        return ["/bin/sh", str(self.start_script), self.runtimes[side], str(self.state), str(self.bundle),
                CONTAINER_ID]

    def prepare(self):
        """What runs before each start, untimed: the last container deleted, the pristine spec back."""
        return (f"/bin/sh -c 'runc --root {self.state} delete --force {CONTAINER_ID} >/dev/null 2>&1; "
                f"cp {self.pristine} {self.config}'")

    def delete(self):
        subprocess.run(["runc", "--root", str(self.state), "delete", "--force", CONTAINER_ID], capture_output=True,
                       check=False)

    def check(self, side, paths):
        """Starts one container through `side` whose process looks for the chip and `paths`; returns the spec the
        side's runtime left in the bundle."""
        with open(self.pristine, encoding="utf-8") as pristine:
            spec = json.load(pristine)
        spec["process"]["args"] = check_command(paths)
        shutil.rmtree(self.bundle / "rootfs")
        shutil.copytree(self.pristine_rootfs, self.bundle / "rootfs", symlinks=True)
        common.write_json(str(self.config), spec)
        output = self.work / f"check-{side}.out"
        wait = (f"for i in $(seq 250); do runc --root {self.state} state {CONTAINER_ID} 2>/dev/null | "
                "grep -q '\"stopped\"' && break; sleep 0.02; done")
        script = f"{' '.join(self.command(side))} >{output} 2>&1; status=$?; {wait}; exit $status"
        completed = subprocess.run([*self.prefix, "/bin/sh", "-c", script], env=self.environments[side],
                                   capture_output=True, text=True, timeout=60, check=False)
        printed = output.read_text(errors="replace") if output.exists() else ""
        with open(self.config, encoding="utf-8") as edited:
            edited_spec = json.load(edited)
        self.delete()
        if completed.returncode != 0:
            raise common.MeasurementError(f"{side}: the check container did not start (exit {completed.returncode}): "
                                          f"{printed.strip()[-1500:]} {completed.stderr.strip()[-500:]}"
                                          f"{self.huawei_log_tail() if side == 'huawei' else ''}")
        judge_check(side, printed, paths)
        return edited_spec

    def huawei_log_tail(self):
        tails = []
        for log in sorted(self.logs.glob("*")):
            if log.is_file():
                tails.append(f"\n{log.name}: " + " | ".join(log.read_text(errors="replace").splitlines()[-4:]))
        return "".join(tails)

    def close(self):
        self.delete()
        subprocess.run(["umount", str(self.run_dir)], capture_output=True, check=False)
        shutil.rmtree(self.run_parent, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.run_parent.parent.rmdir()


def measure(huawei_bin, our_bin, work, rounds, runs):
    """The figures of container start on every side, or {"not_measured": reason} when Huawei's programs are not
    all built."""
    tools = [tool for tool in ("runc", "hyperfine", "busybox") if not shutil.which(tool)]
    if tools:
        return {"not_measured": f"missing tools: {', '.join(tools)} (scripts/deps/debian.txt)"}
    absent = [name for name in HUAWEI_PROGRAMS if not os.access(huawei_bin / name, os.X_OK)]
    if absent:
        return {"not_measured": f"{', '.join(absent)} not in {huawei_bin}: Huawei's hook execs ascend-docker-cli "
                                "from its own directory to mount the driver's files (mind-cluster "
                                "component/ascend-docker-runtime/hook/process/process.go, DoPrestartHook); "
                                "scripts/peers/build.sh builds it when a libboundscheck tree is given "
                                "(LIBBOUNDSCHECK_TREE)"}
    try:
        return measure_sides(huawei_bin, our_bin, work, rounds, runs)
    except common.MeasurementError as error:
        # The other parts of the section are measured all the same; this row says why it is not.
        return {"not_measured": str(error)}


def measure_sides(huawei_bin, our_bin, work, rounds, runs):
    """The figures of container start on every side; raises MeasurementError naming what failed."""
    bench = StartBench(huawei_bin, our_bin, work)
    try:
        with open(bench.pristine, encoding="utf-8") as pristine:
            pristine_spec = json.load(pristine)
        # Ours first, without the list: the driver files it mounts then make the list both sides read.
        paths = driver_mounts(pristine_spec, bench.check("runtime", []))
        if not paths:
            raise common.MeasurementError("our runtime mode added no driver mount to the spec on this host")
        (bench.config_dir / BASE_LIST).write_text("".join(f"{path}\n" for path in paths))
        (bench.config_dir / BASE_LIST).chmod(0o640)
        looked_for = mounted_paths(paths, bench.host.root)
        for side in SIDES:
            bench.check(side, looked_for)
        per_round, times, cpu = [], {side: [] for side in SIDES}, {side: [] for side in SIDES}
        for number in range(rounds):
            timed = [(side, bench.command(side), bench.prepare(), bench.environments[side])
                     for side in round_order(number)]
            found = section6.hyperfine_groups(timed, runs, str(work / f"hyperfine-{number}.json"), bench.prefix)
            per_round.append({side: common.median(found[side][0]) * 1000.0 for side in SIDES})
            for side in SIDES:
                times[side].extend(found[side][0])
                cpu[side].append(found[side][1] * 1000.0)
    finally:
        bench.close()
    return {
        "host": HOST,
        "settings": {"rounds": rounds, "runs": runs},
        "driver_files": paths,
        "rounds": [{side: round(ms, 3) for side, ms in r.items()} for r in per_round],
        "summary": summarise(per_round),
        "median_ms": {side: round(common.median(samples) * 1000.0, 3) for side, samples in times.items()},
        "p90_ms": {side: round(common.nearest_rank(samples, 0.9) * 1000.0, 3) for side, samples in times.items()},
        "cpu_ms": {side: round(common.median(values), 3) for side, values in cpu.items()},
    }
