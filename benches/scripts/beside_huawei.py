#!/usr/bin/env python3
"""docs/performance.md section 11: what our exporter and device plugin cost beside Huawei's (mind-cluster, built by
scripts/peers/build.sh), on the same simulated host in the same run.

The hosts are the comparison tier's (peer-tests/peers/host.py): a `dcmi-sim fake-host` of a sample topology with
frozen readings, the simulated libdcmi.so and hccn_tool at the driver's paths, each program in a private mount
namespace (scripts/peers/in-host.sh). Both sides run with the tier's flags: every metric group each exporter reads by
default, ours in Huawei's naming; the device plugins hand out device specs.

Exporter, per host: both exporters run at once, so every window measures both under the same machine load; each round
is an idle window (no scrape), a minute with one gzip scrape every 15 s and a minute with one every second, each
side's scrapes half an interval after the other's (they alternate). Per window: the whole CPU of each process
(utime + stime of it and its waited-for children, hccn_tool included: background sampling and scrapes), its resident
memory at the end; per scrape: the wall time and the CPU its threads spent meanwhile (schedstat), less its idle CPU
rate over that wall time: the CPU of one scrape that renders anew (ours renders again once its body is older than
`--metrics.cache-max-age`, 1 s, so at these cadences every scrape renders). Ratios are taken per round, then the
median and the spread (lowest, highest) over the rounds.

Device plugin, per host and round: Huawei's, ours with fault events and ours polling (`--no-fault-events`; both sides
poll every 5 s by default), each registered with its own stand-in node (peer-node --perf, peer-tests/harness), started
one after the other: start to registration and to the first device list; an idle window (CPU, resident memory);
Allocate rounds, one side after the other; faults raised on one chip after the other through the simulator's overlay,
at phases spread over 5 s, each timed to the device listed Unhealthy at each node's fake kubelet.

Container start (start_beside_huawei.py): a container created and started through Huawei's docker runtime and hook,
through ours in runtime mode and in hook mode, and by plain runc, in the same host, the sides alternating in every
round.

    python3 benches/scripts/beside_huawei.py --host-lock /tmp/ascend-host.lock --huawei-bin <cache>/bin \\
        --our-bin target/release --work-dir /tmp/beside-huawei --out target/perf/beside_huawei.json
"""

import argparse
import fcntl
import gzip
import http.client
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import cpu_profile
import perf_common as common

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "peer-tests"))

# pylint: disable=wrong-import-position
from peers.device_plugin import NODE_DIRS, SETTLE_SECONDS, lay_image_files, start_node, start_plugin  # noqa: E402
from peers.exporter import settled_scrape, start_both  # noqa: E402
from peers.host import Host  # noqa: E402
import start_beside_huawei  # noqa: E402  (it imports the comparison tier too)

PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
SIDES = ("huawei", "ours")
CADENCES_S = (15, 1)
# Our device plugin as the comparison tier runs it in device-specs mode, with events and polling.
PLUGIN_SIDES = ("huawei", "ours", "ours_polling")
REGISTRATION_WAIT_S = 90.0
FAULT_WAIT_S = 30.0
RECOVERY_WAIT_S = 20.0
# Faults land at phases spread over this span: both sides poll health every 5 s by default.
FAULT_PHASE_SPAN_S = 5.0


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huawei-bin", type=Path, required=True, help="Huawei's programs (scripts/peers/build.sh)")
    parser.add_argument("--our-bin", type=Path, required=True,
                        help="our release binaries: npu-exporter, ascend-device-plugin, dcmi-sim, hccn_tool, "
                             "peer-node")
    parser.add_argument("--hosts", default="atlas-800t-a2,atlas-800i-a3,atlas-950-8")
    parser.add_argument("--plugin-hosts", default="atlas-800t-a2")
    parser.add_argument("--part", choices=("exporter", "device-plugin", "container-start", "all"), default="all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window-seconds", type=float, default=60.0)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--profile-seconds", type=float, default=0.0,
                        help="after each exporter host's rounds, `perf record` ours this long at one scrape a second")
    parser.add_argument("--plugin-rounds", type=int, default=3)
    parser.add_argument("--allocations", type=int, default=300)
    parser.add_argument("--faults", type=int, default=5)
    parser.add_argument("--start-rounds", type=int, default=10,
                        help="container start: rounds of every side (start_beside_huawei.py)")
    parser.add_argument("--start-runs", type=int, default=20, help="container start: timed starts per side and round")
    parser.add_argument("--work-dir", type=Path, required=True, help="fake hosts (removed after use) and the programs' logs")
    parser.add_argument("--host-lock", type=Path,
                        help="held shared while fake hosts exist (the real test bed's owner takes it exclusively "
                             "around scripts/cluster/up.sh and down.sh)")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


# ---- process figures ---------------------------------------------------------------------------------------------

def whole_cpu_ms(pid):
    """utime + stime of the process and of its waited-for children (hccn_tool), in milliseconds."""
    return sum(cpu_split_ms(pid))


def cpu_split_ms(pid):
    """(the process's own utime + stime, its waited-for children's), in milliseconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = [int(value) for value in stat.read().rsplit(")", 1)[1].split()[11:15]]
    tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
    return (fields[0] + fields[1]) * tick_ms, (fields[2] + fields[3]) * tick_ms


# The simulated driver's own thread in every process that loads it (dcmi-sim's state.rs: it wakes every 10 ms to
# follow the overlay file and deliver fault events). A real driver has no such thread, and it costs both sides the
# same, so the targets are taken on each process's CPU less this thread's.
SIMULATOR_THREAD = "dcmi-sim"


def simulator_ms(pid):
    """CPU milliseconds (schedstat) of the process's simulated-driver threads so far."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as comm:
                if comm.read().strip() != SIMULATOR_THREAD:
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as schedstat:
                total += int(schedstat.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    return total / 1e6


def thread_ns(pid):
    """{thread id: nanoseconds on a CPU} of the process's threads (schedstat: exact, not in clock ticks)."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as schedstat:
                times[tid] = int(schedstat.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    return times


def threads_cpu_ms(before, after):
    """CPU milliseconds the threads spent between two thread_ns readings (a thread new in `after` from zero)."""
    return sum(ns - before.get(tid, 0) for tid, ns in after.items()) / 1e6


# One connection per exporter, kept open between scrapes as Prometheus keeps its connection to a target (HTTP
# keep-alive, its default since 2.0: prometheus/prometheus#2498); a scrape over a new connection would add the
# kernel's and the server's work of a connect and a close to every figure per scrape.
CONNECTIONS: dict[int, http.client.HTTPConnection] = {}


def scrape(port, with_gzip=True):
    """GET /metrics as Prometheus asks for it, over the exporter's kept-open connection: (status, body bytes as
    sent). A connection the server closed while idle is opened again once, as Prometheus's client does."""
    headers = {"Accept": PROMETHEUS_ACCEPT}
    if with_gzip:
        headers["Accept-Encoding"] = "gzip"
    for attempt in (1, 2):
        connection = CONNECTIONS.get(port)
        if connection is None:
            connection = CONNECTIONS[port] = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", "/metrics", headers=headers)
            response = connection.getresponse()
            body = response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            connection.close()
            del CONNECTIONS[port]
            if attempt == 2:
                raise
            continue
        if response.will_close:
            connection.close()
            del CONNECTIONS[port]
        if with_gzip and response.getheader("Content-Encoding") != "gzip":
            raise common.MeasurementError(f"127.0.0.1:{port} did not gzip its answer")
        return response.status, body
    raise AssertionError("unreachable")


def compared(per_round, sides=SIDES):
    """{side: spread} and the per-round ratio of the second side to the first."""
    out = {side: common.spread([figures[side] for figures in per_round]) for side in sides}
    ratios = [figures[sides[1]] / figures[sides[0]] for figures in per_round if figures[sides[0]] > 0]
    if ratios:
        out["ratio"] = common.spread(ratios)
    return out


# ---- exporter ----------------------------------------------------------------------------------------------------

class Exporters:
    """Huawei's exporter and ours in one host: {side: (Program, port)}."""

    def __init__(self, host, args, logs):
        huawei, huawei_port, ours, our_port = start_both(host, args.huawei_bin, args.our_bin, logs)
        self.sides = {"huawei": (huawei, huawei_port), "ours": (ours, our_port)}

    def pid(self, side):
        return self.sides[side][0].process.pid

    def port(self, side):
        return self.sides[side][1]

    def check(self):
        for side, (program, _) in self.sides.items():
            if not program.running():
                raise common.MeasurementError(f"{side}'s exporter exited:\n{program.tail()}")

    def stop(self):
        for program, _ in self.sides.values():
            program.stop()


def idle_window(exporters, seconds):
    """With no scrape for `seconds`, per side in CPU ms per minute: the whole, the part in children (hccn_tool), the
    part in the simulated driver's thread."""
    before = {side: (cpu_split_ms(exporters.pid(side)), simulator_ms(exporters.pid(side))) for side in SIDES}
    time.sleep(seconds)
    exporters.check()
    after = {side: (cpu_split_ms(exporters.pid(side)), simulator_ms(exporters.pid(side))) for side in SIDES}
    per_minute = 60.0 / seconds
    return ({side: (sum(after[side][0]) - sum(before[side][0])) * per_minute for side in SIDES},
            {side: (after[side][0][1] - before[side][0][1]) * per_minute for side in SIDES},
            {side: (after[side][1] - before[side][1]) * per_minute for side in SIDES})


def cadence_window(exporters, cadence, seconds, order, idle_rate):
    """A window of one scrape every `cadence` seconds per side, the sides half an interval apart: per side the whole
    CPU per minute, the scrapes' wall and fresh-render CPU milliseconds, and the resident memory at the end."""
    scrapes = {side: [] for side in SIDES}
    before = {side: cpu_split_ms(exporters.pid(side)) for side in SIDES}
    simulator_before = {side: simulator_ms(exporters.pid(side)) for side in SIDES}
    started = time.monotonic()
    for index in range(int(seconds // cadence)):
        for position, side in enumerate(order):
            due = started + index * cadence + position * cadence / len(order)
            time.sleep(max(0.0, due - time.monotonic()))
            pid = exporters.pid(side)
            threads = thread_ns(pid)
            began = time.perf_counter()
            status, _ = scrape(exporters.port(side))
            wall_s = time.perf_counter() - began
            cpu_ms = threads_cpu_ms(threads, thread_ns(pid))
            if status != 200:
                raise common.MeasurementError(f"{side}'s exporter answered {status}")
            # The scrape's own CPU: what its threads spent, less what the background sampling spends in that time.
            scrapes[side].append((wall_s * 1000.0, cpu_ms - idle_rate[side] / 60.0 * wall_s))
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    exporters.check()
    elapsed = time.monotonic() - started
    out = {}
    for side in SIDES:
        rss, _ = common.resident_kib(exporters.pid(side))
        after = cpu_split_ms(exporters.pid(side))
        out[side] = {"cpu_ms_per_min": (sum(after) - sum(before[side])) * 60.0 / elapsed,
                     # Of that, the waited-for children's: hccn_tool, run by both sides for the same readings.
                     "children_ms_per_min": (after[1] - before[side][1]) * 60.0 / elapsed,
                     "simulator_ms_per_min": (simulator_ms(exporters.pid(side)) - simulator_before[side]) * 60.0
                     / elapsed,
                     "scrape_ms": [round(wall, 3) for wall, _ in scrapes[side]],
                     "scrape_cpu_ms": [round(cpu, 3) for _, cpu in scrapes[side]],
                     "rss_kib": rss}
    return out


def body_sizes(exporters):
    sizes = {}
    for side in SIDES:
        _, plain = scrape(exporters.port(side), with_gzip=False)
        _, packed = scrape(exporters.port(side))
        sizes[side] = {"plain_bytes": len(plain), "gzip_bytes": len(packed),
                       "series": sum(1 for line in gzip.decompress(packed).splitlines()
                                     if line and not line.startswith(b"#"))}
    return sizes


def exporter_host(name, args, work, logs):
    host = Host(name, work / f"exporter-{name}", args.our_bin)
    exporters = Exporters(host, args, logs)
    try:
        for side, label in (("huawei", "Huawei's npu-exporter"), ("ours", "our npu-exporter")):
            program, port = exporters.sides[side]
            settled_scrape(label, port, program)
        figures = {"host": name, "bytes": body_sizes(exporters), "rounds": []}
        for number in range(args.rounds):
            order = SIDES if number % 2 == 0 else SIDES[::-1]
            idle, children, simulator = idle_window(exporters, args.idle_seconds)
            one_round = {"idle_cpu_ms_per_min": idle, "idle_children_cpu_ms_per_min": children,
                         "idle_simulator_ms_per_min": simulator}
            for cadence in CADENCES_S:
                one_round[f"every_{cadence}s"] = cadence_window(exporters, cadence, args.window_seconds, order, idle)
            figures["rounds"].append(one_round)
            print(f"{name} round {number + 1}: {json.dumps(summarise_exporter(figures))}", flush=True)
        figures["summary"] = summarise_exporter(figures)
        if args.profile_seconds > 0:
            figures["profile_ours"] = profile_ours(exporters, args.profile_seconds, work / f"{name}.perf.data")
        return figures
    finally:
        exporters.stop()
        shutil.rmtree(host.root, ignore_errors=True)


def profile_ours(exporters, seconds, data_path):
    """Where our exporter's CPU goes at one scrape a second: `perf record` of it and the hccn_tool processes it
    starts, by command and object, and the top symbols."""
    stop = threading.Event()

    def scraper():
        while not stop.wait(1.0):
            scrape(exporters.port("ours"))

    thread = threading.Thread(target=scraper, daemon=True)
    thread.start()
    try:
        cpu_profile.record(exporters.pid("ours"), seconds, str(data_path))
    finally:
        stop.set()
        thread.join(timeout=35)
    by_object, _ = cpu_profile.top_symbols(str(data_path), top=8, sort="comm,dso")
    symbols, _ = cpu_profile.top_symbols(str(data_path), top=12)
    data_path.unlink(missing_ok=True)
    return {"seconds": seconds, "by_command_and_object": by_object, "symbols": symbols}


def summarise_exporter(figures):
    rounds = figures["rounds"]
    summary = {"idle_cpu_ms_per_min": compared([r["idle_cpu_ms_per_min"] for r in rounds]),
               "idle_cpu_less_simulator_ms_per_min": compared(
                   [{s: r["idle_cpu_ms_per_min"][s] - r["idle_simulator_ms_per_min"][s] for s in SIDES}
                    for r in rounds]),
               "idle_children_cpu_ms_per_min": {side: common.spread([r["idle_children_cpu_ms_per_min"][side]
                                                              for r in rounds]) for side in SIDES}}
    for cadence in CADENCES_S:
        windows = [r[f"every_{cadence}s"] for r in rounds]
        key = f"every_{cadence}s"
        summary[key] = {
            "cpu_ms_per_min": compared([{s: w[s]["cpu_ms_per_min"] for s in SIDES} for w in windows]),
            "cpu_less_simulator_ms_per_min": compared(
                [{s: w[s]["cpu_ms_per_min"] - w[s]["simulator_ms_per_min"] for s in SIDES} for w in windows]),
            "scrape_cpu_ms": compared([{s: common.median(w[s]["scrape_cpu_ms"]) for s in SIDES} for w in windows]),
            "rss_kib": compared([{s: w[s]["rss_kib"] for s in SIDES} for w in windows]),
        }
        if all("children_ms_per_min" in w[s] for w in windows for s in SIDES):  # not in results of before 2026-12-05
            # hccn_tool's part, and what is left: the exporter's own sampling and scrapes.
            summary[key]["children_ms_per_min"] = {s: common.spread([w[s]["children_ms_per_min"] for w in windows])
                                                   for s in SIDES}
            summary[key]["cpu_less_children_and_simulator_ms_per_min"] = compared(
                [{s: w[s]["cpu_ms_per_min"] - w[s]["children_ms_per_min"] - w[s]["simulator_ms_per_min"]
                  for s in SIDES} for w in windows])
        latencies = {s: [ms for w in windows for ms in w[s]["scrape_ms"]] for s in SIDES}
        summary[key]["latency"] = {s: common.latency_summary(latencies[s]) for s in SIDES}
    return summary


# ---- device plugin -----------------------------------------------------------------------------------------------

class PluginRun:
    """One device plugin on its own stand-in node (peer-node --perf) in the host."""

    def __init__(self, host, side, args, node_dir, logs, label):
        self.side = side
        self.dir = node_dir
        shutil.rmtree(node_dir, ignore_errors=True)
        self.node, port = start_node(node_dir, args.our_bin, logs / f"{label}.peer-node.log", ["--perf"])
        if side == "huawei":
            argv = [str(args.huawei_bin / "ascend-device-plugin"), f"-logFile={logs / f'{label}.huawei.log'}"]
        else:
            argv = [str(args.our_bin / "ascend-device-plugin"), f"--listen=127.0.0.1:{common.free_port()}",
                    "--allocate-mode=device-specs", *(["--no-fault-events"] if side == "ours_polling" else [])]
        self.started_ms = time.time() * 1000.0
        self.program = start_plugin(host, node_dir, port, argv, logs / f"{label}.out", {})
        self.registered = self.wait_file("registered", REGISTRATION_WAIT_S)

    @property
    def pid(self):
        return self.program.process.pid

    def wait_file(self, name, seconds):
        path = self.dir / name
        deadline = time.monotonic() + seconds
        while not path.exists():
            if not self.program.running():
                raise common.MeasurementError(f"{self.side}'s device plugin exited:\n{self.program.tail()}")
            if self.node.poll() is not None:
                raise common.MeasurementError(f"{self.side}'s stand-in node exited ({self.node.returncode})")
            if time.monotonic() > deadline:
                raise common.MeasurementError(f"{self.side}: no {path} within {seconds:g} s:\n{self.program.tail()}")
            time.sleep(0.02)
        return json.loads(path.read_text())

    def health(self):
        """[(unix ms, set of devices not Healthy)] as the node saw them change."""
        path = self.dir / "health.jsonl"
        if not path.exists():
            return []
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]
        return [(line["unix_ms"], set(line["unhealthy"])) for line in lines]

    def allocate(self, number, calls):
        (self.dir / f"allocate-{number}.partial").write_text(str(calls))
        (self.dir / f"allocate-{number}.partial").rename(self.dir / f"allocate-{number}")
        return self.wait_file(f"allocated-{number}.json", 300.0)["ms"]

    def stop(self):
        (self.dir / "stop").touch()
        self.program.stop()
        try:
            self.node.wait(timeout=5)
        except Exception:  # pylint: disable=broad-except
            self.node.kill()
            self.node.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def fault_latencies(host, runs, count):
    """Per side, the milliseconds from each fault raised to a newly Unhealthy device (None where none came)."""
    latencies = {run.side: [] for run in runs}
    chips = host.chips()
    for repeat in range(count):
        logic_id = 1 + repeat % max(1, chips - 1)
        time.sleep(FAULT_PHASE_SPAN_S * repeat / count)
        known = {run.side: (run.health() or [(0, set())])[-1][1] for run in runs}
        # The time is taken before the overlay is written: a plugin with fault events can react before this process
        # runs again after the write, and a time taken after it made such a fault look missed (or negative).
        raised_ms = time.time() * 1000.0
        host.fault(logic_id, True)
        deadline = time.monotonic() + FAULT_WAIT_S
        pending = {run.side: run for run in runs}
        while pending and time.monotonic() < deadline:
            for side, run in list(pending.items()):
                seen = next((at for at, down in run.health() if at >= raised_ms and down - known[side]), None)
                if seen is not None:
                    latencies[side].append(round(seen - raised_ms, 1))
                    del pending[side]
            time.sleep(0.01)
        for side in pending:
            latencies[side].append(None)
        host.fault(logic_id, False)
        deadline = time.monotonic() + RECOVERY_WAIT_S
        while time.monotonic() < deadline and any(run.health() and run.health()[-1][1] for run in runs):
            time.sleep(0.1)
    return latencies


def plugin_round(host, args, number, logs):
    order = PLUGIN_SIDES if number % 2 == 0 else PLUGIN_SIDES[::-1]
    runs = []
    try:
        for side in order:
            label = f"{host.name}-r{number}-{side}"
            runs.append(PluginRun(host, side, args, NODE_DIRS / f"perf-{os.getpid()}-{number}-{side}", logs, label))
        # Huawei's plugin applies faults at its first health poll, 5 s after its start (peers/device_plugin.py).
        time.sleep(SETTLE_SECONDS)
        before = {run.side: (whole_cpu_ms(run.pid), simulator_ms(run.pid), thread_ns(run.pid)) for run in runs}
        time.sleep(args.idle_seconds)
        per_minute = 60.0 / args.idle_seconds
        # The same idle CPU summed over the threads' schedstat, exact where the clock ticks of /proc/<pid>/stat are
        # 10 ms apart (read twice, they leave up to 40 ms a minute either way on a 30 s window, more than a whole
        # idle plugin spends); a thread that ends within the window is missing from it (none did in the runs seen).
        threads_ms = {run.side: threads_cpu_ms(before[run.side][2], thread_ns(run.pid)) * per_minute
                      for run in runs}
        figures = {run.side: {
            "registration_ms": run.registered["registered_unix_ms"] - run.started_ms,
            "first_list_ms": run.registered["devices_unix_ms"] - run.started_ms,
            "idle_cpu_ms_per_min": (whole_cpu_ms(run.pid) - before[run.side][0]) * per_minute,
            "idle_simulator_ms_per_min": (simulator_ms(run.pid) - before[run.side][1]) * per_minute,
            "idle_threads_ms_per_min": threads_ms[run.side],
            "idle_rss_kib": common.resident_kib(run.pid)[0],
        } for run in runs}
        for run in runs:
            allocations = run.allocate(0, args.allocations)
            figures[run.side]["allocate"] = common.latency_summary(allocations)
        faults = fault_latencies(host, runs, args.faults)
        for run in runs:
            figures[run.side]["fault_ms"] = faults[run.side]
            figures[run.side]["rss_kib"] = common.resident_kib(run.pid)[0]
        return figures
    finally:
        for run in runs:
            run.stop()


def plugin_host(name, args, work, logs):
    host = Host(name, work / f"plugin-{name}", args.our_bin)
    lay_image_files(host, args.huawei_bin)
    try:
        rounds = []
        for number in range(args.plugin_rounds):
            rounds.append(plugin_round(host, args, number, logs))
            print(f"{name} plugin round {number + 1}: {json.dumps(rounds[-1])}", flush=True)
        return {"host": name, "rounds": rounds, "summary": summarise_plugin(rounds)}
    finally:
        shutil.rmtree(host.root, ignore_errors=True)


def summarise_plugin(rounds):
    def pick(key):
        return [{side: r[side][key] for side in PLUGIN_SIDES} for r in rounds]

    summary = {key: compared(pick(key), PLUGIN_SIDES) for key in ("idle_cpu_ms_per_min", "idle_rss_kib", "rss_kib",
                                                                  "registration_ms", "first_list_ms")}
    summary["idle_cpu_less_simulator_ms_per_min"] = compared(
        [{side: r[side]["idle_cpu_ms_per_min"] - r[side]["idle_simulator_ms_per_min"] for side in PLUGIN_SIDES}
         for r in rounds], PLUGIN_SIDES)
    if all("idle_threads_ms_per_min" in r[side] for r in rounds for side in PLUGIN_SIDES):  # since 2026-12-05
        summary["idle_threads_less_simulator_ms_per_min"] = compared(
            [{side: r[side]["idle_threads_ms_per_min"] - r[side]["idle_simulator_ms_per_min"] for side in PLUGIN_SIDES}
             for r in rounds], PLUGIN_SIDES)
    for percentile in ("p50_ms", "p99_ms"):
        summary[f"allocate_{percentile}"] = compared(
            [{side: r[side]["allocate"][percentile] for side in PLUGIN_SIDES} for r in rounds], PLUGIN_SIDES)
    faults = {side: [ms for r in rounds for ms in r[side]["fault_ms"]] for side in PLUGIN_SIDES}
    summary["fault_ms"] = {side: {"median": common.median([ms for ms in values if ms is not None])
                                  if any(ms is not None for ms in values) else None,
                                  "max": max((ms for ms in values if ms is not None), default=None),
                                  "missed": sum(1 for ms in values if ms is None), "count": len(values)}
                           for side, values in faults.items()}
    per_round = [{side: common.median([ms for ms in r[side]["fault_ms"] if ms is not None])
                  for side in ("huawei", "ours")} for r in rounds
                 if all(any(ms is not None for ms in r[side]["fault_ms"]) for side in ("huawei", "ours"))]
    if per_round:
        summary["fault_ms"]["ratio"] = compared(per_round)["ratio"]
    polling = [{side: common.median([ms for ms in r[side]["fault_ms"] if ms is not None])
                for side in ("huawei", "ours_polling")} for r in rounds
               if all(any(ms is not None for ms in r[side]["fault_ms"]) for side in ("huawei", "ours_polling"))]
    if polling:
        summary["fault_ms"]["ratio_polling"] = compared(polling, ("huawei", "ours_polling"))["ratio"]
    return summary


def main():
    args = parse_arguments()
    parts = ("exporter", "device-plugin", "container-start") if args.part == "all" else (args.part,)
    # Huawei's docker runtime, hook and cli are looked for by start_beside_huawei.measure, which says which is missing.
    huawei_programs = {"exporter": ("npu-exporter",), "device-plugin": ("ascend-device-plugin",),
                       "container-start": ()}
    our_programs = {"exporter": ("npu-exporter", "dcmi-sim", "hccn_tool"),
                    "device-plugin": ("ascend-device-plugin", "dcmi-sim", "peer-node"),
                    "container-start": ("ascend-ctk", "ascend-ctk-hook", "dcmi-sim")}
    huawei_programs = sorted({program for part in parts for program in huawei_programs[part]})
    our_programs = sorted({program for part in parts for program in our_programs[part]})
    for program in huawei_programs:
        if not os.access(args.huawei_bin / program, os.X_OK):
            raise common.MeasurementError(f"Huawei's {program} is not in {args.huawei_bin} (scripts/peers/build.sh)")
    for program in our_programs:
        if not os.access(args.our_bin / program, os.X_OK):
            raise common.MeasurementError(f"{args.our_bin / program} is not built")
    if args.host_lock:
        lock = open(args.host_lock, "a", encoding="utf-8")  # pylint: disable=consider-using-with
        print(f"waiting for a shared hold of {args.host_lock}", flush=True)
        fcntl.flock(lock, fcntl.LOCK_SH)  # released when the process ends
    work = args.work_dir.resolve()
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    figures = {"settings": {"rounds": args.rounds, "window_s": args.window_seconds, "idle_s": args.idle_seconds,
                            "cadences_s": list(CADENCES_S), "plugin_rounds": args.plugin_rounds,
                            "allocations": args.allocations, "faults": args.faults,
                            # Since 2026-12-05 each side's scrapes share one kept-open connection (`scrape`).
                            "scrape_connection": "kept open"},
               "exporter": {}, "device_plugin": {}}
    try:
        if "container-start" in parts:
            figures["container_start"] = start_beside_huawei.measure(args.huawei_bin, args.our_bin,
                                                                     work / "container-start", args.start_rounds,
                                                                     args.start_runs)
            common.write_json(args.out, figures)
        if "exporter" in parts:
            for name in args.hosts.split(","):
                figures["exporter"][name] = exporter_host(name, args, work, logs)
                common.write_json(args.out, figures)
        if "device-plugin" in parts:
            for name in args.plugin_hosts.split(","):
                figures["device_plugin"][name] = plugin_host(name, args, work, logs)
                common.write_json(args.out, figures)
    except AssertionError as error:  # the comparison tier's helpers fail with AssertionError
        raise common.MeasurementError(str(error)) from error
    common.write_json(args.out, figures)


if __name__ == "__main__":
    common.run_script("beside_huawei", main)
