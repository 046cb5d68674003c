"""What differs between Huawei's output and ours, and the list of differences we know and explain.

A difference is reported per (host, kind, metric, label) with how often it occurs and one example, so that eight
chips with the same difference make one line. Each known difference in peer-tests/known-differences.toml names the
Huawei source that explains it (a Huawei bug, a simulator limit, or a deliberate improvement of ours); a difference
not on the list fails the tier, and so does a listed one that no host shows any more (the list must not go stale).
"""

from __future__ import annotations

import fnmatch
import threading
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .exposition import Family, Labels, format_series, same_single_precision, same_value

KINDS = ("missing", "extra", "label", "value", "precision", "help", "type", "timestamp")
VERDICTS = ("huawei-bug", "ours-better", "simulator", "environment", "deliberate")


@dataclass(frozen=True)
class Key:
    program: str
    host: str
    kind: str
    metric: str
    label: str = ""


@dataclass
class Difference:
    key: Key
    count: int = 0
    example: str = ""

    def line(self) -> str:
        label = f" label {self.key.label}" if self.key.label else ""
        times = f" ({self.count} series)" if self.count > 1 else ""
        return f"{self.key.program} on {self.key.host}: {self.key.kind} {self.key.metric}{label}{times}: {self.example}"


class Collector:
    """Gathers differences, one per key."""

    def __init__(self) -> None:
        self.by_key: dict[Key, Difference] = {}
        self._lock = threading.Lock()  # hosts are compared side by side

    def add(self, key: Key, example: str) -> None:
        with self._lock:
            difference = self.by_key.setdefault(key, Difference(key))
            difference.count += 1
            if not difference.example:
                difference.example = example

    def all(self) -> list[Difference]:
        return sorted(self.by_key.values(), key=lambda d: (d.key.host, d.key.metric, d.key.kind, d.key.label))


def compare_scrapes(program: str, host: str, huawei: dict[str, Family], ours: dict[str, Family],
                    collector: Collector) -> None:
    """Every series Huawei's serves must be served by ours with the same labels and value, and the same HELP and TYPE
    for its family; ours serves nothing else."""
    def add(kind: str, metric: str, example: str, label: str = "") -> None:
        collector.add(Key(program, host, kind, metric, label), example)

    for name, theirs in huawei.items():
        mine = ours.get(name)
        if mine is None:
            if theirs.samples:
                add("missing", name, f"{len(theirs.samples)} series, e.g. {format_series(*next(iter(theirs.samples)))}")
            continue
        if theirs.samples and mine.samples:
            if (theirs.help or "") != (mine.help or ""):
                add("help", name, f"Huawei {theirs.help!r}, ours {mine.help!r}")
            if (theirs.type or "untyped") != (mine.type or "untyped"):
                add("type", name, f"Huawei {theirs.type}, ours {mine.type}")
            stamped = [s for s in theirs.samples.values() if s.timestamp_ms is not None]
            if stamped and not any(s.timestamp_ms is not None for s in mine.samples.values()):
                add("timestamp", name, "Huawei's samples carry timestamps, ours none")
        unmatched_mine = {key: sample for key, sample in mine.samples.items() if key not in theirs.samples}
        for key, sample in theirs.samples.items():
            if key in mine.samples:
                if same_value(sample.value, mine.samples[key].value):
                    pass
                elif same_single_precision(sample.value, mine.samples[key].value):
                    add("precision", key[0], f"{format_series(*key)}: Huawei {sample.value!r}, ours "
                                             f"{mine.samples[key].value!r}")
                else:
                    add("value", key[0], f"{format_series(*key)}: Huawei {sample.value:g}, ours "
                                         f"{mine.samples[key].value:g}")
                continue
            partner = _same_but_labels(key, unmatched_mine)
            if partner is None:
                add("missing", key[0], format_series(*key))
                continue
            unmatched_mine.pop(partner)
            for label in _differing_labels(key[1], partner[1]):
                add("label", key[0], f"{format_series(*key)}: ours {format_series(*partner)}", label)
        for key in unmatched_mine:
            add("extra", key[0], format_series(*key))
    for name, mine in ours.items():
        if name not in huawei and mine.samples:
            add("extra", name, f"{len(mine.samples)} series, e.g. {format_series(*next(iter(mine.samples)))}")


def compare_mappings(add, what: str, theirs: dict | None, mine: dict | None, ignore=frozenset(),
                     source: str = "ours") -> None:
    """Reports through add(kind, what, example) each key of two mappings (device nodes, environment, labels ...)
    that only one side has or that the two give other values."""
    theirs, mine = theirs or {}, mine or {}
    for key in sorted((set(theirs) | set(mine)) - set(ignore), key=str):
        if key not in mine:
            add("missing", f"{what} {key}", f"Huawei {key}={str(theirs[key])[:160]}")
        elif key not in theirs:
            add("extra", f"{what} {key}", f"{source} {key}={str(mine[key])[:160]}")
        elif theirs[key] != mine[key]:
            add("value", f"{what} {key}", f"Huawei {str(theirs[key])[:160]!r}, {source} {str(mine[key])[:160]!r}")


def _differing_labels(a: Labels, b: Labels) -> list[str]:
    da, db = dict(a), dict(b)
    return sorted(name for name in set(da) | set(db) if da.get(name) != db.get(name))


def _same_but_labels(key: tuple[str, Labels], candidates: dict) -> tuple[str, Labels] | None:
    """Ours's series of the same name that differs from `key` in the fewest labels (at most half of them): the same
    series written with other label values or names."""
    best, best_count = None, None
    for candidate in candidates:
        if candidate[0] != key[0]:
            continue
        count = len(_differing_labels(key[1], candidate[1]))
        if count * 2 <= max(len(key[1]), 1) and (best_count is None or count < best_count):
            best, best_count = candidate, count
    return best


@dataclass
class Known:
    program: str
    kind: str
    metric: str
    reason: str
    source: str
    verdict: str
    hosts: tuple[str, ...] = ("*",)
    label: str = ""
    used: int = 0
    where: str = field(default="", repr=False)

    def matches(self, key: Key) -> bool:
        return (self.program == key.program and self.kind == key.kind and self.label == key.label
                and fnmatch.fnmatchcase(key.metric, self.metric)
                and any(fnmatch.fnmatchcase(key.host, host) for host in self.hosts))


def load_known(path: Path) -> list[Known]:
    """The known differences; a malformed entry is an error naming it."""
    with path.open("rb") as file:
        document = tomllib.load(file)
    entries = []
    for index, entry in enumerate(document.get("difference", []), 1):
        where = f"{path.name}: difference {index}"
        missing = [name for name in ("program", "kind", "metric", "reason", "source", "verdict") if not entry.get(name)]
        if missing:
            raise ValueError(f"{where} lacks {', '.join(missing)}")
        if entry["kind"] not in KINDS:
            raise ValueError(f"{where}: kind {entry['kind']!r} is not one of {', '.join(KINDS)}")
        if entry["verdict"] not in VERDICTS:
            raise ValueError(f"{where}: verdict {entry['verdict']!r} is not one of {', '.join(VERDICTS)}")
        unknown = set(entry) - {"program", "kind", "metric", "reason", "source", "verdict", "hosts", "label"}
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        entries.append(Known(entry["program"], entry["kind"], entry["metric"], entry["reason"], entry["source"],
                             entry["verdict"], tuple(entry.get("hosts", ["*"])), entry.get("label", ""),
                             where=where))
    return entries


def judge(differences: list[Difference], known: list[Known]) -> tuple[list[Difference], list[tuple[Difference, Known]]]:
    """Splits the differences into the unexplained ones and the explained ones (with their entry)."""
    unexplained, explained = [], []
    for difference in differences:
        entry = next((entry for entry in known if entry.matches(difference.key)), None)
        if entry is None:
            unexplained.append(difference)
        else:
            entry.used += 1
            explained.append((difference, entry))
    return unexplained, explained


def stale(known: list[Known], programs: set[str], hosts: set[str]) -> list[Known]:
    """Entries of the programs compared in this run, for hosts it covered, that matched nothing."""
    def covered(entry: Known) -> bool:
        return entry.program in programs and any(fnmatch.filter(hosts, host) for host in entry.hosts)
    return [entry for entry in known if covered(entry) and entry.used == 0]


def group_by_host(differences: list[Difference]) -> dict[str, list[Difference]]:
    grouped: dict[str, list[Difference]] = defaultdict(list)
    for difference in differences:
        grouped[difference.key.host].append(difference)
    return grouped
