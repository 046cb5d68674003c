"""Runs wrk (Debian) against a loopback URL for a bounded time and parses its report."""

import re
import subprocess

import perf_common as common

UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}
PERCENTILE_LINE = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", re.M)
RATE_LINE = re.compile(r"^Requests/sec:\s+([\d.]+)", re.M)
FAILURE_LINES = re.compile(r"^\s*(Non-2xx or 3xx responses|Socket errors):.*$", re.M)


def run(url, seconds, connections, threads=1, timeout_s=5, headers=()):
    """One wrk run: {"requests_per_s", "p50_ms", "p75_ms", "p90_ms", "p99_ms"}; raises on errors or non-2xx.
    `headers`: (name, value) pairs sent with every request."""
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", f"--timeout={timeout_s}s", "--latency"]
    for name, value in headers:
        argv += ["-H", f"{name}: {value}"]
    argv.append(url)
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30, check=False)
    if completed.returncode != 0:
        raise common.MeasurementError(f"{' '.join(argv)} exited with {completed.returncode}: {completed.stderr}")
    return parse_report(completed.stdout, " ".join(argv))


def parse_report(report, command="wrk"):
    """The figures of a `wrk --latency` report; raises on socket errors, non-2xx answers or a report without
    the rate and the four percentiles."""
    failures = FAILURE_LINES.findall(report)
    if failures:
        raise common.MeasurementError(f"{command} saw failures ({', '.join(failures)}):\n{report}")
    rate = RATE_LINE.search(report)
    percentiles = {f"p{p}_ms": float(value) * UNIT_MS[unit] for p, value, unit in PERCENTILE_LINE.findall(report)}
    if rate is None or len(percentiles) != 4:
        raise common.MeasurementError(f"cannot parse the report of {command}:\n{report}")
    return {"requests_per_s": float(rate.group(1)), **{k: round(v, 3) for k, v in percentiles.items()}}


def median_of_runs(runs):
    """Field-wise medians over repeated runs, plus the runs themselves."""
    fields = runs[0].keys()
    return {"median": {field: round(common.median([r[field] for r in runs]), 3) for field in fields}, "runs": runs}
