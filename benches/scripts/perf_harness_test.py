"""Tests of the benches/run.sh helpers that do not need the components: report parsers, percentiles, and the
report writer on a synthetic results directory (figures come from the files; a failed section is "not measured"
and makes it exit 1). Run: python3 -m unittest discover -s benches/scripts -p '*_test.py'"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import container_start
import perf_common
import report_sections
import wrk_run

HERE = os.path.dirname(os.path.abspath(__file__))

WRK_REPORT = """Running 5s test @ http://127.0.0.1:40000/metrics
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     6.10ms    4.19ms  50.42ms   76.39%
  Latency Distribution
     50%  850.00us
     75%    6.85ms
     90%    9.97ms
     99%    1.02s
  4350 requests in 3.10s, 1.09GB read
Requests/sec:   1402.98
Transfer/sec:    359.98MB
"""

# The efficiency table line of benches/benches/full_poll.rs, as its format string prints it.
EFFICIENCY = ("fake, 2000us per call         chips  64  chain   22.134ms  waves 16  ideal  354.144ms  "
              "sampler  360.001ms  poll/ideal 1.017\n"
              "dcmi-sim, 1 ms per call       chips   8  chain   11.2ms  waves  2  ideal   22.4ms  "
              "sampler   23.9ms  poll/ideal 1.067\n")


class ParserTests(unittest.TestCase):
    def test_wrk_units_and_rate(self):
        figures = wrk_run.parse_report(WRK_REPORT)
        self.assertEqual(figures["requests_per_s"], 1402.98)
        self.assertEqual(figures["p50_ms"], 0.85)
        self.assertEqual(figures["p75_ms"], 6.85)
        self.assertEqual(figures["p99_ms"], 1020.0)

    def test_wrk_errors_fail_the_run(self):
        with self.assertRaises(perf_common.MeasurementError):
            wrk_run.parse_report(WRK_REPORT + "  Non-2xx or 3xx responses: 12\n")
        with self.assertRaises(perf_common.MeasurementError):
            wrk_run.parse_report("Requests/sec: 10\n")

    def test_efficiency_table(self):
        lines = [m.groupdict() for m in report_sections.EFFICIENCY_LINE.finditer(EFFICIENCY)]
        self.assertEqual([line["label"] for line in lines], ["fake, 2000us per call", "dcmi-sim, 1 ms per call"])
        self.assertEqual(lines[0]["chips"], "64")
        self.assertEqual(lines[0]["waves"], "16")
        self.assertAlmostEqual(report_sections.duration_ns(lines[0]["chain"]), 22_134_000.0)
        self.assertEqual(lines[1]["ratio"], "1.067")

    def test_rust_durations(self):
        self.assertEqual(report_sections.duration_ns("12.5µs"), 12_500.0)
        self.assertEqual(report_sections.duration_ns("1.5s"), 1.5e9)
        with self.assertRaises(ValueError):
            report_sections.duration_ns("12 ms")

    def test_strace_line(self):
        found = container_start.SYSCALL_LINE.match("4242  fsync(4)            = 0 <0.004400>")
        self.assertEqual((found.group(1), found.group(2)), ("fsync", "0.004400"))

    def test_percentiles(self):
        values = list(range(100, 0, -1))
        self.assertEqual(perf_common.nearest_rank(values, 0.99), 99)
        self.assertEqual(perf_common.nearest_rank(values, 0.5), 50)
        self.assertEqual(perf_common.median([3, 1, 2, 10]), 2.5)


class ReportTests(unittest.TestCase):
    def write(self, directory, name, content):
        with open(os.path.join(directory, name), "w", encoding="utf-8") as out:
            out.write(content if isinstance(content, str) else json.dumps(content))

    def test_figures_come_from_the_files_and_failures_are_reported(self):
        with tempfile.TemporaryDirectory() as results:
            self.write(results, "criterion.error", "did not finish within 600 s: boom")
            self.write(results, "allocations.error", "the release build failed")
            self.write(results, "container_start.cmd", "python3 benches/scripts/container_start.py --runs 10")
            self.write(results, "container_start.json", {
                "runs_per_mode": {"plain": 30, "runtime": 30, "hook": 30},
                "median_ms": {"plain": 40.0, "runtime": 42.0, "hook": 48.0},
                "p90_ms": {"plain": 41.0, "runtime": 43.0, "hook": 50.0},
                "ratio_to_plain": {"plain": 1.0, "runtime": 1.05, "hook": 1.2},
                "ctk_startup_ms": 1.5, "plain_runc_injected_spec_ms": 41.0, "ctk_shim_phase_ms": 3.0,
                "cpu_ms": {"ctk_shim_phase": 2.0},
                "ctk_shim_syscalls": {"total_ms": 1.0, "top": [{"syscall": "fsync", "calls": 1, "ms": 0.9}]},
                "ctk_shim_cpu_by_object": [{"object": "ascend-ctk", "percent": 60.0}], "ctk_used_dcmi": True,
            })
            out = os.path.join(results, "performance.md")
            completed = subprocess.run(
                [sys.executable, os.path.join(HERE, "write_report.py"), "--results", results, "--out", out,
                 "--elapsed-seconds", "321", "--build-seconds", "100"],
                capture_output=True, text=True, check=False)
            self.assertEqual(completed.returncode, 1, completed.stderr)
            with open(out, encoding="utf-8") as report:
                text = report.read()
        self.assertIn("not measured: criterion: did not finish within 600 s: boom", text)
        self.assertIn("| 6 | runtime mode / plain runc, median start | 1.050x (+5.0 %) | < +10 % | met |", text)
        self.assertIn("| 6 | hook mode / plain runc, median start | 1.200x (+20.0 %) | < +10 % | **missed** |", text)
        self.assertIn("python3 benches/scripts/container_start.py --runs 10", text)
        self.assertIn("The script took 321 s in all", text)
        # No result file and no recorded reason: still "not measured", never a made-up figure.
        self.assertIn("| 3 | A hung chip | not measured: hung_chip: its result files are incomplete", text)


if __name__ == "__main__":
    unittest.main()
