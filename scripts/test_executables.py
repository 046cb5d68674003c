"""Prints the test executables named in Cargo's JSON messages (`cargo test --no-run --message-format=json` on stdin),
one path per line: scripts/test.sh removes them once the tests have run."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["profile"]["test"] and message.get("executable"):
        print(message["executable"])
