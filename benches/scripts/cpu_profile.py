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
    record = subprocess.run(
        ["perf", "record", "-F", str(SAMPLE_HZ), "-o", data_path, "-p", str(pid), "--", "sleep", str(seconds)],
        capture_output=True, text=True, timeout=seconds + 60, check=False)
    load.join(timeout=seconds + 40)
    if record.returncode != 0:
        raise common.MeasurementError(f"perf record -p {pid} failed: {record.stderr}")
    report = subprocess.run(
        ["perf", "report", "-i", data_path, "--stdio", "--no-children", "--sort", "dso,symbol",
         "--percent-limit", "0.5"],
        capture_output=True, text=True, timeout=120, check=False)
    if report.returncode != 0:
        raise common.MeasurementError(f"perf report of {data_path} failed: {report.stderr}")
    rows = []
    for line in report.stdout.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[0].endswith("%") and not line.startswith("#"):
            symbol = TRAILING_COLUMNS.sub("", fields[2]).strip()
            rows.append((float(fields[0].rstrip("%")), fields[1], symbol))
    return rows[:top], report.stdout
