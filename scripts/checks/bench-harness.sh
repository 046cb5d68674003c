#!/usr/bin/env bash
# The performance harness (benches/run.sh and its helpers): shell lint and the helpers' unit tests. The harness
# itself is run by hand (about 45 minutes once built, its test bed included); CI only compiles the criterion benches.
set -euo pipefail
cd "$(dirname "$0")/../.."
shellcheck benches/run.sh
python3 -m unittest discover -s benches/scripts -p '*_test.py'
