"""npu-exporter: Huawei's and ours (Huawei naming) on the same host, scraped when both have settled."""

from __future__ import annotations

import time
from pathlib import Path

from .differences import Collector, compare_scrapes
from .exposition import Family, parse
from .host import Host, Program, free_port, http_get, wait_for

# Huawei's exporter answers 503 above one request per 50 ms per client unless told otherwise (its -limitIPReq); the
# tier scrapes about twice a second.
HUAWEI_FLAGS = ["-ip=127.0.0.1", "-containerMode=docker", "-limitIPReq=999/1"]
OUR_FLAGS = ["--metrics.naming=huawei", "--pod-resources.disable"]
# How long both get to read every chip and every group: Huawei's slowest collectors run every few seconds.
SETTLE_SECONDS = 60


def _fingerprint(families: dict[str, Family]) -> dict:
    return {(name, key): sample.value for name, family in families.items() for key, sample in family.samples.items()}


def settled_scrape(name: str, port: int, program: Program, rounds: int = 3) -> dict[str, Family]:
    """A scrape once `rounds` consecutive scrapes a second apart serve the same series with the same values (readings
    are frozen, so only a collector that has not run yet changes them)."""
    last, same = None, 0
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        body = wait_for(f"{name} answers /metrics", lambda: http_get(port), program, SETTLE_SECONDS)
        families = parse(body)
        fingerprint = _fingerprint(families)
        same = same + 1 if fingerprint == last else 0
        if same >= rounds - 1:
            return families
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: its scrape still changes after {SETTLE_SECONDS}s:\n{program.tail()}")
        last = fingerprint
        time.sleep(1)


def start_both(host: Host, huawei_bin: Path, our_bin: Path, logs: Path) -> tuple[Program, int, Program, int]:
    """Huawei's exporter and ours in the host, each on a free port: (Huawei's, its port, ours, its port). The
    performance report's comparison (benches/scripts/beside_huawei.py) runs them the same way."""
    label = host.label()
    huawei_port, our_port = free_port(), free_port()
    huawei = Program(host, [str(huawei_bin / "npu-exporter"), f"-port={huawei_port}",
                            f"-logFile={logs / f'{label}.huawei-npu-exporter.log'}", *HUAWEI_FLAGS],
                     logs / f"{label}.huawei-npu-exporter.out")
    try:
        ours = Program(host, [str(our_bin / "npu-exporter"), f"--web.listen-address=127.0.0.1:{our_port}",
                              *OUR_FLAGS], logs / f"{label}.npu-exporter.out")
    except BaseException:
        huawei.stop()
        raise
    return huawei, huawei_port, ours, our_port


def compare(host: Host, huawei_bin: Path, our_bin: Path, logs: Path, collector: Collector) -> None:
    label = host.label()
    huawei, huawei_port, ours, our_port = start_both(host, huawei_bin, our_bin, logs)
    try:
        theirs = settled_scrape("Huawei's npu-exporter", huawei_port, huawei)
        mine = settled_scrape("our npu-exporter", our_port, ours)
        # Both again, now that both have settled: what each serves at the same moment.
        theirs = settled_scrape("Huawei's npu-exporter", huawei_port, huawei, rounds=1)
        compare_scrapes("npu-exporter", label, theirs, mine, collector)
    finally:
        huawei.stop()
        ours.stop()
