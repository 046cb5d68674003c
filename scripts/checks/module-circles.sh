#!/usr/bin/env bash
# No import circle between the modules of any crate (run by scripts/test.sh): two modules that use each other,
# directly or around a loop, are one unit in disguise. scripts/module_circles.py builds each crate's module graph
# from its paths and names every circle with the line of each edge; its own test runs first.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 scripts/module_circles_test.py
crates=()
for manifest in */Cargo.toml fuzz/entries/Cargo.toml; do
    crate=$(dirname "$manifest")
    [[ -d $crate/src ]] && crates+=("$crate")
done
python3 scripts/module_circles.py "${crates[@]}"
