#!/usr/bin/env bash
# What a crates.io user would get, checked before anything is published (run by scripts/test.sh):
#   1. every publishable crate (from `cargo metadata`: `publish` is not false, so a crate added to the workspace is
#      covered without touching this script) states what crates.io and docs.rs show (scripts/crate_metadata.py);
#   2. `cargo package` of all of them at once packs and verifies each: it builds every crate from its .crate file,
#      with the unpublished siblings it needs served from the other .crate files (cargo's temporary local registry),
#      so a file a crate needs but does not ship fails here;
#   3. each .crate holds both license texts and the readme;
#   4. a crate outside the workspace (scripts/checks/package-consumer) depends on ascend-dcmi and dcmi-sim as a user's
#      crate does, with crates.io patched to the unpacked .crate files: it builds, runs a mock-driven test and loads
#      the packaged simulator's libdcmi_sim.so through ascend-dcmi's loader.
# Needs crates.io (the index is consulted as `cargo publish` would). What it costs: docs/releasing.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() {
    echo "package check: FAIL: $*" >&2
    exit 1
}
say() { printf -- '--- %s\n' "$*"; }

say "the helper's own tests; shellcheck of the release scripts"
python3 scripts/crate_metadata_test.py
shellcheck scripts/checks/package.sh scripts/checks/docs-rs.sh scripts/checks/rust-version.sh scripts/semver-check.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
# The verification and consumer builds are one-shot: incremental state would only cost time and disk.
export CARGO_INCREMENTAL=0
metadata=$(cargo metadata --format-version 1 --no-deps)
declare -A versions
crates=()
while read -r crate version _directory; do
    crates+=("$crate")
    versions[$crate]=$version
done < <(python3 scripts/crate_metadata.py publishable <<<"$metadata")
((${#crates[@]})) || die "cargo metadata lists no publishable crate"

say "manifests of ${crates[*]}"
python3 scripts/crate_metadata.py check-manifest <<<"$metadata" || die "the manifests above lack what crates.io shows"

say "cargo package (pack and verify) ${crates[*]}"
# Cargo unpacks the sibling .crate files of its temporary local registry under the cargo home and reuses an unpacked
# copy when one exists, so a second run would verify against the sources of the first (found so: a module deleted
# since the last run still compiled into the verification). Our crates are not on crates.io: every unpacked copy of
# this version is one of those stale ones. Likewise the verification builds treat a registry crate of a given version
# as immutable and reuse its compiled library from an earlier run: they get a target directory of their own, emptied
# each run (on CI's clean clone this costs nothing extra).
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for crate in "${crates[@]}"; do
    rm -rf "$cargo_home"/registry/src/*/"$crate-${versions[$crate]}"
done
verify_target=$target/package-verify
rm -rf "$verify_target"
package_args=()
for crate in "${crates[@]}"; do package_args+=(-p "$crate"); done
# --allow-dirty: a developer runs this with uncommitted changes; CI runs it on a clean clone, where it changes nothing.
CARGO_TARGET_DIR="$verify_target" cargo package --allow-dirty "${package_args[@]}"

say "license texts and readme in each .crate"
unpacked="$target/package-check/crates"
rm -rf "$unpacked"
mkdir -p "$unpacked"
patches=()
for crate in "${crates[@]}"; do
    stem="$crate-${versions[$crate]}"
    archive="$verify_target/package/$stem.crate"
    [[ -f $archive ]] || die "cargo package left no $archive"
    listing=$(tar -tzf "$archive")
    for file in LICENSE-MIT LICENSE-APACHE README.md; do
        grep -qx "$stem/$file" <<<"$listing" || die "$archive does not ship $file"
    done
    tar -xzf "$archive" -C "$unpacked"
    patches+=(--config "patch.crates-io.$crate.path='$unpacked/$stem'")
done
# Emptied at the start of every run anyway, and 3 GB of verification builds (the .crate files are unpacked above):
# the disk is the CI run's tightest resource.
rm -rf "$verify_target"

say "a crate outside the workspace builds and tests against the packaged crates"
consumer="$target/package-check/consumer"
rm -rf "$consumer"
cp -r scripts/checks/package-consumer "$consumer"
# The workspace's lock file pins the same dependency versions as the workspace build: nothing new to download, and
# compiled dependencies in the shared target directory are reused.
cp Cargo.lock "$consumer/Cargo.lock"
# Every packaged crate is patched in; those outside the consumer's graph draw cargo's "patch was not used" warning.
CARGO_TARGET_DIR="$target" cargo test --manifest-path "$consumer/Cargo.toml" "${patches[@]}"

say "package check passed for ${crates[*]}"
