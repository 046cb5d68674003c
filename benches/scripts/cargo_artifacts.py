#!/usr/bin/env python3
"""Finds a built executable in the JSON messages of `cargo build --message-format json-render-diagnostics`: benches
and tests live under target/release/deps with a hash in their name, which only cargo's messages tell.

    cargo_artifacts.py MESSAGES_FILE KIND NAME     # KIND: bench, test or bin; prints the path, or exits 1"""

import json
import sys


def executables(lines):
    """{(kind, name): path} of every executable cargo reported building."""
    found = {}
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        target = message["target"]
        for kind in target["kind"]:
            found[(kind, target["name"])] = message["executable"]
    return found


def find(lines, kind, name):
    """The executable of target `name` of kind `kind`; raises LookupError naming what was built instead."""
    built = executables(lines)
    if (kind, name) in built:
        return built[(kind, name)]
    names = ", ".join(f"{k} {n}" for k, n in sorted(built)) or "nothing"
    raise LookupError(f"cargo built no {kind} executable named {name} (it built: {names})")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    messages, kind, name = sys.argv[1:]
    try:
        with open(messages, encoding="utf-8") as handle:
            print(find(handle, kind, name))
    except (OSError, LookupError, ValueError) as error:
        sys.exit(f"{messages}: {error}")


if __name__ == "__main__":
    main()
