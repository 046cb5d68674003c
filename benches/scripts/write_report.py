#!/usr/bin/env python3
"""Writes docs/performance.md from the results directory of benches/run.sh: every figure comes from a result file
of this run, nothing is typed by hand. Exits 1 when a section was not measured."""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import subprocess
import sys

import report_sections as sections


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--elapsed-seconds", type=int, required=True)
    parser.add_argument("--build-seconds", type=int, required=True)
    parser.add_argument("--sections", type=int, nargs="+", metavar="NUMBER",
                        help="only these sections (benches/run.sh's PERF_SECTIONS); all by default")
    parser.add_argument("--merge-into", metavar="REPORT",
                        help="with --sections: also replace those sections in this existing report (their summary "
                             "rows, bodies and missed targets), keeping every other section as it is")
    args = parser.parse_args()
    if args.merge_into and not args.sections:
        parser.error("--merge-into needs --sections: a whole run writes the whole report")
    return args


class Results:
    """Read access to one run's results directory."""

    def __init__(self, directory):
        self.directory = directory

    def path(self, name):
        return os.path.join(self.directory, name)

    def text(self, name):
        path = self.path(name)
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def json(self, name):
        text = self.text(name)
        return json.loads(text) if text else None

    def failure(self, section):
        """Why `section` was not measured, or None if it was."""
        reason = self.text(f"{section}.error")
        return reason.strip() if reason else None

    def command(self, section):
        text = self.text(f"{section}.cmd")
        return text.strip() if text else "(not run)"

    def criterion(self):
        """{full_id: median ns} of the criterion benches of this run."""
        medians = {}
        pattern = os.path.join(self.directory, "criterion", "**", "new", "benchmark.json")
        for benchmark_path in glob.glob(pattern, recursive=True):
            with open(benchmark_path, encoding="utf-8") as handle:
                full_id = json.load(handle)["full_id"]
            with open(os.path.join(os.path.dirname(benchmark_path), "estimates.json"), encoding="utf-8") as handle:
                medians[full_id] = json.load(handle)["median"]["point_estimate"]
        return medians


def machine_line(args):
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            found = re.search(r"^model name\s*:\s*(.+)$", info.read(), re.M)
            cpu = found.group(1).strip() if found else cpu
    except OSError:
        pass
    revision = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                              check=False, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    only = f" Sections {', '.join(map(str, args.sections))} only (PERF_SECTIONS)." if args.sections else ""
    return (f"Measured {now} on {os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}, tree "
            f"`{revision or 'unknown'}`. The script took {args.elapsed_seconds} s in all, of which "
            f"{args.build_seconds} s building.{only}")


# cargo --timings embeds its per-unit figures as a JavaScript array in the HTML report.
TIMINGS_UNITS = re.compile(r"const UNIT_DATA = (\[.*?\]);\n", re.S)
SLOWEST_CRATES = 6


def slowest_crates(html):
    """[(crate, seconds)] of the slowest units of a `cargo build --timings` report, slowest first; [] if the
    report's format is not understood."""
    found = TIMINGS_UNITS.search(html or "")
    if not found:
        return []
    try:
        units = json.loads(found.group(1))
        ranked = sorted(((unit["duration"], unit["name"], unit.get("target", "").strip()) for unit in units),
                        reverse=True)
    except (ValueError, KeyError, TypeError):
        return []
    return [(f"{name} {target.replace(chr(34), '')}".strip(), seconds) for seconds, name, target in
            ranked[:SLOWEST_CRATES]]


def build_line(results):
    slowest = slowest_crates(results.text("build-timings.html"))
    if not slowest:
        return "No per-crate build timings (`build-timings.html`) in the results directory."
    listed = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in slowest)
    return (f"Building is one `cargo build --release` of every binary, bench and test the sections run; its slowest "
            f"compilations (each unit's wall time; cargo runs one job per CPU): {listed}. "
            "`build-timings.html` in the results directory has the whole timeline.")


def stolen_percent(start, end):
    """The share of CPU time the hypervisor gave to other guests between two `cpu` lines of /proc/stat (user nice
    system idle iowait irq softirq steal ...), in percent; None when either is missing or not understood."""
    try:
        before, after = ([int(field) for field in line.split()[1:9]] for line in (start, end))
    except (AttributeError, ValueError):
        return None
    if len(before) < 8 or len(after) < 8:
        return None
    total = sum(after) - sum(before)
    return 100.0 * (after[7] - before[7]) / total if total > 0 else None


def steal_line(results):
    """How much CPU the machine's host took away while the sections measured: the noise no ratio cancels."""
    stolen = stolen_percent(results.text("cpu_times.start"), results.text("cpu_times.end"))
    if stolen is None:
        return "CPU time stolen by the hypervisor during the measurements: not recorded."
    return (f"CPU time stolen by the hypervisor during the measurements: {stolen:.1f} % (what the virtual machine's "
            "host gave to other guests; with more than a few percent, latency tails and absolute times are longer "
            "than on a quieter day, and ratios of programs that wait differently drift too).")


SUMMARY_ROW = re.compile(r"^\| (\d+) \|")
SECTION_HEADING = re.compile(r"^## (\d+)\. ")
MISSED_ROW = re.compile(r"^\* §(\d+) ")
MISSED_HEADING = "## Targets missed"


def merge(existing, built, note):
    """`existing` report text with the sections of `built` replaced (or added, in section order): their summary
    rows, their bodies (each opened by `note`) and their missed targets; everything else is kept as it is."""
    numbers = {section.number for section in built}
    lines = existing.splitlines()
    if "## Summary" not in lines or MISSED_HEADING not in lines:
        raise ValueError("the report to merge into has no '## Summary' or '## Targets missed' heading")
    # Summary: the rows of other sections kept, the new rows where their number belongs.
    start = lines.index("## Summary")
    first_body = next(i for i, line in enumerate(lines) if SECTION_HEADING.match(line) or line == MISSED_HEADING)
    rows_at = [i for i in range(start, first_body) if SUMMARY_ROW.match(lines[i])]
    kept = [lines[i] for i in rows_at if int(SUMMARY_ROW.match(lines[i]).group(1)) not in numbers]
    new_rows = [row for section in built for row in section.summary_rows()]
    rows = sorted(kept + new_rows, key=lambda row: int(SUMMARY_ROW.match(row).group(1)))  # stable: order kept
    lines[rows_at[0]:rows_at[-1] + 1] = rows
    first_body += len(rows) - len(rows_at)
    # Bodies: each section runs from its heading to the next section's heading or the missed targets.
    bodies, order, current = {}, [], None
    end = lines.index(MISSED_HEADING)
    for line in lines[first_body:end]:
        found = SECTION_HEADING.match(line)
        if found:
            current = int(found.group(1))
            order.append(current)
            bodies[current] = []
        bodies[current].append(line)
    for section in built:
        body = section.body()
        bodies[section.number] = [body[0], "", note, *body[1:], ""]
        if section.number not in order:
            order.append(section.number)
    body_lines = [line for number in sorted(order) for line in bodies[number]]
    missed = [line for line in lines[end + 1:] if MISSED_ROW.match(line)
              and int(MISSED_ROW.match(line).group(1)) not in numbers]
    missed += [f"* {row}" for section in built for row in section.missed()]
    missed.sort(key=lambda row: int(MISSED_ROW.match(row).group(1)))
    return "\n".join([*lines[:first_body], *body_lines, MISSED_HEADING, "", *(missed or ["None."])]) + "\n"


def main():
    args = parse_arguments()
    results = Results(args.results)
    built = [section(results) for section in sections.ALL if not args.sections or section.number in args.sections]
    lines = [
        "# Performance",
        "",
        "Generated by `benches/run.sh` (do not edit by hand: run the script again). "
        + machine_line(args),
        "",
        build_line(results),
        "",
        steal_line(results),
        "",
        "These machines are shared and noisy, so every figure is a ratio or a comparison of measurements taken in "
        "the same run, and each is a median over repeats. Everything runs on loopback against the simulated driver "
        "(`dcmi-sim`); ports are chosen free at run time.",
        "",
        "## Summary",
        "",
        "| § | Figure | Measured | Target | Verdict |",
        "|---|---|---|---|---|",
    ]
    for section in built:
        lines += section.summary_rows()
    for section in built:
        lines += ["", *section.body()]
    missed = [row for section in built for row in section.missed()]
    lines += ["", "## Targets missed", ""]
    lines += [f"* {row}" for row in missed] or ["None."]
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    if args.merge_into:
        with open(args.merge_into, encoding="utf-8") as existing:
            merged = merge(existing.read(), built, f"*{machine_line(args)} Merged into the report above by "
                                                   "`PERF_MERGE_INTO`; the other sections are from their own run.*")
        with open(args.merge_into, "w", encoding="utf-8") as out:
            out.write(merged)
        print(f"merged sections {', '.join(map(str, args.sections))} into {args.merge_into}")
    unmeasured = [section.title for section in built if section.failures()]
    print(f"wrote {args.out}")
    for section in built:
        for row in section.summary_rows():
            print(row)
    if unmeasured:
        print(f"not measured: {', '.join(unmeasured)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
