#!/usr/bin/env python3
"""Section 4 of benches/run.sh: npu-exporter scrape throughput and latency under wrk, against nginx serving the same
metrics body as a static file; then the exporter's resident memory after a minute of load.

Method: the exporter runs against a simulated node of --chips 910B chips (driver answering instantly); one scrape
of /metrics is saved and served by nginx. For each of --rounds rounds, wrk loads the exporter and then nginx for
--seconds each, at two loads: --saturating-connections (throughput) and one connection (the latency a single
scraper sees while requests follow back to back). Medians over the rounds. Then, once --load-go-file exists (the
device plugin's load has started; the exporter loads alone after --go-timeout seconds), wrk loads the exporter for
--memory-seconds and VmRSS/VmHWM are read. --rounds-done-file is written when the rounds are over."""

import argparse
import os
import tempfile
import time

import cpu_profile
import nginx_static
import perf_common as common
import wrk_run


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exporter", required=True, help="the npu-exporter binary")
    parser.add_argument("--library", required=True, help="libdcmi_sim.so")
    parser.add_argument("--chips", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--saturating-connections", type=int, default=8)
    parser.add_argument("--memory-seconds", type=int, default=60)
    parser.add_argument("--rounds-done-file")
    parser.add_argument("--load-go-file")
    parser.add_argument("--go-timeout", type=float, default=180.0)
    parser.add_argument("--profile-seconds", type=int, default=5,
                        help="perf record of the exporter under saturating load (0: none)")
    parser.add_argument("--profile-report", help="where to keep perf's text report")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def compare(exporter_port, nginx_port, args, connections):
    exporter_runs, nginx_runs = [], []
    for _ in range(args.rounds):
        exporter_runs.append(wrk_run.run(f"http://127.0.0.1:{exporter_port}/metrics", args.seconds, connections))
        nginx_runs.append(wrk_run.run(f"http://127.0.0.1:{nginx_port}/metrics", args.seconds, connections))
    exporter = wrk_run.median_of_runs(exporter_runs)
    nginx = wrk_run.median_of_runs(nginx_runs)
    return {
        "connections": connections,
        "exporter": exporter,
        "nginx": nginx,
        "throughput_ratio": round(exporter["median"]["requests_per_s"] / nginx["median"]["requests_per_s"], 3),
    }


def wait_for(path, timeout_s):
    """True once `path` exists, False after the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.2)
    return False


def main():
    args = parse_arguments()
    with tempfile.TemporaryDirectory(prefix="perf-exporter-load") as directory:
        topology = os.path.join(directory, "topology.toml")
        overlay = os.path.join(directory, "overlay.toml")
        common.write_topology(topology, args.chips)
        common.write_overlay(overlay, "")
        exporter_port = common.free_port()
        log = os.path.join(directory, "exporter.log")
        with common.start_exporter(args.exporter, args.library, topology, overlay, exporter_port, log) as exporter:
            time.sleep(1.5)
            status, body, _ = common.http_get(exporter_port, "/metrics")
            if status != 200:
                raise common.MeasurementError(f"npu-exporter answered {status} to GET /metrics")
            nginx_port = common.free_port()
            with nginx_static.NginxStatic(body, nginx_port):
                saturating = compare(exporter_port, nginx_port, args, args.saturating_connections)
                single = compare(exporter_port, nginx_port, args, 1)
            profile = None
            if args.profile_seconds > 0:
                top, report = cpu_profile.profile_under_wrk(
                    exporter.pid, f"http://127.0.0.1:{exporter_port}/metrics", args.profile_seconds,
                    args.saturating_connections, os.path.join(directory, "perf.data"))
                profile = [{"percent": percent, "dso": dso, "symbol": symbol} for percent, dso, symbol in top]
                if args.profile_report:
                    with open(args.profile_report, "w", encoding="utf-8") as out:
                        out.write(report)
            if args.rounds_done_file:
                with open(args.rounds_done_file, "w", encoding="ascii") as done:
                    done.write("exporter rounds done\n")
            alongside = bool(args.load_go_file) and wait_for(args.load_go_file, args.go_timeout)
            idle_rss, _ = common.resident_kib(exporter.pid)
            memory_load = wrk_run.run(
                f"http://127.0.0.1:{exporter_port}/metrics", args.memory_seconds, args.saturating_connections)
            exporter.check_running()
            rss, high_water = common.resident_kib(exporter.pid)
    figures = {
        "chips": args.chips,
        "body_bytes": len(body),
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
        "saturating": saturating,
        "single_connection": single,
        "profile_top_self": profile,
        "memory": {
            "seconds": args.memory_seconds,
            "connections": args.saturating_connections,
            "alongside_device_plugin_load": alongside,
            "requests_per_s": memory_load["requests_per_s"],
            "rss_idle_kib": idle_rss,
            "rss_kib": rss,
            "rss_high_water_kib": high_water,
        },
    }
    common.write_json(args.out, figures)
    print(args.out)


if __name__ == "__main__":
    common.run_script("exporter_load", main)
