#!/usr/bin/env bash
# Installs our container toolkit on the test node the way an operator does on an Atlas node, with
# deploy/host/install.sh: ascend-ctk and its ascend-runtime link in /usr/local/bin, the CDI spec of the node's chips,
# the "ascend" runtime registered in containerd's configuration (with CDI on), and the systemd and udev units (not
# enabled: this machine runs no systemd). Every file it adds is recorded, and `remove` deletes exactly those;
# containerd's configuration is the test bed's own and goes with down.sh.
#
#   host_toolkit.sh install RELEASE_DIR     (RELEASE_DIR holds ascend-ctk; before containerd starts)
#   host_toolkit.sh remove
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

installed=$CLUSTER_STATE/host-toolkit.installed
# What install.sh writes besides the engine's configuration and the CDI spec (deploy/host/install.sh).
readonly FILES=(/usr/local/bin/ascend-ctk /usr/local/bin/ascend-ctk-hook /usr/local/bin/ascend-runtime
    /etc/systemd/system/ascend-cdi-refresh.service /etc/systemd/system/ascend-cdi-refresh.path
    /etc/udev/rules.d/71-ascend-cdi-refresh.rules)

remove() {
    [[ -f $installed ]] || return 0
    local path
    # Newest first: files, then the directories install.sh made for them.
    while read -r path; do
        if [[ -d $path && ! -L $path ]]; then rmdir -- "$path" 2>/dev/null || true; else rm -f -- "$path"; fi
    done < <(tac "$installed")
    rm -f "$installed"
}

install() {
    local release=$1 path
    remove
    for path in "${FILES[@]}"; do
        [[ -e $path || -L $path ]] && die "$path exists and was not installed by the test bed: not replacing it"
    done
    mkdir -p "$CLUSTER_STATE" /var/run/cdi
    local specs_before
    specs_before=$(ls /var/run/cdi)
    : >"$installed"
    local directory
    for directory in /usr/local/bin /etc/systemd /etc/systemd/system /etc/udev /etc/udev/rules.d; do
        [[ -d $directory ]] || echo "$directory" >>"$installed"
    done
    printf '%s\n' "${FILES[@]}" >>"$installed"
    bash "$REPO_ROOT/deploy/host/install.sh" --runtime containerd --ctk "$release/ascend-ctk" >/dev/null
    # The CDI spec install.sh generated (its name is ascend-ctk's), recorded unless it was there before.
    comm -13 <(echo "$specs_before") <(ls /var/run/cdi) | sed 's|^|/var/run/cdi/|' >>"$installed"
}

case ${1:-} in
    install) install "${2:?release directory}" ;;
    remove) remove ;;
    *) die "usage: host_toolkit.sh install RELEASE_DIR | remove" ;;
esac
