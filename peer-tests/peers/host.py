"""A simulated host that Huawei's programs and ours both run on, and the programs running in it.

The host is `dcmi-sim fake-host` of a sample topology whose simulated readings are frozen (one simulation tick for the
whole run), so two exporters scraped a second apart read the same values. Programs run through
scripts/peers/in-host.sh: in a private mount namespace where the host's usr/local and dev are the machine's, at the
fixed paths Huawei's programs open (scripts/peers/in-host.sh says why).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IN_HOST = REPO / "scripts" / "peers" / "in-host.sh"
TOPOLOGIES = REPO / "dcmi-sim" / "topologies"
# The simulator's readings change once per tick of `sample_period_ms`, counted from the Unix epoch: a tick longer than
# the time since 1970 makes every reading constant for the run (dcmi-sim's generator.rs).
FROZEN_PERIOD_MS = 10**13


def sample_hosts() -> list[str]:
    return sorted(path.stem for path in TOPOLOGIES.glob("*.toml"))


def frozen_topology(name: str) -> str:
    """The sample topology `name` with its readings frozen."""
    text = (TOPOLOGIES / f"{name}.toml").read_text()
    line = f"sample_period_ms = {FROZEN_PERIOD_MS}"
    simulation = re.search(r"^\[simulation\]\s*$", text, re.M)
    if simulation is None:
        raise ValueError(f"{name}.toml has no [simulation] table")
    if re.search(r"^sample_period_ms\s*=.*$", text, re.M):
        return re.sub(r"^sample_period_ms\s*=.*$", line, text, count=1, flags=re.M)
    return text[: simulation.end()] + "\n" + line + text[simulation.end() :]


# The faults of the "faults" scenario: the chip of logic id 1 (0 on a one-chip host) reports a major health state and
# a fault code the fault policies take it out for, as the cluster tests' chip fault does.
FAULT_OVERLAY = """[[chip]]
logic_id = {logic_id}
health = 2
faults = [0x80E01801]
"""
# The same chip recovered: healthy, its fault cleared (the simulator raises the fault's recovery event).
RECOVERED_OVERLAY = """[[chip]]
logic_id = {logic_id}
health = 0
faults = []
"""
SCENARIOS = ("plain", "faults")


class Host:
    """A fake host of a sample topology under `root` (made anew), in a scenario: "plain", or "faults" raised through
    the simulator's overlay before the programs start."""

    def __init__(self, name: str, root: Path, target_dir: Path) -> None:
        self.name = name
        self.scenario = "plain"
        self.root = root
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        topology = root.parent / f"{name}.frozen.toml"
        topology.write_text(frozen_topology(name))
        subprocess.run([str(target_dir / "dcmi-sim"), "fake-host", "--topology", str(topology), "--root", str(root)],
                       check=True, stdout=subprocess.DEVNULL)
        self.topology = root / "etc" / "dcmi-sim" / "topology.toml"

    def environment(self) -> dict[str, str]:
        """What every program in the host is given: the simulator's topology, and the driver's library directory
        (Huawei's programs dlopen libdcmi.so from LD_LIBRARY_PATH, as the driver's install sets it)."""
        env = dict(os.environ)
        env["DCMI_SIM_CONFIG"] = str(self.topology)
        env["DCMI_SIM_OVERLAY"] = str(self.overlay)
        env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64/driver"
        return env

    @property
    def overlay(self) -> Path:
        return self.topology.parent / "overlay.toml"

    def label(self) -> str:
        """How results and logs name the host in its scenario."""
        return self.name if self.scenario == "plain" else f"{self.name}+{self.scenario}"

    def enter(self, scenario: str) -> None:
        """Sets the scenario: the overlay of its faults is written (atomically) or removed before programs start."""
        if scenario not in SCENARIOS:
            raise ValueError(f"no scenario {scenario!r}; there are {', '.join(SCENARIOS)}")
        self.scenario = scenario
        if scenario == "faults":
            self._write_overlay(FAULT_OVERLAY)
        else:
            self.overlay.unlink(missing_ok=True)

    def recover(self) -> None:
        """Clears the faults scenario's fault while programs run."""
        if self.scenario != "faults":
            raise ValueError(f"{self.label()}: only the faults scenario has a fault to clear")
        self._write_overlay(RECOVERED_OVERLAY)

    def chips(self) -> int:
        return len(list((self.root / "dev").glob("davinci[0-9]*")))

    def fault(self, logic_id: int, raised: bool) -> None:
        """While programs run: the chip of `logic_id` faulted as in the faults scenario (`raised`) or recovered, every
        other chip as the topology has it (the performance report's fault timings, benches/scripts/beside_huawei.py)."""
        self._write_overlay(FAULT_OVERLAY if raised else RECOVERED_OVERLAY, logic_id)

    def _write_overlay(self, template: str, logic_id: int | None = None) -> None:
        """The overlay for the faulted chip (by default logic id 1, or 0 on a one-chip host), written atomically."""
        if logic_id is None:
            logic_id = 1 if self.chips() > 1 else 0
        partial = self.overlay.with_suffix(".partial")
        partial.write_text(template.format(logic_id=logic_id))
        partial.rename(self.overlay)


_HANDED_OUT: set[int] = set()
_PORT_LOCK = threading.Lock()


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range, which it hands to outgoing connections."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port(low: int = 20000, high: int = 40000) -> int:
    """A loopback port free now, in [low, high) and below the kernel's ephemeral range: a port free now but in that
    range can be taken by any outgoing connection (the stand-in nodes' and the programs' own) before the program it
    is for binds it, which failed a run with "Address already in use". Huawei's exporter takes only 1025 to 40000 (its
    main.go, `checkIPAndPortInPrometheus`)."""
    high = min(high, _ephemeral_low())
    if high <= low:
        raise AssertionError(f"no loopback port below the ephemeral range ({high}) from {low}")
    with _PORT_LOCK:
        return _free_port(low, high)


def _free_port(low: int, high: int) -> int:
    start = low + os.getpid() % (high - low)
    for offset in range(high - low):
        port = low + (start - low + offset) % (high - low)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise AssertionError(f"no free loopback port in {low}..{high}")


class Program:
    """A program running in a host until stop(); its output goes to `log`."""

    def __init__(self, host: Host, argv: list[str], log: Path, binds: list[str] = (),
                 extra_env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self.output = log.open("wb")
        bind_args = [arg for bind in binds for arg in ("--bind", bind)]
        env = host.environment() | (extra_env or {})
        self.process = subprocess.Popen([str(IN_HOST), *bind_args, str(host.root), *argv], env=env,
                                        stdout=self.output, stderr=subprocess.STDOUT, start_new_session=True)

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.running():
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self.output.close()

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


def http_get(port: int, path: str = "/metrics", timeout: float = 10) -> str | None:
    """The body of a GET on loopback, or None while nothing answers there."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
            return response.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def wait_for(what: str, probe, program: Program, seconds: float):
    """probe() until it returns something true, while the program runs; fails naming what was awaited."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not program.running():
            raise AssertionError(f"{what}: the program exited ({program.process.returncode}):\n{program.tail()}")
        result = probe()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"{what}: not reached within {seconds:g}s:\n{program.tail()}")
