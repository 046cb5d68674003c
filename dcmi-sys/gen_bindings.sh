#!/usr/bin/env bash
# Regenerates dcmi-sys/src/bindings.rs from the headers in dcmi-sys/include/ (the V2 header
# dcmi_interface_api_v2.h includes the V1 header dcmi_interface_api.h).
#
#   bash dcmi-sys/gen_bindings.sh           rewrite src/bindings.rs
#   bash dcmi-sys/gen_bindings.sh --check   fail with a diff if src/bindings.rs is stale (CI)
#
# Needs libclang (Debian: libclang-dev, listed in scripts/deps/debian.txt) and rustfmt.
# bindgen is pinned in generator/Cargo.toml and its whole dependency tree in
# generator/Cargo.lock (used with --locked), so every run produces the same file.
set -euo pipefail

crate_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace_dir=$(cd "$crate_dir/.." && pwd)
header="$crate_dir/include/dcmi_interface_api_v2.h"
committed="$crate_dir/src/bindings.rs"

mode=write
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# Inside the workspace's target directory, so rustfmt finds the repository's
# rustfmt.toml (if one is added) exactly as `cargo fmt` does.
generator_target_dir="$workspace_dir/target/dcmi-sys-generator"
mkdir -p "$generator_target_dir"
fresh="$generator_target_dir/bindings.rs"
rm -f "$fresh"

cargo run --quiet --locked \
    --manifest-path "$crate_dir/generator/Cargo.toml" \
    --target-dir "$generator_target_dir" \
    -- "$header" "$fresh"
rustfmt --edition 2021 "$fresh"

if [[ $mode == check ]]; then
    if ! diff -u "$committed" "$fresh"; then
        echo "error: dcmi-sys/src/bindings.rs is out of date with the headers in dcmi-sys/include/;" >&2
        echo "       run 'bash dcmi-sys/gen_bindings.sh' and commit the result." >&2
        exit 1
    fi
    echo "dcmi-sys/src/bindings.rs is up to date."
else
    cp "$fresh" "$committed"
    echo "wrote $committed"
fi
