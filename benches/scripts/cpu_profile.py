"""Where a process spends its CPU time under load: `perf record` (Debian linux-perf) attached to it while wrk runs,
reduced to the top symbols by self time. Used when a target is missed, to show where the time goes."""

import re
import subprocess
import threading

import perf_common as common
import wrk_run

SAMPLE_HZ = 999
# perf pads the symbol column and appends empty source-line columns ("-  -").
TRAILING_COLUMNS = re.compile(r"(\s+-)*\s*$")


def profile_under_wrk(pid, url, seconds, connections, data_path, top=15):
    """Samples `pid` for `seconds` while wrk loads `url`; returns [(percent, dso, symbol)] of the top symbols by
    self time, and the text report."""
    load = threading.Thread(target=wrk_run.run, args=(url, seconds + 2, connections), daemon=True)
    load.start()
    record(pid, seconds, data_path)
    load.join(timeout=seconds + 40)
    return top_symbols(data_path, top)


def record(pid, seconds, data_path):
    """`perf record` of `pid` (and the children it starts meanwhile) for `seconds`."""
    recorded = subprocess.run(
        ["perf", "record", "-F", str(SAMPLE_HZ), "-o", data_path, "-p", str(pid), "--", "sleep", str(seconds)],
        capture_output=True, text=True, timeout=seconds + 60, check=False)
    if recorded.returncode != 0:
        raise common.MeasurementError(f"perf record -p {pid} failed: {recorded.stderr}")


def top_symbols(data_path, top=15, sort="dso,symbol"):
    """[(percent, dso, symbol)] of the top entries of a recording by self time (by `sort`), and the text report."""
    report = subprocess.run(
        ["perf", "report", "-i", data_path, "--stdio", "--no-children", "--sort", sort, "--percent-limit", "0.5"],
        capture_output=True, text=True, timeout=120, check=False)
    if report.returncode != 0:
        raise common.MeasurementError(f"perf report of {data_path} failed: {report.stderr}")
    rows = []
    for line in report.stdout.splitlines():
        fields = line.split(None, 2)
        if len(fields) >= 2 and fields[0].endswith("%") and not line.startswith("#"):
            symbol = TRAILING_COLUMNS.sub("", fields[2]).strip() if len(fields) == 3 else ""
            rows.append((float(fields[0].rstrip("%")), fields[1], symbol))
    return rows[:top], report.stdout
