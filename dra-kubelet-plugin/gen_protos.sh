#!/usr/bin/env bash
# Regenerates src/generated/*.rs from proto/ with the workspace's pure-Rust proto generator
# (ascend-deviceplugin/protogen: no protoc).
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
  --manifest-path "$repo_dir/ascend-deviceplugin/protogen/Cargo.toml" -- "$crate_dir/proto" "$scratch" \
  pluginregistration/v1/api.proto dra/v1/api.proto dra/v1beta1/api.proto dra-health/v1alpha1/api.proto
rustfmt --edition 2021 --config-path "$repo_dir/rustfmt.toml" "$scratch"/*.rs

# The generator names a file after its proto package; the committed names say which API each one is.
declare -A committed_name=(
  [pluginregistration.rs]=registration.rs
  [k8s.io.kubelet.pkg.apis.dra.v1.rs]=dra_v1.rs
  [k8s.io.kubelet.pkg.apis.dra.v1beta1.rs]=dra_v1beta1.rs
  [v1alpha1.rs]=health_v1alpha1.rs
)
status=0
for generated in "${!committed_name[@]}"; do
  committed="$crate_dir/src/generated/${committed_name[$generated]}"
  if [ "$mode" = "--check" ]; then
    if ! diff -u "$committed" "$scratch/$generated"; then
      echo "src/generated/${committed_name[$generated]} is out of date: run dra-kubelet-plugin/gen_protos.sh" >&2
      status=1
    fi
  else
    cp "$scratch/$generated" "$committed"
  fi
done
exit "$status"
