#!/usr/bin/env bash
# The declared minimum Rust version (`rust-version`) of the publishable crates holds (run by scripts/test.sh):
#   1. it is at least what each crate's normal and build dependencies declare, as locked in Cargo.lock
#      (scripts/crate_metadata.py rust-version), so cargo would not refuse the build on that toolchain;
#   2. our own code uses no standard-library API newer than it: clippy's `incompatible_msrv` lint reads the
#      declared version and runs, warnings denied, in the clippy step of scripts/test.sh;
#   3. the publishable crates build (`cargo check`, every feature) with that toolchain when rustup has it installed.
# Only rustup's toolchains already on the machine count: none is downloaded. Where the exact toolchain is missing,
# step 3 says so in the log, and 1 and 2 are what was checked; language features newer than the declared version
# are then not caught (docs/releasing.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf -- '--- %s\n' "$*"; }

say "declared rust-version against the dependencies' (Cargo.lock)"
declared=$(cargo metadata --format-version 1 --all-features --locked | python3 scripts/crate_metadata.py rust-version) || {
    echo "rust-version check: FAIL: see above" >&2
    exit 1
}
echo "$declared"

mapfile -t toolchains < <(awk '{ print $2 }' <<<"$declared" | sort -u)
installed=$(rustup toolchain list 2>/dev/null || true)
for toolchain in "${toolchains[@]}"; do
    # rustup names an installed release `1.88.0-<host>`; the manifests say `1.88` or `1.88.0`.
    [[ $toolchain == *.*.* ]] || toolchain+=.0
    mapfile -t crates < <(awk -v version="$toolchain" '{ v = $2; if (v !~ /\..*\./) v = v ".0"; if (v == version) print "-p\n" $1 }' <<<"$declared")
    if grep -q "^$toolchain-" <<<"$installed"; then
        say "cargo +$toolchain check ${crates[*]}"
        cargo "+$toolchain" check --locked --all-features "${crates[@]}"
    else
        say "toolchain $toolchain is not installed: building with it is NOT checked here (installed: $(awk '{ printf "%s ", $1 }' <<<"$installed"))"
    fi
done
