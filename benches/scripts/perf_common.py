"""Shared pieces of the benches/run.sh measurement scripts: loopback ports, processes that are always stopped,
timed HTTP GETs, nearest-rank percentiles, simulated topologies and the npu-exporter process."""

import http.client
import json
import math
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "peer-tests"))
import peers.host as _PEER_HOST  # noqa: E402  (one port picker for the benches and the comparison tier)

# How long a component may take to come up before the section fails.
STARTUP_TIMEOUT_S = 30.0


class MeasurementError(RuntimeError):
    """A measurement could not be made; the message says what and where."""


def free_port():
    """A loopback TCP port that was free a moment ago (the component binds it right after): the comparison tier's
    picker (peer-tests/peers/host.py), which stays below the kernel's ephemeral range, where an outgoing connection
    could take the port before the component binds it."""
    return _PEER_HOST.free_port()


def nearest_rank(values, fraction):
    """The nearest-rank percentile of `values` (`fraction` in 0..1)."""
    if not values:
        raise MeasurementError("percentile of no values")
    ordered = sorted(values)
    index = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(index, len(ordered)) - 1]


def median(values):
    """The median (mean of the middle two for an even count)."""
    if not values:
        raise MeasurementError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def spread(values):
    """Median, lowest and highest of per-round figures, and the rounds' own."""
    return {"median": round(median(values), 4), "min": round(min(values), 4), "max": round(max(values), 4),
            "rounds": [round(value, 4) for value in values]}


def latency_summary(milliseconds):
    """p50/p90/p99/max of a list of latencies in milliseconds, rounded to microseconds."""
    return {
        "count": len(milliseconds),
        "p50_ms": round(nearest_rank(milliseconds, 0.50), 3),
        "p90_ms": round(nearest_rank(milliseconds, 0.90), 3),
        "p99_ms": round(nearest_rank(milliseconds, 0.99), 3),
        "max_ms": round(max(milliseconds), 3),
    }


def http_get(port, path, timeout_s=10.0):
    """GET http://127.0.0.1:<port><path> on a fresh connection: (status, body bytes, milliseconds)."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        status = response.status
    finally:
        connection.close()
    return status, body, (time.perf_counter() - started) * 1000.0


def resident_kib(pid):
    """(VmRSS, VmHWM) of a process in KiB."""
    path = f"/proc/{pid}/status"
    fields = {}
    with open(path, encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    if len(fields) != 2:
        raise MeasurementError(f"{path}: no VmRSS/VmHWM lines (has the process exited?)")
    return fields["VmRSS"], fields["VmHWM"]


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_json(path, figures):
    """Writes the figures of a section."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump(figures, out, indent=2, sort_keys=True)
        out.write("\n")


class Process:
    """A child process that is stopped (SIGTERM, then SIGKILL) when the `with` block ends, whatever happens."""

    def __init__(self, argv, env=None, log_path=None, cwd=None):
        self.argv = argv
        self.log_path = log_path
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            self.popen = subprocess.Popen(
                argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        except OSError as error:
            raise MeasurementError(f"cannot start {argv[0]}: {error}") from error
        finally:
            if log_path:
                log.close()

    @property
    def pid(self):
        return self.popen.pid

    def check_running(self):
        """Raises if the process has exited, quoting its log."""
        code = self.popen.poll()
        if code is not None:
            raise MeasurementError(f"{self.argv[0]} exited with status {code}; log:\n{self.log_tail()}")

    def log_tail(self, lines=20):
        if not self.log_path or not os.path.exists(self.log_path):
            return "(no log)"
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            return "".join(log.readlines()[-lines:])

    def stop(self):
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def write_topology(path, chips, hang_ms=600_000):
    """A simulated host of `chips` Ascend 910B3 chips, four per card, constant telemetry; chip i has logic id i and
    physical id chips-1-i. Injected hangs last `hang_ms`."""
    lines = ["[simulation]", 'name = "perf"', "seed = 7", "sample_period_ms = 1000", f"hang_ms = {hang_ms}", ""]
    for card in range((chips + 3) // 4):
        lines += ["[[card]]", f"card_id = {card}", ""]
        for device in range(4):
            logic = card * 4 + device
            if logic >= chips:
                break
            lines += [
                "[[card.chip]]",
                f"device_id = {device}",
                f"logic_id = {logic}",
                f"phy_id = {chips - 1 - logic}",
                'chip_type = "Ascend910B"',
                'chip_name = "910B3"',
                "aicore_count = 20",
                f'pcie = {{ bdf = "0000:{0x10 + card:02x}:00.{device}" }}',
                f"telemetry = {{ temperature = {40 + logic % 40}, power = 2800, utilization = {{ aicore = {logic % 100} }} }}",
                f"hbm = {{ size_mb = 65536, used_mb = {1024 * (logic % 64)} }}",
                "",
            ]
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))


def write_overlay(path, text):
    """Replaces the simulator's overlay file atomically and waits until the simulator has read it (it checks every
    20 ms; dcmi_sim::OVERLAY_SETTLE is 80 ms)."""
    staging = path + ".tmp"
    with open(staging, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(staging, path)
    time.sleep(0.1)


class ExporterNode:
    """A simulated node with an exporter on it, for a `with` block: subclasses set `directory` (a
    TemporaryDirectory holding the node) and `exporter` (its Process); both go when the block ends."""

    directory = None
    exporter = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.exporter.stop()
        self.directory.cleanup()
        return False


class FakeHost:
    """A fake Atlas host laid out by `dcmi-sim fake-host` for a sample topology under `root`: its simulator library,
    topology, overlay path, and the simulated hccn_tool (built beside the dcmi-sim binary) at the driver's path."""

    def __init__(self, dcmi_sim, sample, root):
        argv = [dcmi_sim, "fake-host", "--topology", sample, "--root", root, "--plain-device-nodes"]
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise MeasurementError(f"{' '.join(argv)} failed: {result.stderr.strip()}")
        driver = os.path.join(root, "usr/local/Ascend/driver")
        self.library = os.path.join(driver, "lib64/driver/libdcmi.so")
        self.topology = os.path.join(root, "etc/dcmi-sim/topology.toml")
        self.overlay = os.path.join(driver, "lib64/driver/dcmi-sim-overlay.toml")
        self.hccn_tool = os.path.join(driver, "tools/hccn_tool")
        if not os.access(self.hccn_tool, os.X_OK):
            raise MeasurementError(f"{argv[0]} installed no hccn_tool: build it beside dcmi-sim (--bin hccn_tool)")
        write_overlay(self.overlay, "")


def start_exporter(binary, library, topology, overlay, port, log_path, extra_args=()):
    """npu-exporter on 127.0.0.1:<port> against the simulator; returns the Process once /healthz answers 200."""
    env = dict(os.environ, DCMI_SIM_CONFIG=topology, DCMI_SIM_OVERLAY=overlay, RUST_LOG="warn")
    argv = [
        binary,
        f"--web.listen-address=127.0.0.1:{port}",
        f"--dcmi.library={library}",
        "--dcmi.skip-ownership-check",
        "--pod-resources.disable",
        *extra_args,
    ]
    process = Process(argv, env=env, log_path=log_path)
    try:
        wait_http_ok(port, "/healthz", process)
    except BaseException:
        process.stop()
        raise
    return process


def wait_http_ok(port, path, process):
    """Polls GET path until it answers 200, failing if `process` exits or the start-up timeout passes."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        process.check_running()
        try:
            if http_get(port, path, timeout_s=2.0)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise MeasurementError(f"{process.argv[0]}: no 200 from 127.0.0.1:{port}{path} within {STARTUP_TIMEOUT_S} s")


def exit_on_sigterm():
    """Turns SIGTERM (from `timeout` or run.sh's exit trap) into SystemExit, so that every `with Process(...)`
    block stops its process on the way out."""
    def leave(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, leave)


def run_script(name, main):
    """The entry point of a section script: SIGTERM stops its processes on the way out (see exit_on_sigterm), and a
    MeasurementError ends it with status 1 and `name: reason` on stderr."""
    exit_on_sigterm()
    try:
        main()
    except MeasurementError as error:
        sys.exit(f"{name}: {error}")
