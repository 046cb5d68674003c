#!/usr/bin/env python3
"""Section 3 of benches/run.sh: one hung chip against the others' sample age and the scrape latency.

npu-exporter (default flags: 2 s per-chip deadline, 4 chips at once; `--metrics.cache-max-age=0s` so that every
scrape renders and reports the ages of that moment) runs against a simulated node. The same
scrape series (fresh connection per scrape, one every 100 ms) is taken with every chip answering and again after
the simulator's overlay makes every call of one chip block (`hang = true`). From each scrape: its latency, and per
metric group the oldest `ascend_npu_sample_age_seconds` among the chips that are not hung. The utilization group
(read every second) is the one a delayed round would show first."""

import argparse
import os
import re
import tempfile
import time

import perf_common as common

AGE_LINE = re.compile(r'^ascend_npu_sample_age_seconds\{chip="(\d+)"[^}]*group="(\w+)"[^}]*\} (\S+)$', re.M)
UP_LINE = re.compile(r'^ascend_npu_up\{chip="(\d+)"[^}]*\} (\S+)$', re.M)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exporter", required=True, help="the npu-exporter binary")
    parser.add_argument("--library", required=True, help="libdcmi_sim.so")
    parser.add_argument("--chips", type=int, default=64)
    parser.add_argument("--hung-logic-id", type=int, default=5)
    parser.add_argument("--scrapes", type=int, default=60)
    parser.add_argument("--settle-seconds", type=float, default=4.0,
                        help="wait after the hang starts (longer than the 2 s deadline)")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def scrape_series(port, count, hung_phy):
    """Latencies (ms), per group the other chips' oldest sample age of each scrape (s), and the last scrape's
    `up` values."""
    latencies, oldest_ages, up = [], {}, {}
    for _ in range(count):
        status, body, milliseconds = common.http_get(port, "/metrics")
        if status != 200:
            raise common.MeasurementError(f"GET /metrics answered {status}")
        text = body.decode("utf-8")
        oldest = {}
        for chip, group, value in AGE_LINE.findall(text):
            if int(chip) != hung_phy:
                oldest[group] = max(oldest.get(group, 0.0), float(value))
        if not oldest:
            raise common.MeasurementError("no ascend_npu_sample_age_seconds series in the scrape")
        latencies.append(milliseconds)
        for group, age in oldest.items():
            oldest_ages.setdefault(group, []).append(age)
        up = {int(chip): float(value) for chip, value in UP_LINE.findall(text)}
        time.sleep(0.1)
    return latencies, oldest_ages, up


def phase_figures(latencies, oldest_ages):
    return {
        "scrape_latency": common.latency_summary(latencies),
        "other_chips_oldest_age_s": {
            group: {"median": round(common.median(ages), 3), "max": round(max(ages), 3)}
            for group, ages in sorted(oldest_ages.items())
        },
    }


def main():
    args = parse_arguments()
    hung_phy = args.chips - 1 - args.hung_logic_id
    with tempfile.TemporaryDirectory(prefix="perf-hung-chip") as directory:
        topology = os.path.join(directory, "topology.toml")
        overlay = os.path.join(directory, "overlay.toml")
        common.write_topology(topology, args.chips)
        common.write_overlay(overlay, "")
        port = common.free_port()
        log = os.path.join(directory, "exporter.log")
        # Every scrape renders (no cached body), so each age is the age at the moment of the scrape: a cached body
        # shows the ages of its render, which depend on when the render happened relative to the rounds.
        with common.start_exporter(args.exporter, args.library, topology, overlay, port, log,
                                   extra_args=("--metrics.cache-max-age=0s",)) as exporter:
            time.sleep(2.0)
            healthy = scrape_series(port, args.scrapes, hung_phy)
            common.write_overlay(
                overlay, f'[[inject]]\nfunction = "*"\nlogic_id = {args.hung_logic_id}\nhang = true\n')
            time.sleep(args.settle_seconds)
            hung = scrape_series(port, args.scrapes, hung_phy)
            exporter.check_running()
        others_up = [value for chip, value in hung[2].items() if chip != hung_phy]
        figures = {
            "chips": args.chips,
            "hung_phy_id": hung_phy,
            "scrape_interval_ms": 100,
            "without_hang": phase_figures(healthy[0], healthy[1]),
            "with_hang": phase_figures(hung[0], hung[1]),
            "hung_chip_up": hung[2].get(hung_phy),
            "other_chips_up": all(value == 1.0 for value in others_up) and len(others_up) == args.chips - 1,
        }
    common.write_json(args.out, figures)
    print(args.out)


if __name__ == "__main__":
    common.run_script("exporter_hung_chip", main)
