#!/usr/bin/env bash
# Regenerates src/generated/{v1beta1,v1}.rs from proto/ with the pure-Rust generator in protogen/ (no protoc).
#   ./gen_protos.sh          rewrite the committed files
#   ./gen_protos.sh --check  fail (exit 1) if the committed files differ from what the protos generate
set -euo pipefail
crate_dir="$(cd "$(dirname "$0")" && pwd)"
repo_dir="$(cd "$crate_dir/.." && pwd)"
mode="${1:-write}"
case "$mode" in
  write|--check) ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

CARGO_TARGET_DIR="$repo_dir/target/protogen" cargo run --quiet --locked \
  --manifest-path "$crate_dir/protogen/Cargo.toml" -- "$crate_dir/proto" "$scratch" \
  deviceplugin/v1beta1/api.proto podresources/v1/api.proto
# Format with the repository's rustfmt settings so `cargo fmt` leaves the committed files alone.
rustfmt --edition 2021 --config-path "$repo_dir/rustfmt.toml" "$scratch"/*.rs

status=0
for generated in v1beta1.rs v1.rs; do
  committed="$crate_dir/src/generated/$generated"
  if [ "$mode" = "--check" ]; then
    if ! diff -u "$committed" "$scratch/$generated"; then
      echo "src/generated/$generated is out of date: run ascend-deviceplugin/gen_protos.sh" >&2
      status=1
    fi
  else
    cp "$scratch/$generated" "$committed"
  fi
done
exit "$status"
