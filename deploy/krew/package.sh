#!/usr/bin/env bash
# Builds the kubectl-ascend release archives and writes the krew manifest (ascend.yaml) for them.
#
#   deploy/krew/package.sh BASE_URL [HOMEPAGE] [OUT_DIR]
#
# BASE_URL is where the archives will be downloaded from (the release's assets). Builds for x86_64 and aarch64
# Linux (glibc); a target whose Rust standard library is not installed (`rustup target add ...`) or that has no
# linker here fails the script with cargo's message. Needs sha256sum and tar.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BASE_URL=${1:?usage: package.sh BASE_URL [HOMEPAGE] [OUT_DIR]}
HOMEPAGE=${2:-$BASE_URL}
OUT=${3:-$ROOT/target/krew}
VERSION=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ascend-cluster"))')
TARGET_DIR=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
mkdir -p "$OUT"

declare -A SHA256
for pair in amd64:x86_64-unknown-linux-gnu arm64:aarch64-unknown-linux-gnu; do
    arch=${pair%%:*}
    target=${pair#*:}
    (cd "$ROOT" && cargo build --release --locked --target "$target" -p ascend-programs --no-default-features \
        --features kubectl-ascend --bin kubectl-ascend)
    stage=$(mktemp -d)
    cp "$TARGET_DIR/$target/release/kubectl-ascend" "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$stage/"
    archive="$OUT/kubectl-ascend-$VERSION-linux-$arch.tar.gz"
    tar -C "$stage" -czf "$archive" kubectl-ascend LICENSE-MIT LICENSE-APACHE
    rm -rf "$stage"
    SHA256[$arch]=$(sha256sum "$archive" | cut -d' ' -f1)
    echo "$archive ${SHA256[$arch]}"
done

sed -e "s#@VERSION@#$VERSION#g" -e "s#@BASE_URL@#$BASE_URL#g" -e "s#@HOMEPAGE@#$HOMEPAGE#g" \
    -e "s#@SHA256_LINUX_AMD64@#${SHA256[amd64]}#" -e "s#@SHA256_LINUX_ARM64@#${SHA256[arm64]}#" \
    "$ROOT/deploy/krew/ascend.yaml.in" >"$OUT/ascend.yaml"
echo "$OUT/ascend.yaml"
