"""Prometheus text exposition (format 0.0.4), read into what a scraper keeps of it.

A family is its name, HELP, TYPE and samples; a sample is identified by its name and its label set, whatever the order
the exporter wrote the labels in (Prometheus sorts them), and carries its value. Timestamps are kept apart: Prometheus
stores a sample at the scrape's time unless the exporter gives one.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


class ParseError(ValueError):
    """A line that is not valid exposition text; the message names the line."""


Labels = tuple[tuple[str, str], ...]


@dataclass
class Sample:
    value: float
    timestamp_ms: int | None = None


@dataclass
class Family:
    name: str
    help: str | None = None
    type: str | None = None
    samples: dict[tuple[str, Labels], Sample] = field(default_factory=dict)


def _labels(text: str, line_no: int) -> tuple[Labels, str]:
    """Reads `{a="b",...}` at the start of text; returns the sorted labels and the rest of the line."""
    assert text.startswith("{")
    position = 1
    labels: dict[str, str] = {}
    while True:
        while position < len(text) and text[position] in " ,":
            position += 1
        if position < len(text) and text[position] == "}":
            return tuple(sorted(labels.items())), text[position + 1 :]
        match = LABEL_NAME.match(text, position)
        if not match:
            raise ParseError(f"line {line_no}: expected a label name at column {position + 1}")
        name = match.group(0)
        position = match.end()
        if text[position : position + 2] != '="':
            raise ParseError(f'line {line_no}: expected =" after label {name}')
        position += 2
        value = []
        while True:
            if position >= len(text):
                raise ParseError(f"line {line_no}: label {name}'s value is not closed")
            char = text[position]
            if char == "\\":
                escaped = text[position + 1 : position + 2]
                if escaped not in ESCAPES:
                    raise ParseError(f"line {line_no}: unknown escape \\{escaped} in label {name}")
                value.append(ESCAPES[escaped])
                position += 2
            elif char == '"':
                position += 1
                break
            else:
                value.append(char)
                position += 1
        if name in labels:
            raise ParseError(f"line {line_no}: label {name} given twice")
        labels[name] = "".join(value)


def _value(text: str, line_no: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise ParseError(f"line {line_no}: {text!r} is not a sample value") from None


def family_of(sample_name: str, families: dict[str, Family]) -> str:
    """The family a sample belongs to: its own name, or a histogram's or summary's base name."""
    if sample_name in families:
        return sample_name
    for suffix in ("_bucket", "_sum", "_count", "_total", "_created", "_info"):
        base = sample_name.removesuffix(suffix)
        if base != sample_name and base in families:
            return base
    return sample_name


def parse(body: str) -> dict[str, Family]:
    """The families of a scrape body, by name. Raises ParseError naming the first malformed line."""
    families: dict[str, Family] = {}
    for line_no, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                family = families.setdefault(parts[2], Family(parts[2]))
                text = parts[3] if len(parts) > 3 else ""
                if parts[1] == "HELP":
                    family.help = text.replace("\\n", "\n").replace("\\\\", "\\")
                else:
                    family.type = text
            continue
        match = NAME.match(line)
        if not match:
            raise ParseError(f"line {line_no}: expected a metric name")
        name = match.group(0)
        rest = line[match.end() :]
        labels: Labels = ()
        if rest.startswith("{"):
            labels, rest = _labels(rest, line_no)
        fields = rest.split()
        if not 1 <= len(fields) <= 2:
            raise ParseError(f"line {line_no}: expected a value and at most a timestamp after {name}")
        value = _value(fields[0], line_no)
        timestamp = int(fields[1]) if len(fields) == 2 else None
        family_name = family_of(name, families)
        family = families.setdefault(family_name, Family(family_name))
        key = (name, labels)
        if key in family.samples:
            raise ParseError(f"line {line_no}: {name}{dict(labels)} given twice")
        family.samples[key] = Sample(value, timestamp)
    return families


def same_value(a: float, b: float) -> bool:
    """Equal as a scraper sees them: NaN equals NaN, and values equal to the last printed digit."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def same_single_precision(a: float, b: float) -> bool:
    """Equal once both are rounded to a 32-bit float, to one unit in the last place: a value one side computed in
    single precision (280.2 printed as 280.20001220703125; 3213 × 0.1f is 321.30002, one step above 321.3's float)."""
    try:
        bits_a, bits_b = (struct.unpack("<i", struct.pack("<f", value))[0] for value in (a, b))
    except OverflowError:
        return False
    return (bits_a < 0) == (bits_b < 0) and abs(bits_a - bits_b) <= 1


def format_series(name: str, labels: Labels) -> str:
    inner = ",".join(f'{key}="{value}"' for key, value in labels)
    return f"{name}{{{inner}}}" if labels else name
