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

# --all-targets includes the criterion benches (benches/benches, examples/benches, ascend-deviceplugin/benches):
# they are compiled here, in the dev profile, and run only by benches/run.sh. An optimised `cargo bench --no-run`
# would add a second full release build to every CI run for no extra checking.
step "build, benches included (the simulator library too: the tests load it with dlopen)"
cargo build --workspace --all-targets --all-features

step "clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "tests"
cargo test --workspace --all-features --no-fail-fast

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

for check in scripts/checks/*.sh; do
    [[ -f $check ]] || continue
    step "$(basename "$check" .sh)"
    bash "$check"
done

step "all checks passed"
