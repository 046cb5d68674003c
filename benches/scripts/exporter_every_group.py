#!/usr/bin/env python3
"""docs/performance.md sections 3 and 4 with every metric group on: the exporter on a 16-chip Atlas 800I A3 fake host
(`dcmi-sim fake-host`, its simulated hccn_tool at the driver's path), reading the DCMI groups, the slow bandwidth
group (HCCS and PCIe, 200 ms profiling windows) and the hccn_tool groups (network, roce, optical), in both namings.

--part load (section 4): the bytes of a scrape, then wrk with `Accept-Encoding: gzip` against the exporter and
against nginx serving the same compressed body with `gzip_static`, rounds alternating; the exporter's CPU per scrape
and p99, warm cache (the default) and with `--metrics.cache-max-age=0s` (render and compress every scrape).

--part isolation (section 3): the 60 s groups read every 2 s; scrape series (one every 100 ms, every scrape
rendered) with every chip answering, with one chip's hccn_tool hanging (killed at the default 5 s
`--hccn-tool.timeout`), and with that chip's HCCS and PCIe bandwidth calls taking 1.5 s each. Per phase and group:
the other chips' oldest `ascend_npu_sample_age_seconds`.

    python3 benches/scripts/exporter_every_group.py --exporter target/release/npu-exporter \\
        --dcmi-sim target/release/dcmi-sim --part load --out target/perf/every_group_load.json
"""

import argparse
import gzip
import os
import re
import tempfile
import time

import exporter_gzip
import nginx_static
import perf_common as common

SAMPLE = "atlas-800i-a3"
AGE_LINE = re.compile(r'^ascend_npu_sample_age_seconds\{chip="(\d+)"[^}]*group="(\w+)"[^}]*\} (\S+)$', re.M)
# The groups Huawei reads every 60 s, read every 2 s in the isolation part so that a delayed round shows.
FAST_SELECTION = "".join(f'[groups.{group}]\ninterval = "2s"\n\n'
                         for group in ("links", "bandwidth", "network", "roce", "optical"))
# The first chip of the sample (logic id 0) is the one that hangs or is slow.
FAULTY_LOGIC_ID = 0
HUNG_TOOL = f"[[chip]]\nlogic_id = {FAULTY_LOGIC_ID}\n\n[chip.network]\ntool_hangs = true\n"
SLOW_BANDWIDTH = "".join(f'[[inject]]\nfunction = "{function}"\nlogic_id = {FAULTY_LOGIC_ID}\nlatency_ms = 1500\n\n'
                         for function in ("dcmi_get_hccs_link_bandwidth_info", "dcmi_get_pcie_link_bandwidth_info"))


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exporter", required=True, help="the npu-exporter binary (a release build)")
    parser.add_argument("--dcmi-sim", required=True, help="the dcmi-sim binary, hccn_tool built beside it")
    parser.add_argument("--part", choices=("load", "isolation"), required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--scrapes", type=int, default=60)
    parser.add_argument("--settle-seconds", type=float, default=12.0,
                        help="wait after a fault starts: longer than the tool's 5 s timeout plus a 2 s round")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


class Node(common.ExporterNode):
    """The fake host with an exporter reading every group on it; `extra_args` after the common flags."""

    def __init__(self, args, extra_args=(), selection=""):
        self.directory = tempfile.TemporaryDirectory(prefix="perf-every-group")
        root = self.directory.name
        self.host = common.FakeHost(args.dcmi_sim, SAMPLE, os.path.join(root, "host"))
        flags = [f"--hccn-tool.path={self.host.hccn_tool}", "--metrics.naming=both"]
        if selection:
            path = os.path.join(root, "selection.toml")
            with open(path, "w", encoding="utf-8") as out:
                out.write(selection)
            flags.append(f"--metrics.selection-file={path}")
        self.port = common.free_port()
        self.exporter = common.start_exporter(
            args.exporter, self.host.library, self.host.topology, self.host.overlay, self.port,
            os.path.join(root, "exporter.log"), [*flags, *extra_args])
        self.chips = self.wait_every_group()

    def wait_every_group(self):
        """Waits until every chip has a sample of each group the sample host has (the bandwidth and network groups
        take a few seconds: profiling windows, one hccn_tool process per chip and query); returns the chip count."""
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            self.exporter.check_running()
            _, body, _ = common.http_get(self.port, "/metrics")
            ages = AGE_LINE.findall(body.decode("utf-8"))
            chips = {chip for chip, _, _ in ages}
            groups = {group for _, group, _ in ages}
            wanted = {"utilization", "chip_state", "memory", "identity", "links", "bandwidth", "network", "roce",
                      "optical"}
            if chips and wanted <= groups and len(ages) == len(chips) * len(groups):
                return len(chips)
            time.sleep(0.5)
        raise common.MeasurementError(f"not every group was read on every chip within 60 s; groups: {groups}")


def load(args):
    headers_plain = [("Accept", exporter_gzip.PROMETHEUS_ACCEPT)]
    headers_gzip = [*headers_plain, exporter_gzip.GZIP]
    figures = {"sample": SAMPLE, "connections": args.connections, "seconds_per_run": args.seconds,
               "rounds": args.rounds}
    with Node(args) as node:
        figures["chips"] = node.chips
        plain, _ = exporter_gzip.scrape(node.port, headers_plain)
        compressed, coding = exporter_gzip.scrape(node.port, headers_gzip)
        if coding != "gzip" or gzip.decompress(compressed).count(b"\n") < plain.count(b"\n") // 2:
            raise common.MeasurementError(f"the gzip scrape is broken (Content-Encoding {coding!r})")
        figures["plain_bytes"], figures["gzip_bytes"] = len(plain), len(compressed)
        url = f"http://127.0.0.1:{node.port}/metrics"
        figures["exporter_plain"], figures["cpu_ms_plain"] = exporter_gzip.cpu_per_scrape(
            node, url, args, headers_plain)
        nginx_port = common.free_port()
        with nginx_static.NginxStatic(compressed, nginx_port, precompressed=True) as nginx:
            figures.update(exporter_gzip.gzip_against_nginx(
                node, url, nginx, f"http://127.0.0.1:{nginx_port}/metrics", args, headers_gzip))
    with Node(args, ["--metrics.cache-max-age=0s"]) as node:
        url = f"http://127.0.0.1:{node.port}/metrics"
        figures["exporter_gzip_uncached"], figures["cpu_ms_gzip_uncached"] = exporter_gzip.cpu_per_scrape(
            node, url, args, headers_gzip)
    return figures


def oldest_ages(port, count, faulty_phy):
    """Per group, the other chips' oldest sample age of each of `count` scrapes (one every 100 ms)."""
    ages = {}
    for _ in range(count):
        status, body, _ = common.http_get(port, "/metrics")
        if status != 200:
            raise common.MeasurementError(f"GET /metrics answered {status}")
        oldest = {}
        for chip, group, value in AGE_LINE.findall(body.decode("utf-8")):
            if int(chip) != faulty_phy:
                oldest[group] = max(oldest.get(group, 0.0), float(value))
        for group, age in oldest.items():
            ages.setdefault(group, []).append(age)
        time.sleep(0.1)
    return {group: {"median": round(common.median(values), 3), "max": round(max(values), 3)}
            for group, values in sorted(ages.items())}


def faulty_phy_id(topology):
    """The physical id of the chip with logic id FAULTY_LOGIC_ID in the installed topology."""
    with open(topology, encoding="utf-8") as text:
        for block in text.read().split("[[card.chip]]")[1:]:
            logic = re.search(r"^logic_id = (\d+)$", block, re.M)
            phy = re.search(r"^phy_id = (\d+)$", block, re.M)
            if logic and phy and int(logic.group(1)) == FAULTY_LOGIC_ID:
                return int(phy.group(1))
    raise common.MeasurementError(f"{topology} has no chip of logic id {FAULTY_LOGIC_ID}")


def isolation(args):
    with Node(args, ["--metrics.cache-max-age=0s"], FAST_SELECTION) as node:
        faulty = faulty_phy_id(node.host.topology)
        phases = {}
        for name, overlay in (("calm", ""), ("hung_hccn_tool", HUNG_TOOL), ("slow_bandwidth", SLOW_BANDWIDTH)):
            common.write_overlay(node.host.overlay, overlay)
            time.sleep(args.settle_seconds if overlay else 2.0)
            phases[name] = oldest_ages(node.port, args.scrapes, faulty)
            node.exporter.check_running()
        return {"sample": SAMPLE, "chips": node.chips, "faulty_phy_id": faulty, "group_interval_s": 2,
                "scrape_interval_ms": 100, "scrapes": args.scrapes, "settle_s": args.settle_seconds,
                "phases": phases}


def main():
    args = parse_arguments()
    figures = load(args) if args.part == "load" else isolation(args)
    common.write_json(args.out, figures)
    print(figures)


if __name__ == "__main__":
    common.run_script("exporter_every_group", main)
