#!/usr/bin/env bash
# API compatibility of the publishable crates since a baseline, with cargo-semver-checks: a change that breaks users
# fails unless the version bump in [workspace.package] allows it (a 0.x minor bump allows breaking changes). The
# release checklist (docs/releasing.md) runs it before every release; CI does not, because installing the tool costs
# a long build on every fresh CI machine.
#
#   scripts/semver-check.sh [BASELINE]
#
# BASELINE is any git revision; by default the newest release tag (`v<major>.<minor>.<patch>`) reachable from HEAD.
# Until the first release there is no tag and nothing published to compare with: the script says so and fails, and
# the first release skips this step (it is the baseline of the next). Crates that did not exist at the baseline are
# new: they are listed and not compared.
# Needs: cargo install cargo-semver-checks --locked
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
    echo "semver check: FAIL: $*" >&2
    exit 1
}

command -v cargo-semver-checks >/dev/null || die "cargo-semver-checks is not installed (cargo install cargo-semver-checks --locked)"

if (($# > 0)); then
    baseline=$1
else
    baseline=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null) ||
        die "no release tag v<x.y.z> yet, so no baseline: the first release is the baseline of the next; to compare with another revision, pass it: $0 <revision>"
fi
git rev-parse --verify --quiet "$baseline^{commit}" >/dev/null || die "$baseline is not a git revision"

compared=()
while read -r crate _version directory; do
    if git cat-file -e "$baseline:$directory/Cargo.toml" 2>/dev/null; then
        compared+=(--package "$crate")
    else
        echo "$crate: new since $baseline, nothing to compare"
    fi
done < <(cargo metadata --format-version 1 --no-deps | python3 scripts/crate_metadata.py publishable)
((${#compared[@]})) || die "no publishable crate existed at $baseline"

echo "semver check: $((${#compared[@]} / 2)) crates against $baseline"
cargo semver-checks --baseline-rev "$baseline" --all-features "${compared[@]}"
