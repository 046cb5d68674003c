#!/usr/bin/env bash
# Installs the Ascend container toolkit on one NPU node: the ascend-ctk binary, its ascend-runtime link and the
# hook's own binary ascend-ctk-hook (hook mode starts it on every container start), a CDI
# spec of the node's chips, the runtime registration with the container engine, and the systemd/udev units that
# regenerate the CDI spec at boot and whenever the driver or the set of /dev/davinci* nodes changes.
#
#   sudo deploy/host/install.sh --runtime containerd --ctk target/release/ascend-ctk
#
# It never restarts the container engine: that kills every container on the node (Docker) or interrupts pod
# management (containerd, CRI-O), so do it yourself, node by node, when the node is drained.
#
# --destdir DIR installs into DIR instead of / (packaging, tests): paths written into the units and the engine
# configuration stay the real ones, systemctl and udevadm are not called, and the CDI spec and engine configuration
# are written beneath DIR.
set -euo pipefail

readonly UNIT_NAMES=(ascend-cdi-refresh.service ascend-cdi-refresh.path)
readonly UDEV_RULE=71-ascend-cdi-refresh.rules
readonly CDI_DIR=/var/run/cdi
readonly ENV_FILE=/etc/default/ascend-ctk

usage() {
    cat <<'EOF'
usage: install.sh --runtime docker|containerd|crio|none [options]

  --runtime ENGINE   container engine to register the "ascend" runtime with ("none": skip)
  --ctk PATH         the ascend-ctk binary to install (default: ./ascend-ctk next to this script,
                     then target/release/ascend-ctk of the repository)
  --hook PATH        the ascend-ctk-hook binary to install (default: ascend-ctk-hook beside the --ctk binary;
                     without one, hook mode starts `ascend-ctk hook`, which takes longer)
  --prefix DIR       installation prefix (default /usr/local)
  --destdir DIR      stage the installation beneath DIR (no systemctl/udevadm calls)
  --chip-type TYPE   force the chip type (310P, 910B, ...) in /etc/default/ascend-ctk instead of detecting it
  --runtime-name N   runtime handler name (default ascend; must equal the RuntimeClass handler)
  --no-cdi           do not enable CDI in the engine (only for hook-based injection)
  --set-as-default   make "ascend" the engine's default runtime
  -h, --help         this text
EOF
}

die() {
    echo "install.sh: error: $*" >&2
    exit 1
}

note() {
    echo "install.sh: $*"
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runtime=""
ctk=""
hook=""
prefix=/usr/local
destdir=""
chip_type=""
runtime_name=ascend
enable_cdi=1
set_as_default=0

while (($#)); do
    case $1 in
        --runtime) runtime=${2:?--runtime needs a value}; shift 2 ;;
        --ctk) ctk=${2:?--ctk needs a value}; shift 2 ;;
        --hook) hook=${2:?--hook needs a value}; shift 2 ;;
        --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
        --destdir) destdir=${2:?--destdir needs a value}; shift 2 ;;
        --chip-type) chip_type=${2:?--chip-type needs a value}; shift 2 ;;
        --runtime-name) runtime_name=${2:?--runtime-name needs a value}; shift 2 ;;
        --no-cdi) enable_cdi=0; shift ;;
        --set-as-default) set_as_default=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

case $runtime in
    docker | containerd | crio | none) ;;
    "") usage >&2; die "--runtime is required (docker, containerd, crio or none)" ;;
    *) die "--runtime $runtime: expected docker, containerd, crio or none" ;;
esac
[[ $prefix == /* ]] || die "--prefix $prefix: must be an absolute path"
if [[ -n $destdir ]]; then
    mkdir -p "$destdir" || die "cannot create --destdir $destdir"
    destdir=$(cd "$destdir" && pwd)
fi

if [[ -z $ctk ]]; then
    for candidate in "$script_dir/ascend-ctk" "$script_dir/../../target/release/ascend-ctk"; do
        if [[ -x $candidate ]]; then
            ctk=$candidate
            break
        fi
    done
    [[ -n $ctk ]] ||
        die "no ascend-ctk binary found; build it (cargo build --release -p ascend-programs --bin ascend-ctk) or give --ctk"
fi
[[ -f $ctk && -x $ctk ]] || die "--ctk $ctk: not an executable file"
if [[ -z $hook && -x $(dirname "$ctk")/ascend-ctk-hook ]]; then
    hook=$(dirname "$ctk")/ascend-ctk-hook
fi
[[ -z $hook || (-f $hook && -x $hook) ]] || die "--hook $hook: not an executable file"

bin_dir=$prefix/bin
installed_ctk=$bin_dir/ascend-ctk
installed_hook=$bin_dir/ascend-ctk-hook
runtime_link=$bin_dir/ascend-runtime

# The runtime refuses to exec a helper that anyone but root could replace, so the binary and every directory
# above it must be root-owned and not group/other-writable: install with explicit modes, not the umask.
note "installing $ctk as $installed_ctk"
install -d -m 0755 "$destdir$bin_dir"
install -m 0755 "$ctk" "$destdir$installed_ctk"
ln -sfn ascend-ctk "$destdir$runtime_link"
# The runtime points hook mode's spec at ascend-ctk-hook when it lies beside ascend-ctk.
if [[ -n $hook ]]; then
    note "installing $hook as $installed_hook"
    install -m 0755 "$hook" "$destdir$installed_hook"
else
    note "warning: no ascend-ctk-hook beside $ctk (give --hook): hook mode starts \`ascend-ctk hook\` instead"
fi

if [[ -n $chip_type ]]; then
    note "writing ASCEND_CTK_CHIP_TYPE=$chip_type to $ENV_FILE"
    install -d -m 0755 "$destdir$(dirname "$ENV_FILE")"
    printf '# Read by ascend-cdi-refresh.service (deploy/host/install.sh).\nASCEND_CTK_CHIP_TYPE=%s\n' "$chip_type" \
        >"$destdir$ENV_FILE"
    chmod 0644 "$destdir$ENV_FILE"
fi

note "installing systemd units and the udev rule"
install -d -m 0755 "$destdir/etc/systemd/system" "$destdir/etc/udev/rules.d"
for unit in "${UNIT_NAMES[@]}"; do
    sed -e "s|@BINDIR@|$bin_dir|g" "$script_dir/$unit" >"$destdir/etc/systemd/system/$unit"
    chmod 0644 "$destdir/etc/systemd/system/$unit"
done
sed -e "s|@BINDIR@|$bin_dir|g" "$script_dir/$UDEV_RULE" >"$destdir/etc/udev/rules.d/$UDEV_RULE"
chmod 0644 "$destdir/etc/udev/rules.d/$UDEV_RULE"

# The same command the service runs, so that the spec exists before the engine is restarted.
note "generating the CDI spec in $CDI_DIR"
install -d -m 0755 "$destdir$CDI_DIR"
if [[ -n $chip_type ]]; then
    export ASCEND_CTK_CHIP_TYPE=$chip_type
fi
"$destdir$installed_ctk" cdi generate --output-dir "$destdir$CDI_DIR" ||
    die "ascend-ctk cdi generate failed: is the driver installed, are /dev/davinci* present? (ascend-doctor checks both)"

if [[ $runtime != none ]]; then
    configure_args=(runtime configure --runtime "$runtime" --runtime-name "$runtime_name")
    configure_args+=(--runtime-path "$runtime_link")
    if [[ -n $destdir ]]; then
        case $runtime in
            docker) engine_config=/etc/docker/daemon.json ;;
            containerd) engine_config=/etc/containerd/config.toml ;;
            crio) engine_config=/etc/crio/crio.conf.d/99-ascend.conf ;;
        esac
        install -d -m 0755 "$destdir$(dirname "$engine_config")"
        configure_args+=(--config "$destdir$engine_config")
    fi
    if ((enable_cdi)); then
        configure_args+=(--cdi)
    fi
    if ((set_as_default)); then
        configure_args+=(--set-as-default)
    fi
    note "registering runtime \"$runtime_name\" with $runtime"
    "$destdir$installed_ctk" "${configure_args[@]}" || die "ascend-ctk runtime configure --runtime $runtime failed"
fi

if [[ -z $destdir && -d /run/systemd/system ]]; then
    systemctl daemon-reload
    systemctl enable ascend-cdi-refresh.service ascend-cdi-refresh.path
    systemctl start ascend-cdi-refresh.path
    udevadm control --reload
else
    note "systemd/udev not touched; on the node run:"
    note "  systemctl daemon-reload && systemctl enable --now ascend-cdi-refresh.path ascend-cdi-refresh.service"
    note "  udevadm control --reload"
fi
if [[ $runtime != none ]]; then
    note "restart $runtime when the node is drained, then check with: ascend-doctor"
fi
