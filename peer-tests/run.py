#!/usr/bin/env python3
"""The comparison tier: each of Huawei's programs beside ours on every sample host (peer-tests/README.md).

    peer-tests/run.py --huawei-bin DIR --our-bin DIR [--hosts a,b] [--programs npu-exporter]

Prints every difference, explained or not, then one line per (program, host) test (a failed one with its error or
first unexplained difference) and the closing line
"N passed, N failed". Exits 1 when a difference is not in known-differences.toml or a known one no longer shows.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import device_plugin, exporter, hot_reset, runtime  # noqa: E402
from peers.differences import Collector, group_by_host, judge, load_known, stale  # noqa: E402
from peers.host import SCENARIOS, Host, sample_hosts  # noqa: E402

# Each comparison, and the scenarios it applies to (a spec edit does not depend on the chips' health).
PROGRAMS = {
    "npu-exporter": (exporter.compare, SCENARIOS),
    device_plugin.PROGRAM: (device_plugin.compare, SCENARIOS),
    runtime.PROGRAM: (runtime.compare, ("plain",)),
    # Raises its own fault on the plain host, and follows both plugins through the chip's reset.
    hot_reset.PROGRAM: (hot_reset.compare, ("plain",)),
}
# Run only when asked for by --programs: the hot-reset comparison waits out Huawei's fixed 60 s idle on every host.
OPT_IN = {hot_reset.PROGRAM}
KNOWN = Path(__file__).resolve().parent / "known-differences.toml"


def _test_of(key_host: str) -> str:
    """The test a difference belongs to: its host and scenario, without the device plugin's mode."""
    host, *rest = key_host.split("+")
    return f"{host}+faults" if "faults" in rest else host


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huawei-bin", type=Path, required=True, help="Huawei's programs (scripts/peers/build.sh)")
    parser.add_argument("--our-bin", type=Path, required=True, help="our binaries and dcmi-sim (cargo's target dir)")
    parser.add_argument("--work", type=Path, required=True, help="a root-owned scratch directory for hosts and logs")
    parser.add_argument("--hosts", default=",".join(sample_hosts()))
    parser.add_argument("--programs", default=",".join(name for name in PROGRAMS if name not in OPT_IN),
                        help=f"default: all but {', '.join(sorted(OPT_IN))}")
    parser.add_argument("--jobs", type=int, default=3, help="how many hosts are compared at once")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help="plain, and faults (a chip's health and fault code raised before the programs start)")
    args = parser.parse_args()
    hosts = [name for name in args.hosts.split(",") if name]
    programs = [name for name in args.programs.split(",") if name]
    scenarios = [name for name in args.scenarios.split(",") if name]
    for name in scenarios:
        if name not in SCENARIOS:
            parser.error(f"no scenario {name!r}; there are {', '.join(SCENARIOS)}")
    for name in hosts:
        if name not in sample_hosts():
            parser.error(f"no sample host {name!r}; the sample hosts are {', '.join(sample_hosts())}")
    for name in programs:
        if name not in PROGRAMS:
            parser.error(f"no comparison of {name!r}; there are {', '.join(PROGRAMS)}")
    known = load_known(KNOWN)
    args.work.mkdir(parents=True, exist_ok=True)
    # One run per work directory: two runs would share its fake hosts, and one's recovery would clear the other's
    # fault mid-record (seen as a chip Huawei's plugin lists healthy in the faulted state). Held until exit.
    lock = (args.work / "run.lock").open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        parser.error(f"another comparison run (pid {lock.read().strip() or '?'}) is using {args.work}; wait for it")
    lock.truncate(0)
    lock.write(str(os.getpid()))
    lock.flush()
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    collector = Collector()

    def run_host(name: str) -> list[tuple[str, str, str, float]]:
        """Every comparison on one host, its scenarios one after the other (a scenario rewrites the host)."""
        results = []
        host = Host(name, args.work / "hosts" / name, args.our_bin)
        for scenario in scenarios:
            host.enter(scenario)
            for program in programs:
                compare, applies_to = PROGRAMS[program]
                if scenario not in applies_to:
                    continue
                started = time.monotonic()
                try:
                    compare(host, args.huawei_bin, args.our_bin, logs, collector)
                    error = ""
                except AssertionError as failure:
                    error = str(failure)
                results.append((program, host.label(), error, time.monotonic() - started))
        return results

    # Hosts side by side: a comparison spends most of its time waiting for programs to settle (Huawei's plugin polls
    # every 5 s, its exporter's collectors run every few seconds), so on two cores three hosts at once take little
    # longer than one.
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = [result for per_host in pool.map(run_host, hosts) for result in per_host]
    unexplained, explained = judge(collector.all(), known)
    for difference, entry in explained:
        print(f"known ({entry.verdict}): {difference.line()}"[:300])
    # Each failed test's first unexplained difference, for its summary line: a CI log's tail shows the summary only.
    failed_tests: dict[tuple[str, str], str] = {}
    for difference in unexplained:
        test = (difference.key.program, _test_of(difference.key.host))
        failed_tests.setdefault(test, f"unexplained: {difference.line()}"[:300])
    for host_name, differences in group_by_host(unexplained).items():
        print(f"\n{len(differences)} unexplained difference(s) on {host_name}:")
        for difference in differences:
            print(f"  {difference.line()}"[:300])
    leftovers = stale(known, set(programs), set(hosts))
    for entry in leftovers:
        print(f"\nstale: {entry.where} ({entry.kind} {entry.metric}) matched no difference on {', '.join(hosts)}: "
              "remove it, or say why it still applies")
    print()
    passed = failed = 0
    for program, name, error, seconds in results:
        why = error or failed_tests.get((program, name), "")
        passed += not why
        failed += bool(why)
        print(f"{'FAIL' if why else 'ok  '} {program} on {name} ({seconds:.0f} s){': ' + why if why else ''}")
    failed += bool(leftovers)
    print(f"\n{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
