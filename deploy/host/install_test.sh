#!/usr/bin/env bash
# Tests install.sh in a temporary root (--destdir) with a fake ascend-ctk that records its arguments, so it runs in
# CI without systemd, udev, a driver or a container engine. Also verifies the systemd units with systemd-analyze.
# Run: deploy/host/install_test.sh (exit status 0 = all passed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
    echo "install_test: FAIL: $*" >&2
    failures=$((failures + 1))
}

pass() {
    echo "install_test: ok: $*"
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

absent() { ! "$@"; }

log_has() { grep -qxF "$1" "$work/ctk.log"; }

# The fake records every call, one line each, and writes what the real one would write where it was told to.
fake_ctk=$work/fake-ascend-ctk
cat >"$fake_ctk" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
printf '%s|chip=%s\n' "$*" "${ASCEND_CTK_CHIP_TYPE:-}" >>"$FAKE_CTK_LOG"
[[ ${FAKE_CTK_FAIL:-} == "$1" ]] && { echo "fake ascend-ctk: $1 failed" >&2; exit 3; }
case "$1 ${2:-}" in
    "cdi generate")
        while (($#)); do [[ $1 == --output-dir ]] && out=$2; shift; done
        printf '{"cdiVersion":"0.5.0","kind":"huawei.com/npu","devices":[]}\n' >"$out/huawei.com-npu.json" ;;
    "runtime configure")
        while (($#)); do [[ $1 == --config ]] && config=$2; shift; done
        printf '[plugins]\n# ascend registered\n' >>"$config" ;;
esac
EOF
chmod 0755 "$fake_ctk"

run_install() {
    FAKE_CTK_LOG=$work/ctk.log bash "$here/install.sh" --ctk "$fake_ctk" "$@"
}

# --- a full installation for containerd -------------------------------------------------------------------------
root=$work/root
: >"$work/ctk.log"
if output=$(run_install --destdir "$root" --runtime containerd --chip-type 310P 2>&1); then
    pass "install.sh --runtime containerd exits 0"
else
    fail "install.sh --runtime containerd failed: $output"
fi

check "ascend-ctk installed as /usr/local/bin/ascend-ctk" cmp -s "$fake_ctk" "$root/usr/local/bin/ascend-ctk"
mode=$(stat -c %a "$root/usr/local/bin/ascend-ctk" 2>/dev/null || echo missing)
check "ascend-ctk mode 0755 (no group/other write), got $mode" test "$mode" = 755
check "ascend-runtime links to ascend-ctk" test "$(readlink "$root/usr/local/bin/ascend-runtime")" = ascend-ctk

for file in etc/systemd/system/ascend-cdi-refresh.service etc/systemd/system/ascend-cdi-refresh.path \
    etc/udev/rules.d/71-ascend-cdi-refresh.rules; do
    if [[ ! -f $root/$file ]]; then
        fail "$file not installed"
    elif grep -q '@BINDIR@' "$root/$file"; then
        fail "$file still contains @BINDIR@"
    else
        pass "$file installed"
    fi
done
check "service runs the installed ascend-ctk (real path, not the staging path)" grep -qx \
    'ExecStart=/usr/local/bin/ascend-ctk cdi generate --output-dir /var/run/cdi' \
    "$root/etc/systemd/system/ascend-cdi-refresh.service"
check "path unit watches the driver's version.info" grep -qx 'PathChanged=/usr/local/Ascend/driver/version.info' \
    "$root/etc/systemd/system/ascend-cdi-refresh.path"
check "udev rule matches /dev/davinci<N>" grep -q 'KERNEL=="davinci\[0-9\]\*"' \
    "$root/etc/udev/rules.d/71-ascend-cdi-refresh.rules"
check "--chip-type written to /etc/default/ascend-ctk" grep -qx 'ASCEND_CTK_CHIP_TYPE=310P' \
    "$root/etc/default/ascend-ctk"

echo "install_test: ascend-ctk calls: $(tr '\n' ';' <"$work/ctk.log")"
check "cdi generate called with the staged spec directory and the chip type" \
    log_has "cdi generate --output-dir $root/var/run/cdi|chip=310P"
check "CDI spec written" test -f "$root/var/run/cdi/huawei.com-npu.json"
want="runtime configure --runtime containerd --runtime-name ascend --runtime-path /usr/local/bin/ascend-runtime"
check "runtime configure called for containerd with CDI enabled" \
    log_has "$want --config $root/etc/containerd/config.toml --cdi|chip=310P"

# --- the units are valid systemd units (ExecStart pointed at an existing binary for the check) -------------------
verify=$work/verify
mkdir -p "$verify"
cp "$fake_ctk" "$verify/ascend-ctk"
for unit in ascend-cdi-refresh.service ascend-cdi-refresh.path; do
    sed -e "s|@BINDIR@|$verify|g" "$here/$unit" >"$verify/$unit"
done
# systemd-analyze exits 0 on some parse errors ("ignoring"), so any message counts as a failure.
if messages=$(systemd-analyze verify "$verify/ascend-cdi-refresh.service" "$verify/ascend-cdi-refresh.path" 2>&1) &&
    [[ -z $messages ]]; then
    pass "systemd-analyze verify"
else
    fail "systemd-analyze verify: $messages"
fi

# --- the hook's own binary: beside --ctk by default, or --hook ---------------------------------------------------
check "without ascend-ctk-hook beside --ctk none is installed" absent test -e "$root/usr/local/bin/ascend-ctk-hook"
mkdir -p "$work/bin"
cp "$fake_ctk" "$work/bin/ascend-ctk"
printf '#!/bin/sh\n# fake hook\n' >"$work/bin/ascend-ctk-hook"
chmod 0775 "$work/bin/ascend-ctk-hook"
FAKE_CTK_LOG=$work/ctk.log bash "$here/install.sh" --ctk "$work/bin/ascend-ctk" --destdir "$work/hook" \
    --runtime none >/dev/null 2>&1 || fail "install.sh with ascend-ctk-hook beside --ctk failed"
check "ascend-ctk-hook beside --ctk installed beside ascend-ctk" cmp -s "$work/bin/ascend-ctk-hook" \
    "$work/hook/usr/local/bin/ascend-ctk-hook"
mode=$(stat -c %a "$work/hook/usr/local/bin/ascend-ctk-hook" 2>/dev/null || echo missing)
check "ascend-ctk-hook mode 0755 (no group/other write), got $mode" test "$mode" = 755
printf '#!/bin/sh\n# another hook\n' >"$work/other-hook"
chmod 0755 "$work/other-hook"
run_install --destdir "$work/hook2" --runtime none --hook "$work/other-hook" >/dev/null 2>&1 ||
    fail "install.sh --hook failed"
check "--hook installed as ascend-ctk-hook" cmp -s "$work/other-hook" "$work/hook2/usr/local/bin/ascend-ctk-hook"
if output=$(run_install --destdir "$work/hook3" --runtime none --hook "$work/missing-hook" 2>&1); then
    fail "install.sh accepted a --hook that does not exist"
elif [[ $output == *"--hook $work/missing-hook: not an executable file"* ]]; then
    pass "a missing --hook is named"
else
    fail "a missing --hook gave: $output"
fi

# --- running it again changes nothing but the engine configuration call (ascend-ctk itself is idempotent) -------
if run_install --destdir "$root" --runtime containerd --chip-type 310P >/dev/null 2>&1; then
    pass "second run exits 0"
else
    fail "second run failed"
fi

# --- docker, without CDI, as default runtime; crio's drop-in path -------------------------------------------------
: >"$work/ctk.log"
run_install --destdir "$work/docker" --runtime docker --no-cdi --set-as-default >/dev/null 2>&1 ||
    fail "install.sh --runtime docker failed"
want="runtime configure --runtime docker --runtime-name ascend --runtime-path /usr/local/bin/ascend-runtime"
want+=" --config $work/docker/etc/docker/daemon.json --set-as-default|chip="
check "docker: --no-cdi and --set-as-default passed on" log_has "$want"
check "no settings file without --chip-type" absent test -e "$work/docker/etc/default/ascend-ctk"
: >"$work/ctk.log"
run_install --destdir "$work/crio" --runtime crio --prefix /opt/ascend >/dev/null 2>&1 ||
    fail "install.sh --runtime crio failed"
check "crio: drop-in configuration path" grep -q -- "--config $work/crio/etc/crio/crio.conf.d/99-ascend.conf" \
    "$work/ctk.log"
check "--prefix honoured in the binary" test -x "$work/crio/opt/ascend/bin/ascend-ctk"
check "--prefix honoured in the units" grep -q 'ExecStart=/opt/ascend/bin/ascend-ctk' \
    "$work/crio/etc/systemd/system/ascend-cdi-refresh.service"

# --- failures are reported, not swallowed ---------------------------------------------------------------------------
if output=$(FAKE_CTK_FAIL=cdi run_install --destdir "$work/broken" --runtime containerd 2>&1); then
    fail "install.sh succeeded although cdi generate failed"
elif [[ $output == *"ascend-ctk cdi generate failed"* ]]; then
    pass "a failing cdi generate stops the installation with a message"
else
    fail "cdi generate failure not explained: $output"
fi
if output=$(FAKE_CTK_FAIL=runtime run_install --destdir "$work/broken2" --runtime docker 2>&1); then
    fail "install.sh succeeded although runtime configure failed"
else
    check "a failing runtime configure is reported" grep -q "runtime configure --runtime docker failed" <<<"$output"
fi
if output=$(run_install --destdir "$work/bad" --runtime podman 2>&1); then
    fail "--runtime podman accepted"
else
    check "unknown engine rejected with the accepted values" grep -q "expected docker, containerd, crio or none" \
        <<<"$output"
fi
if output=$(bash "$here/install.sh" --destdir "$work/bad2" --runtime none --ctk "$work/does-not-exist" 2>&1); then
    fail "a missing --ctk binary accepted"
else
    pass "a missing --ctk binary rejected"
fi
: >"$work/ctk.log"
run_install --destdir "$work/none" --runtime none >/dev/null 2>&1 || fail "--runtime none failed"
check "--runtime none skips the engine" absent grep -q '^runtime configure' "$work/ctk.log"

if ((failures)); then
    echo "install_test: $failures failure(s)" >&2
    exit 1
fi
echo "install_test: all passed"
