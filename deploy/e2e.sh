#!/usr/bin/env bash
# End-to-end run on one machine, no NPU and no cluster needed. The steps, numbered as printed:
#   1. preflight: root, and the tools (cargo, runc, busybox-static, jq, curl);
#   2. build the simulator, the device plugin, ascend-ctk, npu-exporter and the fake kubelet driver (cargo, debug);
#   3. lay out a fake Atlas host with `dcmi-sim fake-host` (device nodes, driver files, the simulator as libdcmi.so);
#   4. start the fake kubelet (benches/src/bin/e2e-kubelet.rs) and `ascend-device-plugin` in runtime-env mode
#      against it; the plugin registers and its /healthz answers;
#   5. the fake kubelet reads the first ListAndWatch list and calls Allocate for one healthy chip (the last one);
#   6. a busybox container carrying the allocation's environment runs under runc through `ascend-ctk runtime exec`;
#   7. inside it, `ls -l /dev/davinci*` shows exactly the allocated /dev/davinci<phy> (the host node's major:minor)
#      and ASCEND_RT_VISIBLE_DEVICES=0;
#   8. npu-exporter on the same fake host is scraped: the allocated chip has a temperature series and ascend_npu_up 1.
# Each step prints `[e2e] step N: ... OK|FAIL` (with the evidence on failure); the last line is `e2e: PASS` or
# `e2e: FAIL (<step>)`, the exit code 0 or 1. Must run as root (mknod, runc, root-owned libdcmi.so); CI runs as root.
# Everything listens on loopback or on unix sockets in a temporary directory that is removed on exit, together with
# every process and container the script started. Every wait is bounded by E2E_WAIT_SECONDS (default 30).
#
# Usage: deploy/e2e.sh            (from any directory)
# Environment: E2E_TOPOLOGY (a dcmi-sim sample name or topology file, default atlas-800t-a2), E2E_WAIT_SECONDS,
# E2E_KEEP=1 keeps the temporary directory for inspection.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
topology=${E2E_TOPOLOGY:-atlas-800t-a2}
wait_seconds=${E2E_WAIT_SECONDS:-30}
container_id="ascend-e2e-$$"

work=""
sockets=""
target_dir=""
started_pids=()
current_step="start"
step_number=0
verdict_printed=0

# --- reporting ----------------------------------------------------------------------------------------------------

say() { printf '[e2e] %s\n' "$*"; }

# Prints the evidence of a failure (indented, on stdout so that it stays in order with the step lines) and returns 1,
# so that a step can end with `fail "..." || return 1`.
fail() {
    printf '[e2e]   %s\n' "$@"
    return 1
}

# Shows the last lines of a log file as evidence.
evidence_file() {
    local label=$1 file=$2
    printf '[e2e]   --- %s (%s, last 40 lines)\n' "$label" "$file"
    if [[ -s $file ]]; then
        tail -n 40 "$file" | sed 's/^/[e2e]   | /'
    else
        printf '[e2e]   | (empty)\n'
    fi
}

# run_step "description" function: runs one step, prints OK or FAIL, and ends the run on failure.
run_step() {
    local description=$1 function=$2
    step_number=$((step_number + 1))
    current_step="step $step_number: $description"
    local started=$SECONDS
    if "$function"; then
        say "$current_step ... OK ($((SECONDS - started)) s)"
    else
        say "$current_step ... FAIL"
        echo "e2e: FAIL ($current_step)"
        verdict_printed=1
        exit 1
    fi
}

# --- clean-up -----------------------------------------------------------------------------------------------------

stop_process() {
    local pid=$1
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    set +e
    if ((status != 0 && verdict_printed == 0)); then
        say "$current_step ... FAIL (interrupted, or an unexpected error with status $status)"
        echo "e2e: FAIL ($current_step)"
    fi
    if [[ -n $work && -d $work/runc-state ]]; then
        runc --root "$work/runc-state" delete --force "$container_id" >/dev/null 2>&1
    fi
    for pid in "${started_pids[@]}"; do
        stop_process "$pid"
    done
    wait 2>/dev/null
    [[ -n $sockets ]] && rm -rf "$sockets"
    if [[ -n $work && -d $work ]]; then
        if [[ ${E2E_KEEP:-0} == 1 ]]; then
            echo "[e2e] kept $work" >&2
        else
            rm -rf "$work"
        fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- helpers ------------------------------------------------------------------------------------------------------

# start_background stdout-file stderr-file command...: starts a command in the background and remembers its pid
# for the clean-up (in last_pid too).
start_background() {
    local out=$1 err=$2
    shift 2
    "$@" >"$out" 2>"$err" &
    started_pids+=("$!")
    last_pid=$!
}

# wait_for "what" command...: retries the command every 0.2 s until it succeeds or E2E_WAIT_SECONDS pass.
wait_for() {
    local what=$1
    shift
    local deadline=$((SECONDS + wait_seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            fail "timed out after ${wait_seconds} s waiting for $what"
            return 1
        fi
        sleep 0.2
    done
}

alive() { kill -0 "$1" 2>/dev/null; }

# logged_address log-file message: the loopback address a server logged with `message` after binding. The servers
# bind port 0, so the kernel picks a free port and no other process can take it between choosing and binding.
logged_address() {
    grep -F "$2" "$1" | grep -oE '127\.0\.0\.1:[0-9]+' | head -n 1
}

# wait_for_address "what" log-file message: waits for logged_address to find the address; sets found_address.
wait_for_address() {
    local what=$1 log=$2 message=$3
    wait_for "$what to log its address" has_logged_address "$log" "$message" || return 1
    found_address=$(logged_address "$log" "$message")
}

has_logged_address() { [[ -n $(logged_address "$1" "$2") ]]; }

# Scrapes the exporter into metrics.txt; succeeds once the allocated chip has a temperature series and
# ascend_npu_up 1 (after the background sampler's first round).
scrape_has_chip() {
    local chip_label="chip=\"$phy\""
    curl -fsS --max-time 5 "http://$exporter_address/metrics" >"$work/metrics.txt" || return 1
    grep -qE "^ascend_npu_temperature_celsius\{[^}]*${chip_label}[^}]*\} [0-9.eE+-]+\$" "$work/metrics.txt" &&
        grep -qE "^ascend_npu_up\{[^}]*${chip_label}[^}]*\} 1(\.0)?\$" "$work/metrics.txt"
}

# Fails naming the first directory above `path` that the tools' library ownership check would refuse (not owned
# by root, or writable by group or others), so that a checkout in such a place fails here and not as a timeout.
check_trusted_ancestors() {
    local dir=$1 owner mode
    while [[ $dir != / ]]; do
        dir=$(dirname "$dir")
        read -r owner mode < <(stat -c '%u %a' "$dir") || fail "cannot stat $dir" || return 1
        if [[ $owner != 0 ]] || ((8#$mode & 8#022)); then
            fail "$dir (uid $owner, mode $mode) is not root-owned or is writable by group or others:" \
                "the tools refuse a libdcmi.so below it; use a root-owned checkout or CARGO_TARGET_DIR" || return 1
        fi
    done
}

# --- steps --------------------------------------------------------------------------------------------------------

step_preflight() {
    if [[ $(id -u) -ne 0 ]]; then
        fail "must run as root: the fake host's /dev/davinci* nodes are made with mknod, containers run under runc," \
            "and the tools load libdcmi.so only if root owns it (CI runs as root); re-run with sudo" || return 1
    fi
    local missing=()
    for tool in cargo runc jq curl timeout; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    [[ -x /bin/busybox ]] || missing+=("/bin/busybox (Debian busybox-static)")
    if ((${#missing[@]} > 0)); then
        fail "missing tools: ${missing[*]} (scripts/install-deps.sh installs scripts/deps/debian.txt)" || return 1
    fi
}

step_build() {
    target_dir=$(cd "$repo" && cargo metadata --no-deps --format-version 1 | jq -r .target_directory) ||
        fail "cargo metadata failed in $repo" || return 1
    # Under the target directory, not /tmp: the tools refuse a libdcmi.so below a directory others can write
    # (the vendor's ownership check), and /tmp is world-writable.
    mkdir -p "$target_dir/tmp" || return 1
    work=$(mktemp -d "$target_dir/tmp/e2e.XXXXXX") || fail "cannot create a directory under $target_dir/tmp" || return 1
    chmod 755 "$work" || return 1
    check_trusted_ancestors "$work" || return 1
    # The simulator's cdylib comes from building its own package; the others are binaries. The test suite has just
    # built the whole workspace with these flags (E2E_WORKSPACE_BUILD=1): building the same way again is free, while
    # per-package builds would unify features differently and rebuild half the tree.
    if [[ ${E2E_WORKSPACE_BUILD:-0} == 1 ]]; then
        build() { cargo build --workspace --all-targets --all-features; }
    else
        build() {
            cargo build -p dcmi-sim &&
                cargo build -p ascend-programs --bin ascend-device-plugin --bin ascend-ctk --bin npu-exporter &&
                cargo build -p ascend-benches --bin e2e-kubelet
        }
    fi
    if ! (cd "$repo" && build) >"$work/build.log" 2>&1; then
        evidence_file "cargo build" "$work/build.log"
        return 1
    fi
    bin=$target_dir/debug
    for binary in dcmi-sim libdcmi_sim.so ascend-device-plugin ascend-ctk npu-exporter e2e-kubelet; do
        [[ -f $bin/$binary ]] || fail "cargo build did not produce $bin/$binary" || return 1
    done
}

step_fake_host() {
    local out=$work/fake-host.txt
    if ! "$bin/dcmi-sim" fake-host --topology "$topology" --root "$work/host" >"$out" 2>&1; then
        evidence_file "dcmi-sim fake-host" "$out"
        return 1
    fi
    local use_line
    use_line=$(grep '^use it with:' "$out") || { evidence_file "dcmi-sim fake-host" "$out"; return 1; }
    sim_config=$(sed -n 's/.*DCMI_SIM_CONFIG=\([^ ]*\).*/\1/p' <<<"$use_line")
    dcmi_library=$(sed -n 's/.*ASCEND_DCMI_LIBRARY=\([^ ]*\).*/\1/p' <<<"$use_line")
    if [[ -z $sim_config || -z $dcmi_library ]]; then
        evidence_file "dcmi-sim fake-host (no DCMI_SIM_CONFIG/ASCEND_DCMI_LIBRARY)" "$out"
        return 1
    fi
    grep -q 'device nodes: *character devices' "$out" ||
        { fail "the fake host has no character device nodes"; evidence_file "dcmi-sim fake-host" "$out"; return 1; }
    say "  fake host $topology: $(grep 'chips (phy ids)' "$out" | sed 's/^ *//')"
}

step_plugin_registers() {
    # The sockets live in a short directory of their own: a unix socket's path is limited to 107 bytes, which a
    # checkout at a long path overflows below the target directory.
    sockets=$(mktemp -d /tmp/ascend-e2e.XXXXXX) || return 1
    # The fake kubelet writes its JSON report to stdout and its progress to stderr.
    # It allocates the last healthy chip: on the sample its physical id is not 0, so the host's numbering
    # (/dev/davinci<phy>) and the container's (ASCEND_RT_VISIBLE_DEVICES=0) cannot be confused.
    start_background "$work/allocate.json" "$work/kubelet.log" "$bin/e2e-kubelet" \
        --plugin-dir "$sockets" --pick last --timeout-secs "$wait_seconds"
    kubelet_pid=$last_pid
    wait_for "the fake kubelet's socket" test -S "$sockets/kubelet.sock" ||
        { evidence_file "e2e-kubelet" "$work/kubelet.log"; return 1; }

    start_background /dev/null "$work/device-plugin.log" env \
        DCMI_SIM_CONFIG="$sim_config" RUST_LOG=info NO_COLOR=1 \
        "$bin/ascend-device-plugin" \
        --plugin-dir "$sockets" \
        --allocate-mode runtime-env \
        --host-root "$work/host" \
        --dcmi-library "$dcmi_library" \
        --listen 127.0.0.1:0
    plugin_pid=$last_pid
    if ! wait_for "the device plugin to register" grep -q ' registered on endpoint ' "$work/kubelet.log"; then
        evidence_file "e2e-kubelet" "$work/kubelet.log"
        evidence_file "ascend-device-plugin" "$work/device-plugin.log"
        return 1
    fi
    say "  $(grep -o '[^ ]* registered on endpoint .*' "$work/kubelet.log")"
    if ! wait_for_address "the device plugin" "$work/device-plugin.log" 'serving /healthz and /metrics' ||
        ! wait_for "the device plugin's /healthz" curl -fsS --max-time 5 "http://$found_address/healthz"; then
        evidence_file "ascend-device-plugin" "$work/device-plugin.log"
        return 1
    fi
}

step_allocate() {
    local deadline=$((SECONDS + wait_seconds))
    while alive "$kubelet_pid" && ((SECONDS < deadline)); do
        sleep 0.2
    done
    if alive "$kubelet_pid"; then
        fail "the fake kubelet did not finish within ${wait_seconds} s"
        evidence_file "e2e-kubelet" "$work/kubelet.log"
        evidence_file "ascend-device-plugin" "$work/device-plugin.log"
        return 1
    fi
    local status=0
    wait "$kubelet_pid" || status=$?
    if ((status != 0)) || ! jq -e . "$work/allocate.json" >/dev/null 2>&1; then
        fail "the fake kubelet exited with status $status"
        evidence_file "e2e-kubelet" "$work/kubelet.log"
        evidence_file "ascend-device-plugin" "$work/device-plugin.log"
        return 1
    fi
    alive "$plugin_pid" || { fail "the device plugin exited"; evidence_file "ascend-device-plugin" \
        "$work/device-plugin.log"; return 1; }
    allocated=$(jq -r .allocated "$work/allocate.json")
    local containers
    containers=$(jq '.response.containerResponses | length' "$work/allocate.json")
    [[ $containers == 1 ]] || fail "Allocate answered $containers container responses, want 1" || return 1
    visible=$(jq -r '.response.containerResponses[0].envs.ASCEND_VISIBLE_DEVICES // empty' "$work/allocate.json")
    if [[ ! $visible =~ ^[0-9]+$ ]]; then
        fail "the allocation of $allocated has no single physical id in ASCEND_VISIBLE_DEVICES (got '${visible}')"
        fail "response: $(jq -c .response "$work/allocate.json")"
        return 1
    fi
    phy=$visible
    # The device id names the same chip (`<Type>-<phy>`), so the plugin's bookkeeping and the env agree.
    [[ $allocated == *-"$phy" ]] ||
        fail "allocated device $allocated but ASCEND_VISIBLE_DEVICES=$phy names another chip" || return 1
    say "  ListAndWatch: $(jq -r '[.devices[] | .id + " " + .health] | join(", ")' "$work/allocate.json")"
    say "  Allocate($allocated) envs: $(jq -c .response.containerResponses[0].envs "$work/allocate.json")"
}

# The command the container runs: the device nodes and the runtime's device selection (expanded in the container).
# shellcheck disable=SC2016
readonly CONTAINER_PROBE='ls -l /dev/davinci*; echo "RT=$ASCEND_RT_VISIBLE_DEVICES"'

step_container() {
    local bundle=$work/bundle
    mkdir -p "$bundle/rootfs/bin" "$work/runc-state" || return 1
    cp /bin/busybox "$bundle/rootfs/bin/busybox" || return 1
    for applet in sh ls echo; do
        ln -s busybox "$bundle/rootfs/bin/$applet" || return 1
    done
    (cd "$bundle" && runc spec) || fail "runc spec failed in $bundle" || return 1
    # The allocation's environment and annotations go into the bundle, as the kubelet and the CRI runtime pass them.
    if ! jq --slurpfile allocation "$work/allocate.json" --arg probe "$CONTAINER_PROBE" '
        ($allocation[0].response.containerResponses[0]) as $response
        | .process.terminal = false
        | .process.args = ["sh", "-c", $probe]
        | .process.env += ($response.envs | to_entries | map("\(.key)=\(.value)"))
        | .annotations = ((.annotations // {}) + $response.annotations)' \
        "$bundle/config.json" >"$bundle/config.edited.json"; then
        fail "cannot put the allocation into $bundle/config.json" || return 1
    fi
    mv "$bundle/config.edited.json" "$bundle/config.json" || return 1
    if ! timeout "$wait_seconds" env DCMI_SIM_CONFIG="$sim_config" ASCEND_DCMI_LIBRARY="$dcmi_library" \
        "$bin/ascend-ctk" runtime exec --host-root "$work/host" --chip-cache "$work/run/chips.json" -- \
        --root "$work/runc-state" run --bundle "$bundle" "$container_id" \
        >"$work/container.out" 2>"$work/container.err"; then
        fail "ascend-ctk runtime exec -- runc run failed or timed out"
        evidence_file "container stdout" "$work/container.out"
        evidence_file "container stderr" "$work/container.err"
        return 1
    fi
}

step_container_sees_the_chip() {
    local chip_nodes expected host_numbers
    chip_nodes=$(grep -oE '/dev/davinci[0-9]+$' "$work/container.out" | sort | tr '\n' ' ' | sed 's/ $//')
    expected=/dev/davinci$phy
    if [[ $chip_nodes != "$expected" ]]; then
        fail "want exactly $expected among the chip nodes, the container has: ${chip_nodes:-none}"
        evidence_file "container stdout" "$work/container.out"
        return 1
    fi
    # The node is the host's chip: a character device with the same major:minor as the fake host's node.
    host_numbers=$(stat -c '%Hr, %Lr' "$work/host/dev/davinci$phy") ||
        fail "cannot stat the host node $work/host/dev/davinci$phy" || return 1
    # busybox pads the numbers (`236,   3`); squeeze the blanks before comparing.
    if ! tr -s ' ' <"$work/container.out" | grep -qE "^c.* ${host_numbers} .* /dev/davinci${phy}\$"; then
        fail "/dev/davinci$phy in the container is not the character device $host_numbers of the host"
        evidence_file "container stdout" "$work/container.out"
        return 1
    fi
    if ! grep -qx 'RT=0' "$work/container.out"; then
        fail "want ASCEND_RT_VISIBLE_DEVICES=0 in the container"
        evidence_file "container stdout" "$work/container.out"
        return 1
    fi
    say "  in the container: $(grep -E "/dev/davinci${phy}\$" "$work/container.out" | tr -s ' ')"
}

step_exporter() {
    start_background /dev/null "$work/exporter.log" env DCMI_SIM_CONFIG="$sim_config" RUST_LOG=info NO_COLOR=1 \
        "$bin/npu-exporter" \
        --web.listen-address 127.0.0.1:0 \
        --dcmi.library "$dcmi_library" \
        --pod-resources.disable
    local chip_label="chip=\"$phy\""
    wait_for_address "npu-exporter" "$work/exporter.log" 'npu-exporter serving /metrics' ||
        { evidence_file "npu-exporter" "$work/exporter.log"; return 1; }
    exporter_address=$found_address
    if ! wait_for "ascend_npu_temperature_celsius and ascend_npu_up 1 for chip $phy" scrape_has_chip; then
        if [[ -f $work/metrics.txt ]]; then
            grep -E '^ascend_npu_(up|temperature_celsius)\{' "$work/metrics.txt" >"$work/metrics-chip.txt" || true
            evidence_file "last scrape: ascend_npu_up and ascend_npu_temperature_celsius" "$work/metrics-chip.txt"
        fi
        evidence_file "npu-exporter" "$work/exporter.log"
        return 1
    fi
    curl -fsS --max-time 5 "http://$exporter_address/healthz" >/dev/null ||
        { fail "/healthz of npu-exporter is not 200"; evidence_file "npu-exporter" "$work/exporter.log"; return 1; }
    say "  $(grep -E "^ascend_npu_temperature_celsius\{[^}]*${chip_label}" "$work/metrics.txt")"
    say "  $(grep -E "^ascend_npu_up\{[^}]*${chip_label}" "$work/metrics.txt")"
}

# --- main ---------------------------------------------------------------------------------------------------------

run_started=$SECONDS
run_step "preflight (root, tools)" step_preflight
run_step "cargo build (dcmi-sim, ascend-device-plugin, ascend-ctk, npu-exporter, e2e-kubelet)" step_build
run_step "dcmi-sim fake host ($topology)" step_fake_host
run_step "device plugin registers with the fake kubelet" step_plugin_registers
run_step "ListAndWatch, then Allocate of one healthy chip (runtime-env mode)" step_allocate
run_step "container through ascend-ctk runtime exec -- runc run" step_container
run_step "container sees exactly the allocated /dev/davinci<phy> and ASCEND_RT_VISIBLE_DEVICES=0" \
    step_container_sees_the_chip
run_step "npu-exporter serves the chip's temperature and up 1" step_exporter
say "done in $((SECONDS - run_started)) s"
echo "e2e: PASS"
verdict_printed=1
