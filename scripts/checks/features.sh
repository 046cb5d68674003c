#!/usr/bin/env bash
# Every publishable crate builds with each of its features alone and with none (run by scripts/test.sh). Inside the
# workspace cargo unifies features: a crate whose feature forgets a dependency's feature it needs still builds when
# some other member enables it, and breaks for the crates.io user who enables that one feature (found this way:
# ascend-deviceplugin's `cli` (then `daemon`) needed `ascend-cli/signal`). cargo-hack's --each-feature builds each crate alone.
# Installs cargo-hack (pinned, --locked) into the cargo home when missing. About 4 minutes here with a warm target.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo_hack_version=0.6.46
if ! cargo hack --version 2>/dev/null | grep -q "$cargo_hack_version"; then
    echo "--- installing cargo-hack $cargo_hack_version"
    cargo install cargo-hack --version "$cargo_hack_version" --locked --quiet
fi

mapfile -t crates < <(cargo metadata --format-version 1 --no-deps | python3 scripts/crate_metadata.py publishable | awk '{ print $1 }')
packages=()
for crate in "${crates[@]}"; do
    packages+=(--package "$crate")
done
echo "--- each feature alone, and none: ${crates[*]}"
# The library targets only: with resolver 2 their build sees no dev-dependency's features, as a user's build.
cargo hack check --each-feature --locked "${packages[@]}"
