#!/usr/bin/env bash
# Reproduces docs/performance.md: builds the release binaries once, runs every section with bounded durations on
# loopback (ports chosen free at run time), prints the figures and writes the report from the measured numbers.
#
#   benches/run.sh                      # everything: about 45 minutes on a 2-core machine once built; it brings
#                                       # the test bed of scripts/cluster/up.sh up for sections 7, 9, 10 and 11's
#                                       # DRA drivers after the quiet sections, and down again at the end
#   PERF_RESULTS_DIR=/var/lib/ascend-perf benches/run.sh   # a root-owned path (not under /tmp: section 6 needs
#                                          # every directory above its fake host's driver library root's alone)
#   PERF_REPORT=/tmp/performance.md benches/run.sh    # the report elsewhere than docs/performance.md
#   PERF_SECTIONS="1 2" benches/run.sh     # only these sections (built and run), to check a change to them; the
#                                          # report then holds only them and goes to the results directory
#   PERF_SECTIONS=11 PERF_MERGE_INTO=docs/performance.md benches/run.sh
#                                          # and also replace those sections (their summary rows, bodies and missed
#                                          # targets) in an existing report, keeping every other section's figures
#   MIND_CLUSTER_TREE=DIR benches/run.sh   # section 11's Huawei programs built from this mind-cluster checkout
#                                          # (scripts/peers/build.sh; default ../shared/peers/mind-cluster)
#   LIBBOUNDSCHECK_TREE=DIR benches/run.sh # and Huawei's ascend-docker-cli with this libboundscheck checkout
#                                          # (default ../shared/peers/libboundscheck; without it section 11 says
#                                          # why container start through Huawei's hook is not measured)
#   PERF_HOST_LOCK=FILE benches/run.sh     # section 11 holds this lock shared while its fake hosts exist (default
#                                          # /tmp/ascend-host.lock, which the real test bed's owner takes
#                                          # exclusively around up.sh and down.sh; empty: none)
#
# Needs root (runc containers, device nodes) and the Debian packages of scripts/deps/debian.txt (runc,
# busybox-static, wrk, nginx, hyperfine, linux-perf). A section that cannot be measured is reported as
# "not measured: <reason>" and makes the script exit non-zero at the end; a missed target does not.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPTS="$ROOT/benches/scripts"
# The sections to run, by number; all when empty. A partial report never replaces docs/performance.md by default.
SECTIONS=$(printf '%s' "${PERF_SECTIONS:-}" | tr ',' ' ')
if [ -n "$(printf '%s' "$SECTIONS" | tr -d ' 0-9')" ]; then
    echo "PERF_SECTIONS=$PERF_SECTIONS: give section numbers 1 to 11, separated by spaces or commas" >&2
    exit 2
fi
STARTED=$(date +%s)

TARGET_DIR=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
RESULTS=${PERF_RESULTS_DIR:-$TARGET_DIR/perf}
if [ -z "$SECTIONS" ]; then
    REPORT=${PERF_REPORT:-$ROOT/docs/performance.md}
else
    REPORT=${PERF_REPORT:-$RESULTS/performance.md}
fi
BIN="$TARGET_DIR/release"
LIBRARY="$BIN/libdcmi_sim.so"

# Every background process this script starts, stopped by pid on exit.
BACKGROUND_PIDS=()
# The real-cluster test bed, when this script brought it up (sections 7, 9, 10): taken down on exit.
TEST_BED_OURS=0
cleanup() {
    local pid
    for pid in "${BACKGROUND_PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
        fi
    done
    wait 2>/dev/null || true
    if [ "$TEST_BED_OURS" -eq 1 ]; then
        TEST_BED_OURS=0
        bash "$ROOT/scripts/cluster/down.sh" --quiet || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '[run.sh %4ds] %s\n' "$(($(date +%s) - STARTED))" "$*"; }

# selected NUMBER...: whether any of the sections is to run (PERF_SECTIONS).
selected() {
    local number
    [ -z "$SECTIONS" ] && return 0
    for number in "$@"; do
        [[ " $SECTIONS " == *" $number "* ]] && return 0
    done
    return 1
}

# Records why a section was not measured (shown in the report).
not_measured() {
    local name=$1 reason=$2
    printf '%s\n' "$reason" >"$RESULTS/$name.error"
    log "$name: not measured: $reason"
}

# run_section NAME SECONDS COMMAND...: runs a section with a time bound, its output in NAME.log, its command line
# in NAME.cmd (quoted in the report as the command to reproduce it).
run_section() {
    local name=$1 seconds=$2
    shift 2
    printf '%q ' "$@" | sed "s#$TARGET_DIR#target#g; s#$ROOT/##g; s#$ROOT#.#g" >"$RESULTS/$name.cmd"
    log "$name: $*"
    local status=0
    timeout --kill-after=10 "$seconds" "$@" >"$RESULTS/$name.log" 2>&1 || status=$?
    [ "$status" -eq 0 ] && return 0
    local reason="exit status $status"
    [ "$status" -eq 124 ] && reason="did not finish within $seconds s"
    not_measured "$name" "$reason: $(tail -n 3 "$RESULTS/$name.log" | tr '\n' ' ')"
    return 1
}

# missing_tools TOOL...: prints the tools that are not on PATH.
missing_tools() {
    local tool absent=()
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || absent+=("$tool")
    done
    printf '%s' "${absent[*]:-}"
}

# start_background NAME SECONDS COMMAND...: like run_section, in the background; the pid (of `timeout`, which passes
# a SIGTERM on to the command) is left in BACKGROUND_PID and recorded for the exit trap.
start_background() {
    local name=$1 seconds=$2
    shift 2
    printf '%q ' "$@" | sed "s#$TARGET_DIR#target#g; s#$ROOT/##g; s#$ROOT#.#g" >"$RESULTS/$name.cmd"
    log "$name (background): $*"
    timeout --kill-after=10 "$seconds" "$@" >"$RESULTS/$name.log" 2>&1 &
    BACKGROUND_PID=$!
    BACKGROUND_PIDS+=("$BACKGROUND_PID")
}

# finish_background NAME PID SECONDS: waits for a section started with start_background.
finish_background() {
    local name=$1 pid=$2 seconds=$3 status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] && return 0
    local reason="exit status $status"
    [ "$status" -eq 124 ] && reason="did not finish within $seconds s"
    not_measured "$name" "$reason: $(tail -n 3 "$RESULTS/$name.log" | tr '\n' ' ')"
    return 1
}

test_bed_running() {
    "$ROOT/scripts/cluster/kubectl" get --raw /readyz --request-timeout=5s >/dev/null 2>&1
}

# Every section but the real cluster's measures one program on a quiet machine. A running test bed is not quiet: its
# kubelet, containerd, API server and our DaemonSets sampling eight chips took a third of both cores, and its fake
# host's files (a simulated hccn_tool among them) reached the sections' own daemons; one run beside it measured
# sections 1 to 6 up to seven times slower on unchanged code. So this script brings the test bed up itself, after
# them.
if test_bed_running && selected 1 2 3 4 5 6 7 8; then
    echo "a real-cluster test bed is running: sections 1 to 8 measure on a quiet machine. Take it down" \
        "(bash scripts/cluster/down.sh; this script brings one up for sections 7, 9 and 10 after the others)," \
        "or select only those: PERF_SECTIONS=\"9 10\"" >&2
    exit 2
fi

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
log "results in $RESULTS"

# ---- build, once ----------------------------------------------------------------------------------------------
# One cargo invocation builds everything the sections run, so cargo resolves features once and compiles each crate
# once: separate `cargo build`, `cargo bench` and `cargo test` runs select different packages, unify different
# features, and so compile the same crates again (and overwrite target/release/libdcmi_sim.so with a build made
# with other features). The bench and test executables are then run directly, never through a cargo command that
# would resolve features anew. Only the binaries the sections use are built. With test and bench targets selected,
# cargo also turns on the selected packages' dev-dependency features, here ascend-dcmi's `mock` (one more type in
# the binaries, their code paths unchanged): far cheaper than compiling the TLS, gRPC and HTTP stacks twice.
SIM_ALLOC_TEST="$ROOT/ascend-dcmi/tests/sampler_alloc_sim.rs"
BUILD_TARGETS=(--lib)
selected 1 && BUILD_TARGETS+=(--bench safe_vs_raw)
selected 2 && BUILD_TARGETS+=(--bench full_poll --test sampler_alloc)
selected 2 && [ -e "$SIM_ALLOC_TEST" ] && BUILD_TARGETS+=(--test sampler_alloc_sim)
selected 3 4 5 && BUILD_TARGETS+=(--bin npu-exporter)
selected 3 4 && BUILD_TARGETS+=(--bin dcmi-sim --bin hccn_tool)
selected 4 5 && BUILD_TARGETS+=(--bin ascend-device-plugin --bin perf-device-plugin)
selected 6 && BUILD_TARGETS+=(--bin ascend-ctk --bin ascend-ctk-hook --bin dcmi-sim)
selected 7 && BUILD_TARGETS+=(--bin ascend-dra-driver --bin perf-dra-driver --bin perf-pod-start)
selected 8 && BUILD_TARGETS+=(--bin kubectl-ascend --bin perf-kubectl-ascend)
selected 9 && BUILD_TARGETS+=(--bin perf-api-requests)
selected 10 && BUILD_TARGETS+=(--bin ascend-device-plugin --bin ascend-node-labeller --bin ascend-dra-driver)
selected 10 && BUILD_TARGETS+=(--bin perf-fleet)
BUILD_PACKAGES=(-p ascend-programs -p dcmi-sim -p ascend-benches -p ascend-dcmi)
# Section 11: both exporters and device plugins in the comparison tier's fake hosts; peer-node is its stand-in node.
selected 11 && BUILD_PACKAGES+=(-p ascend-peer-harness)
selected 11 && BUILD_TARGETS+=(--bin npu-exporter --bin ascend-device-plugin --bin dcmi-sim --bin hccn_tool)
selected 11 && BUILD_TARGETS+=(--bin peer-node)
# Section 11's DRA drivers on the real cluster: ours beside Huawei's.
selected 11 && BUILD_TARGETS+=(--bin perf-dra-beside-huawei)
# Section 11's container start: our runtime and hook beside Huawei's (section 6's binaries).
selected 11 && BUILD_TARGETS+=(--bin ascend-ctk --bin ascend-ctk-hook)
BUILD_OK=1
# One retry: rustc has been seen to crash (SIGSEGV in LLVM) on these loaded machines; a real error fails twice.
run_section build 1800 bash -c "cd '$ROOT' && build() {
        cargo build --release ${BUILD_PACKAGES[*]} ${BUILD_TARGETS[*]} \
            --message-format json-render-diagnostics --timings >'$RESULTS/build.messages'
    } && { build || build; }" || BUILD_OK=0
# ascend-ctk-hook relinked statically (glibc), as the images ship it (deploy/docker): it loads no library, and a
# static start skips the dynamic loader on every container start in hook mode. Only the final link is redone.
STATIC_HOOK_OK=0
if selected 6 11 && [ "$BUILD_OK" -eq 1 ] && run_section build_static_hook 600 bash -c "cd '$ROOT' &&
        cargo rustc --release -p ascend-programs --bin ascend-ctk-hook -- -C target-feature=+crt-static \
            -C relocation-model=static"; then
    STATIC_HOOK_OK=1
fi
# Section 11: Huawei's programs, through the comparison tier's cached build (scripts/peers/build.sh; about 6 minutes
# the first time on a machine, nothing once cached). Without a mind-cluster tree the section is not measured.
HUAWEI_BIN=
if selected 11; then
    peers_status=0
    timeout --kill-after=10 3600 bash "$ROOT/scripts/peers/build.sh" >"$RESULTS/peers_build.log" 2>&1 ||
        peers_status=$?
    if [ "$peers_status" -eq 0 ]; then
        HUAWEI_BIN=$(tail -n 1 "$RESULTS/peers_build.log")
    elif [ "$peers_status" -eq 3 ]; then
        not_measured beside_huawei "no mind-cluster tree to build Huawei's programs from: give one with \
MIND_CLUSTER_TREE=DIR (a checkout of Ascend/mind-cluster at the commit of scripts/peers/versions.env)"
    else
        not_measured beside_huawei "scripts/peers/build.sh failed (exit status $peers_status): \
$(tail -n 3 "$RESULTS/peers_build.log" | tr '\n' ' ')"
    fi
fi
# Where the build's time went, per crate (the report names the slowest).
cp "$TARGET_DIR/cargo-timings/cargo-timing.html" "$RESULTS/build-timings.html" 2>/dev/null || true
BUILD_SECONDS=$(($(date +%s) - STARTED))
# The machine's CPU times around the measurements: the report gives the share the hypervisor stole meanwhile.
head -n 1 /proc/stat >"$RESULTS/cpu_times.start"
printf '%s\n' "$BUILD_SECONDS" >"$RESULTS/build.seconds"

built() {
    local name=$1
    if [ "$BUILD_OK" -ne 1 ]; then
        not_measured "$name" "the release build failed (see build.log)"
        return 1
    fi
}

# executable SECTION KIND NAME: prints the path of the built bench or test executable NAME (from cargo's messages);
# if there is none, records SECTION as not measured and fails.
executable() {
    local section=$1 kind=$2 name=$3 path
    if path=$(python3 "$SCRIPTS/cargo_artifacts.py" "$RESULTS/build.messages" "$kind" "$name" 2>&1); then
        printf '%s' "$path"
        return 0
    fi
    not_measured "$section" "$path" >&2
    return 1
}

# reproduce NAME COMMAND: the command the report quotes for NAME, when the script ran a built executable directly.
reproduce() {
    printf '%s\n' "$2" >"$RESULTS/$1.cmd"
}

# ---- sections 1 and 2: the criterion benches of the sampler's owners, and the allocation tests -----------------
if selected 1 && built safe_vs_raw && bench=$(executable safe_vs_raw bench safe_vs_raw); then
    run_section safe_vs_raw 120 env CRITERION_HOME="$RESULTS/criterion" DCMI_SIM_LIBRARY="$LIBRARY" \
        ASCEND_BENCH_SAFE_VS_RAW_JSON="$RESULTS/safe_vs_raw.json" \
        "$bench" --bench --warm-up-time 1 --measurement-time 3 || true
    reproduce safe_vs_raw "ASCEND_BENCH_SAFE_VS_RAW_JSON=safe_vs_raw.json cargo bench -p ascend-benches --bench \
safe_vs_raw -- --warm-up-time 1 --measurement-time 3"
fi
if selected 2 && built full_poll && bench=$(executable full_poll bench full_poll); then
    run_section full_poll 300 env CRITERION_HOME="$RESULTS/criterion" DCMI_SIM_LIBRARY="$LIBRARY" \
        ASCEND_BENCH_LATENCY_MS=2 ASCEND_BENCH_FULL_POLL_JSON="$RESULTS/full_poll.json" \
        "$bench" --bench --warm-up-time 1 --measurement-time 3 || true
    reproduce full_poll "ASCEND_BENCH_LATENCY_MS=2 ASCEND_BENCH_FULL_POLL_JSON=full_poll.json cargo bench \
-p ascend-benches --bench full_poll -- --warm-up-time 1 --measurement-time 3"
fi
# A missing allocation test is "not measured", never a pass. sampler_alloc_sim prints a count per API family.
if selected 2; then
    for test in sampler_alloc sampler_alloc_sim; do
        name=allocations${test#sampler_alloc}
        if [ "$test" = sampler_alloc_sim ] && [ ! -e "$SIM_ALLOC_TEST" ]; then
            not_measured "$name" "ascend-dcmi/tests/$test.rs does not exist in this tree"
        elif built "$name" && binary=$(executable "$name" test "$test"); then
            run_section "$name" 120 env DCMI_SIM_LIBRARY="$LIBRARY" "$binary" --nocapture || true
            reproduce "$name" "cargo test --release -p ascend-dcmi --test $test -- --nocapture"
        fi
    done
fi

# ---- section 3: a hung chip -----------------------------------------------------------------------------------
if selected 3 && built hung_chip; then
    run_section hung_chip 180 python3 "$SCRIPTS/exporter_hung_chip.py" --exporter "$BIN/npu-exporter" \
        --library "$LIBRARY" --chips 64 --out "$RESULTS/hung_chip.json" || true
    # Every group on a 16-chip A3 fake host: a hung hccn_tool and slow bandwidth calls on one chip. About 50 s.
    run_section every_group_isolation 180 python3 "$SCRIPTS/exporter_every_group.py" --part isolation \
        --exporter "$BIN/npu-exporter" --dcmi-sim "$BIN/dcmi-sim" --out "$RESULTS/every_group_isolation.json" || true
fi

# ---- sections 4 and 5: exporter under wrk against nginx; device plugin; a shared minute of load ----------------
EXPORTER_BUILT=0
DEVICE_PLUGIN_BUILT=0
selected 4 5 && built exporter_load && EXPORTER_BUILT=1
selected 4 5 && built device_plugin && DEVICE_PLUGIN_BUILT=1
if selected 4 5 && [ "$EXPORTER_BUILT" -eq 1 ] && [ "$DEVICE_PLUGIN_BUILT" -eq 1 ]; then
    missing=$(missing_tools wrk nginx perf)
    ROUNDS_DONE="$RESULTS/exporter_rounds.done"
    LOAD_GO="$RESULTS/device_plugin_load.started"
    EXPORTER_LOAD_PID=
    if [ -n "$missing" ]; then
        not_measured exporter_load "missing tools: $missing (scripts/deps/debian.txt)"
    else
        start_background exporter_load 420 python3 "$SCRIPTS/exporter_load.py" --exporter "$BIN/npu-exporter" \
            --library "$LIBRARY" --chips 64 --rounds 3 --seconds 5 --memory-seconds 60 \
            --rounds-done-file "$ROUNDS_DONE" --load-go-file "$LOAD_GO" \
            --profile-report "$RESULTS/exporter_profile.txt" --out "$RESULTS/exporter_load.json"
        EXPORTER_LOAD_PID=$BACKGROUND_PID
        # The device plugin's quiet measurements wait until wrk has left the machine.
        while [ ! -e "$ROUNDS_DONE" ] && kill -0 "$EXPORTER_LOAD_PID" 2>/dev/null; do sleep 0.5; done
    fi
    run_section device_plugin 300 "$BIN/perf-device-plugin" --daemon "$BIN/ascend-device-plugin" \
        --library "$LIBRARY" --allocations 2000 --fault-repeats 10 --poll-interval-ms 1000 --load-seconds 60 \
        --ready-file "$LOAD_GO" --out "$RESULTS/device_plugin.json" || true
    if [ -n "$EXPORTER_LOAD_PID" ]; then
        finish_background exporter_load "$EXPORTER_LOAD_PID" 420 || true
    fi
fi

# ---- section 4, compressed scrapes: bytes per scrape, gzip against nginx gzip_static, CPU per scrape -----------
# About 90 s; after the load above, so that wrk and the device plugin's minute are off the machine.
if selected 4 && built exporter_gzip; then
    missing=$(missing_tools wrk nginx)
    if [ -n "$missing" ]; then
        not_measured exporter_gzip "missing tools: $missing (scripts/deps/debian.txt)"
        not_measured every_group_load "missing tools: $missing (scripts/deps/debian.txt)"
    else
        run_section exporter_gzip 300 python3 "$SCRIPTS/exporter_gzip.py" --exporter "$BIN/npu-exporter" \
            --library "$LIBRARY" --sizes 8,64,256 --load-chips 64 --rounds 5 --seconds 3 \
            --out "$RESULTS/exporter_gzip.json" || true
        # Every group (DCMI, bandwidth, hccn_tool) on a 16-chip A3 fake host, both namings. About 60 s. Five
        # rounds: where the kernel puts wrk's connections moves a round's ratio to nginx by up to a third.
        run_section every_group_load 300 python3 "$SCRIPTS/exporter_every_group.py" --part load \
            --exporter "$BIN/npu-exporter" --dcmi-sim "$BIN/dcmi-sim" --rounds 5 --seconds 3 \
            --out "$RESULTS/every_group_load.json" || true
    fi
fi

# ---- section 6: container start -------------------------------------------------------------------------------
if selected 6 && built container_start; then
    missing=$(missing_tools runc hyperfine busybox strace perf)
    if [ "$(id -u)" -ne 0 ]; then
        not_measured container_start "needs root (runc containers with device nodes)"
    elif [ "$STATIC_HOOK_OK" -ne 1 ]; then
        not_measured container_start "the static link of ascend-ctk-hook failed (see build_static_hook.log)"
    elif [ -n "$missing" ]; then
        not_measured container_start "missing tools: $missing (scripts/deps/debian.txt)"
    else
        # 900 starts per command: a start varies by several milliseconds from run to run, and the targets are
        # 1.5 ms distances between medians (the report gives each distance's 95 % interval). About 6 minutes.
        run_section container_start 900 python3 "$SCRIPTS/container_start.py" --ctk "$BIN/ascend-ctk" \
            --dcmi-sim "$BIN/dcmi-sim" --library "$LIBRARY" --runs 25 --rounds 36 \
            --work-dir "$RESULTS/container_start-work" --out "$RESULTS/container_start.json" || true
    fi
fi

# ---- section 7: the DRA driver --------------------------------------------------------------------------------
# About 75 s: 2 x 300 prepare/unprepare pairs, 10 faults, a minute of load for the resident memory.
if selected 7 && built dra_driver; then
    run_section dra_driver 240 "$BIN/perf-dra-driver" --driver "$BIN/ascend-dra-driver" --library "$LIBRARY" \
        --prepares 300 --fault-repeats 10 --load-seconds 60 --out "$RESULTS/dra_driver.json" || true
fi

# ---- section 8: kubectl ascend on a fleet of 1,000 simulated nodes ------------------------------------------
# About 30 s: the fleet seeded into the in-process fake API server, 16 runs of each command.
if selected 8 && built kubectl_ascend; then
    run_section kubectl_ascend 180 "$BIN/perf-kubectl-ascend" --binary "$BIN/kubectl-ascend" --nodes 1000 \
        --runs 15 --out "$RESULTS/kubectl_ascend.json" || true
fi

# ---- section 11: beside Huawei's programs ---------------------------------------------------------------------
# About 40 minutes: per host (three exporter hosts, three device plugin hosts) three rounds of both sides at once;
# container start, 10 rounds of 20 starts per side (about 2 minutes).
# The fake hosts run in mount namespaces under the shared lock the real test bed's owner takes exclusively.
if selected 11 && [ -n "$HUAWEI_BIN" ] && built beside_huawei; then
    if [ "$(id -u)" -ne 0 ]; then
        not_measured beside_huawei "needs root (the fake hosts are mounted in private mount namespaces)"
    elif [ "$STATIC_HOOK_OK" -ne 1 ]; then
        not_measured beside_huawei "the static link of ascend-ctk-hook failed (see build_static_hook.log)"
    else
        # PERF_HOST_LOCK: the lock held shared meanwhile (empty: none).
        host_lock=${PERF_HOST_LOCK-/tmp/ascend-host.lock}
        run_section beside_huawei 3600 python3 "$SCRIPTS/beside_huawei.py" ${host_lock:+--host-lock "$host_lock"} \
            --huawei-bin "$HUAWEI_BIN" --our-bin "$BIN" --profile-seconds 30 \
            --hosts "${PERF_HUAWEI_HOSTS:-atlas-800t-a2,atlas-800i-a3,atlas-950-8}" \
            --plugin-hosts "${PERF_HUAWEI_PLUGIN_HOSTS:-atlas-800t-a2,atlas-800i-a3,atlas-950-8}" \
            --rounds 3 --plugin-rounds 3 --start-rounds 10 --start-runs 20 \
            --work-dir "$RESULTS/beside_huawei-work" \
            --out "$RESULTS/beside_huawei.json" || true
    fi
fi

# ---- the real-cluster test bed, for sections 7 (pod start), 9, 10 and 11 (DRA) ------------------------------
# Brought up here, after every quiet section, unless it already runs (then only these sections were selected).
# About 5 minutes with the Go programs cached, 30 more the first time on a machine (scripts/cluster/build.sh).
NO_TEST_BED="the real-cluster test bed did not come up: $RESULTS/test_bed_up.log"
if selected 7 9 10 11 && ! test_bed_running; then
    TEST_BED_OURS=1
    run_section test_bed_up 3600 bash "$ROOT/scripts/cluster/up.sh" || true
fi

# ---- section 7, pod start on the real cluster: the device plugin against the DRA driver -----------------------
# About 4 minutes: 3 x 22 pods (the device plugin's alternating with chip-less ones, then DRA), the deploys between
# them.
if selected 7 && built pod_start; then
    if ! test_bed_running; then
        not_measured pod_start "$NO_TEST_BED"
    else
        run_section pod_start 600 "$BIN/perf-pod-start" --pods 20 --out "$RESULTS/pod_start.json" || true
    fi
fi

# ---- section 11, DRA on the real cluster: our DRA driver beside Huawei's --------------------------------------
# About 15 minutes: Huawei's driver deployed once as its manifest does (the API server rejects its slices on the 910B
# node), then 3 rounds of each driver, alternating (ours, Huawei's on a simulated Atlas 950 host of its own, ours ...),
# each 2 x 6 pods (claims of one chip and of eight) and a chip fault, the switches between them.
if selected 11 && built dra_beside_huawei; then
    if [ -z "$HUAWEI_BIN" ]; then
        not_measured dra_beside_huawei "no build of Huawei's programs (scripts/peers/build.sh: see beside_huawei)"
    elif ! test_bed_running; then
        not_measured dra_beside_huawei "$NO_TEST_BED"
    else
        run_section dra_beside_huawei 1800 "$BIN/perf-dra-beside-huawei" --rounds 3 --pods 5 \
            --huawei-bin "$HUAWEI_BIN" --release-dir "$BIN" --out "$RESULTS/dra_beside_huawei.json" || true
    fi
fi

# ---- section 9: what the node daemons ask of the real API server ----------------------------------------------
# About 12 minutes: 5 minutes idle, 2 of churn, a restart, 2 idle under DRA.
if selected 9 && built api_requests; then
    if ! test_bed_running; then
        not_measured api_requests "$NO_TEST_BED"
    else
        run_section api_requests 1200 "$BIN/perf-api-requests" --out "$RESULTS/api_requests.json" || true
    fi
fi

# ---- section 10: a simulated fleet against the real API server ------------------------------------------------
# About 10 minutes: 100 nodes of three daemons each start, 5 minutes idle, 2 of churn, a restart.
if selected 10 && built fleet; then
    if ! test_bed_running; then
        not_measured fleet "$NO_TEST_BED"
    else
        run_section fleet 1500 "$BIN/perf-fleet" --nodes "${PERF_FLEET_NODES:-100}" --release-dir "$BIN" \
            --library "$BIN/libdcmi_sim.so" --out "$RESULTS/fleet.json" || true
    fi
fi

if [ "$TEST_BED_OURS" -eq 1 ]; then
    TEST_BED_OURS=0
    log "test bed: down"
    bash "$ROOT/scripts/cluster/down.sh" --quiet || true
fi

# ---- the report -----------------------------------------------------------------------------------------------
head -n 1 /proc/stat >"$RESULTS/cpu_times.end"
ELAPSED=$(($(date +%s) - STARTED))
log "measurements done after $ELAPSED s; writing $REPORT"
python3 "$SCRIPTS/write_report.py" --results "$RESULTS" --out "$REPORT" --elapsed-seconds "$ELAPSED" \
    --build-seconds "$BUILD_SECONDS" ${SECTIONS:+--sections $SECTIONS} \
    ${PERF_MERGE_INTO:+--merge-into "$PERF_MERGE_INTO"}
