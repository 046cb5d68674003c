#!/usr/bin/env bash
# The whole test suite, as CI runs it: dependencies, formatting, generated-code drift, lints, tests, docs, benches
# compiled, and the checks of the deploy artifacts. Run from anywhere: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's line carries the minutes and seconds since the start and the free space where the builds go, so a CI log
# shows where the suite's time and disk go.
free_gb() { df -P -B1G "${CARGO_TARGET_DIR:-.}" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
step() { printf '\n==> [%dm%02ds] [%s GB free] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$(free_gb)" "$*"; }

# One build from a clean tree: incremental compilation's caches would only double the target directory (26 of 47 GB in
# a long-lived development tree) and a CI disk has filled up with them.
export CARGO_INCREMENTAL=0

step "dependencies"
bash scripts/install-deps.sh

# The tools refuse a libdcmi.so below a directory that anyone but root can write (the vendor's rule; the sticky
# bit does not excuse /tmp), and the tests lay out fake hosts, simulator included, under the target directory. So a
# checkout below such a directory (for example somewhere in /tmp) builds into a root-owned target directory instead.
untrusted_ancestor() {
    local dir=$1
    while :; do
        read -r owner mode < <(stat -L -c '%u %a' "$dir")
        if [[ $owner != 0 ]] || (( 8#$mode & 8#022 )); then
            echo "$dir"
            return 0
        fi
        [[ $dir == / ]] && return 1
        dir=$(dirname "$dir")
    done
}
if [[ -z ${CARGO_TARGET_DIR:-} && $(id -u) == 0 ]] && untrusted=$(untrusted_ancestor "$PWD"); then
    export CARGO_TARGET_DIR=/var/cache/ascend-rs-tests/target
    mkdir -p "$CARGO_TARGET_DIR"
    chmod 755 /var/cache/ascend-rs-tests "$CARGO_TARGET_DIR"
    echo "test: $untrusted is writable by others or not owned by root; building in $CARGO_TARGET_DIR"
fi

# The Go builds of the two tiers at the end (Huawei's programs for the comparison tier; Kubernetes, etcd, containerd,
# runc, helm, and Volcano with Huawei's Ascend plugin for the cluster tier), cached by version outside the repository,
# start now at the lowest CPU priority: they take the CPU the steps below leave idle (linking, the tests' and the
# tiers' waits, the checks' scripts) and the tiers wait for them. A build that fails here fails again, with its
# message, where its tier runs it below.
go_builds_log=$(mktemp)
setsid nice -n 19 bash -c \
    'bash scripts/peers/build.sh; bash scripts/cluster/build.sh; bash scripts/cluster/volcano.sh build' \
    >"$go_builds_log" 2>&1 &
go_builds=$!
trap 'kill -- -"$go_builds" 2>/dev/null || true' EXIT
wait_for_go_builds() {
    wait "$go_builds" || true
    trap - EXIT
    sed 's/^/    go builds: /' "$go_builds_log" | grep -v '^\s*go builds: \(go: downloading\|$\)' | tail -n 30
}

step "formatting"
cargo fmt --all --check

step "generated code is current"
bash dcmi-sys/gen_bindings.sh --check
bash scripts/gen_protos.sh --check

# --all-targets includes the criterion benches (benches/benches, ascend-exporter/benches, ascend-deviceplugin/benches):
# they are compiled here, in the dev profile, and run only by benches/run.sh. An optimised `cargo bench --no-run`
# would add a second full release build to every CI run for no extra checking.
# shellcheck source=scripts/forget_hashless_outputs.sh
source scripts/forget_hashless_outputs.sh

step "build, benches included (the simulator library too: the tests load it with dlopen)"
forget_hashless_outputs
cargo build --workspace --all-targets --all-features

step "clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "tests"
# The cluster tier's tests need the real cluster: they run below, once it is up.
test_args=(--workspace --all-features --exclude ascend-cluster-tests)
cargo test "${test_args[@]}" --no-fail-fast
# The test executables have done their work, and they are the largest thing on the disk: removed, so that the checks and
# the cluster tier's builds below have the room (a later run relinks them, compiling nothing). Cargo names them in its
# artifact messages; a build that is fresh prints those in seconds.
cargo test "${test_args[@]}" --no-run --message-format=json 2>/dev/null | python3 scripts/test_executables.py |
    xargs -r rm -f --

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

for check in scripts/checks/*.sh; do
    [[ -f $check ]] || continue
    step "$(basename "$check" .sh)"
    bash "$check"
done

# The comparison tier (docs/huawei-compatibility.md): Huawei's npu-exporter, device plugin and docker runtime, built
# from the mind-cluster tree beside the checkout (cached by commit outside the repository), run beside ours on every
# sample host; a difference not listed and explained in peer-tests/known-differences.toml fails it.
step "the Go builds started in the background (Huawei's programs, the test bed's Kubernetes)"
wait_for_go_builds
step "comparison tier: Huawei's programs beside ours (peer-tests/run.sh)"
bash peer-tests/run.sh

# The cluster tier (docs/testing.md): a real one-node Kubernetes built from its Go modules (cached by version outside
# the repository), our daemons deployed on it from deploy/, and the tests of cluster-tests/ one at a time. Torn down
# whatever happens.
step "cluster tier: bring up a real Kubernetes (scripts/cluster/up.sh)"
trap 'bash scripts/cluster/down.sh' EXIT
bash scripts/cluster/up.sh
step "cluster tier: tests"
forget_hashless_outputs
# No backtraces: a failing cluster test's panic names the state it waited for, and its report of the cluster (pods,
# our daemons' logs, warning events) is what says why; thirty frames of tokio per failure would push both out of a
# CI log's tail.
RUST_BACKTRACE=0 cargo test -p ascend-cluster-tests --no-fail-fast -- --test-threads=1 --nocapture
step "cluster tier: tear down"
bash scripts/cluster/down.sh
trap - EXIT

step "all checks passed"
