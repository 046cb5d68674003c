#!/usr/bin/env bash
# cargo with nightly features, for the two jobs that need them (scripts/checks/docs-rs.sh: rustdoc's doc_cfg and
# --cfg docsrs; scripts/fuzz.sh: cargo-fuzz's -Zsanitizer). Usage: scripts/cargo-nightly.sh <cargo arguments>
#
# With a rustup nightly toolchain installed it is `cargo +nightly`. Without one (a new machine may have stable only,
# and the registries reached here serve no toolchains) it is the stable toolchain with RUSTC_BOOTSTRAP=1, which lets
# stable rustc and rustdoc accept the same unstable flags. It says which on stderr, so a log shows what ran.
set -euo pipefail
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "cargo-nightly: cargo +nightly" >&2
    exec cargo +nightly "$@"
fi
echo "cargo-nightly: no nightly toolchain; stable $(rustc --version | cut -d' ' -f2) with RUSTC_BOOTSTRAP=1" >&2
RUSTC_BOOTSTRAP=1 exec cargo "$@"
