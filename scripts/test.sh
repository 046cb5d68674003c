#!/usr/bin/env bash
# The whole test suite, as CI runs it: dependencies, formatting, generated-code drift, lints, tests, docs, benches
# compiled, and the checks of the deploy artifacts. Run from anywhere: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "dependencies"
bash scripts/install-deps.sh

step "formatting"
cargo fmt --all --check

step "generated code is current"
for generator in dcmi-sys/gen_bindings.sh ascend-deviceplugin/gen_protos.sh; do
    [[ -f $generator ]] && bash "$generator" --check
done

step "build (the simulator library first: the tests load it with dlopen)"
cargo build --workspace --all-targets --all-features

step "clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "tests"
cargo test --workspace --all-features --no-fail-fast

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

step "benches compile"
cargo bench --workspace --no-run

for check in scripts/checks/*.sh; do
    [[ -f $check ]] || continue
    step "$(basename "$check" .sh)"
    bash "$check"
done

step "all checks passed"
