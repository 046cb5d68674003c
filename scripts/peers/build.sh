#!/usr/bin/env bash
# Builds Huawei's programs that the comparison tier runs beside ours, from a mind-cluster tree at the pinned commit
# (scripts/peers/versions.env): npu-exporter, the device plugin (and the fault-policy files its image holds), and the
# docker runtime with its hook. The set goes to
# $PEERS_CACHE/mind-cluster-<commit>-<go version>/bin and is skipped when complete there, so only a machine's first run
# pays for the build (about 6 minutes on 2 cores).
#
#   scripts/peers/build.sh [--tree DIR]   (default: $MIND_CLUSTER_TREE, else ../shared/peers/mind-cluster beside the
#                                          checkout)
#
# Prints the directory of the programs on its last line. Exits 3, saying so, when there is no tree: the comparison tier
# is skipped then, as scripts/test.sh reports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/peers/lib.sh
source "$here/lib.sh"

tree_arg=
while (($#)); do
    case $1 in
        --tree) tree_arg=${2:?--tree needs a directory}; shift 2 ;;
        -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
        *) peers_die "unknown argument '$1' (usage: scripts/peers/build.sh [--tree DIR])" ;;
    esac
done

if ! tree=$(peers_find_tree "$tree_arg"); then
    echo "peers: no mind-cluster tree at ${tree_arg:-${MIND_CLUSTER_TREE:-$DEFAULT_MIND_CLUSTER_TREE}} (a checkout of" \
        "Ascend/mind-cluster at $MIND_CLUSTER_COMMIT, given by --tree or MIND_CLUSTER_TREE): nothing to build" >&2
    exit 3
fi

out=$(peers_bin_dir)

# The files Huawei's device plugin image holds in /usr/local beside the program (its build/Dockerfile): the fault
# policy it grades chip faults by (faultCode.json and the customisation files). Without them it grades no fault code.
# Staged beside the programs; the comparison tier lays them where the image has them.
stage_plugin_files() {
    local files=$out/device-plugin-files name
    [[ -d $files ]] && return 0
    mkdir -p "$files.partial"
    for name in faultCode.json faultCustomization.json SwitchFaultCode.json deviceNameCustomization.json \
        hangDetectionConfig.json hotResetPluginConfiguration.json; do
        cp "$tree/component/ascend-device-plugin/build/$name" "$files.partial/"
    done
    mv "$files.partial" "$files"
}

programs=(npu-exporter ascend-device-plugin ascend-docker-runtime ascend-docker-hook)
complete=true
for program in "${programs[@]}"; do [[ -x $out/$program ]] || complete=false; done
if $complete; then
    stage_plugin_files
    echo "peers: $out is cached"
    echo "$out"
    exit 0
fi

# The tree may be read-only (CI lays it without write bits) and `go build -mod=mod` records the modules it resolves in
# go.sum: the components are built from a scratch copy. Go's caches are scratch too, removed at the end, as the
# cluster build does (scripts/cluster/build.sh says why: the disk the Rust builds need).
scratch=$PEERS_CACHE/build
rm -rf "$scratch"
mkdir -p "$scratch/src" "$out.partial"
trap 'go clean -modcache >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
for component in ascend-common npu-exporter ascend-device-plugin ascend-docker-runtime; do
    cp -r "$tree/component/$component" "$scratch/src/"
done
chmod -R u+w "$scratch/src"
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=mod" GOCACHE=$scratch/go/cache GOMODCACHE=$scratch/go/mod

# build NAME DIR [GO BUILD FLAG...]: the main package in DIR (below the scratch copy) as the program NAME.
build() {
    local name=$1 dir=$2 started=$SECONDS
    shift 2
    (cd "$scratch/src/$dir" && go build -trimpath "$@" -o "$out.partial/$name" .)
    echo "peers: $name built in $((SECONDS - started)) s"
}
build npu-exporter npu-exporter/cmd/npu-exporter -ldflags "-s -w"
# Without a build scene the plugin exits at once; "center" is the data-centre scene of Huawei's build script
# (component/ascend-device-plugin/build/build.sh).
build ascend-device-plugin ascend-device-plugin -ldflags "-s -w -X main.BuildScene=center"
build ascend-docker-runtime ascend-docker-runtime/runtime -ldflags "-s -w"
build ascend-docker-hook ascend-docker-runtime/hook -ldflags "-s -w"

rm -rf "$out"
mv "$out.partial" "$out"
stage_plugin_files
echo "$out"
