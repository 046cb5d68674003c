#!/usr/bin/env bash
# The published docs render as docs.rs would build them (run by scripts/test.sh): the publishable crates documented
# with a nightly toolchain, every feature on and `--cfg docsrs`, so `doc_cfg` puts a feature badge on each gated item;
# warnings are errors. scripts/crate_metadata.py check-manifest (in scripts/checks/package.sh) holds every crate's
# `[package.metadata.docs.rs]` to exactly that (all features, `--cfg docsrs`), which is why one build stands for all.
# Then the pages a downstream tester needs must be there: MockDeviceManager, with its `mock` badge.
# docs.rs itself always builds with nightly; scripts/cargo-nightly.sh uses a nightly toolchain when rustup has one, and
# otherwise stable with RUSTC_BOOTSTRAP=1 (never a skip).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() {
    echo "docs.rs check: FAIL: $*" >&2
    exit 1
}

target=${CARGO_TARGET_DIR:-$PWD/target}
# Its own target directory: the nightly pages must not overwrite the stable `cargo doc` output developers read.
docs_target="$target/docs-rs"

package_args=()
while read -r crate _version _directory; do
    package_args+=(-p "$crate")
done < <(cargo metadata --format-version 1 --no-deps | python3 scripts/crate_metadata.py publishable)

printf -- '--- nightly cargo doc %s\n' "${package_args[*]}"
RUSTDOCFLAGS="--cfg docsrs -D warnings" scripts/cargo-nightly.sh doc --locked --no-deps --all-features \
    --target-dir "$docs_target" "${package_args[@]}"

mock_page="$docs_target/doc/ascend_dcmi/struct.MockDeviceManager.html"
[[ -f $mock_page ]] || die "$mock_page was not rendered"
grep -q 'Available on <strong>crate feature <code>mock</code></strong> only' "$mock_page" ||
    die "$mock_page has no \`mock\` feature badge (is #![cfg_attr(docsrs, feature(doc_cfg))] gone?)"
for crate_docs in "$docs_target"/doc/*/; do
    [[ -f $crate_docs/index.html ]] || continue
    badges=$(grep -rhoE 'crate feature <code>[^<]+</code>' "$crate_docs" | sed -E 's/.*<code>([^<]+)<.*/\1/' |
        sort | uniq -c | awk '{ printf "%s (%s) ", $2, $1 }' || true)
    echo "$(basename "$crate_docs"): feature badges ${badges:-none}"
done
# The pages stay for reading; the nightly compiler's check builds of every dependency (0.8 GB) are of no further use,
# and the disk is the CI run's tightest resource.
rm -rf "$docs_target/debug"
echo "docs.rs check passed"
