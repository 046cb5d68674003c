#!/usr/bin/env bash
# Builds Huawei's programs that the comparison tier runs beside ours, from a mind-cluster tree at the pinned commit
# (scripts/peers/versions.env): npu-exporter, the device plugin (and the fault-policy files its image holds), the
# docker runtime with its hook and the C tool the hook runs (ascend-docker-cli), and the DRA driver (ascend-dra, which
# benches/run.sh compares with ours). The set goes to $PEERS_CACHE/mind-cluster-<commit>-<go version>/bin and is
# skipped when complete there, so only a machine's first run pays for the build (about 7 minutes on 2 cores); a program
# added to the set later is built alone.
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

programs=(npu-exporter ascend-device-plugin ascend-docker-runtime ascend-docker-hook ascend-dra)
# Huawei's hook execs ascend-docker-cli (C, component/ascend-docker-runtime/cli) from its own directory to mount the
# driver's files into a starting container. It is built with the bounds-checking library of versions.env, which the
# mind-cluster tree does not hold, when a tree of it is found ($LIBBOUNDSCHECK_TREE, else beside the checkout); without
# one it is left out, saying so, and benches/run.sh section 11 says why container start through Huawei's hook is not
# measured.
boundscheck=${LIBBOUNDSCHECK_TREE:-$DEFAULT_LIBBOUNDSCHECK_TREE}
if [[ -f $boundscheck/include/securec.h ]]; then
    boundscheck=$(cd "$boundscheck" && pwd)
    commit=$(peers_tree_commit "$boundscheck")
    [[ $commit == "$LIBBOUNDSCHECK_COMMIT" ]] ||
        peers_die "$boundscheck is libboundscheck commit '${commit:-unknown}', ascend-docker-cli needs" \
            "$LIBBOUNDSCHECK_COMMIT (scripts/peers/versions.env)"
    programs+=(ascend-docker-cli)
else
    echo "peers: no libboundscheck tree at $boundscheck (LIBBOUNDSCHECK_TREE; commit $LIBBOUNDSCHECK_COMMIT):" \
        "ascend-docker-cli, which Huawei's hook runs, is not built" >&2
    boundscheck=
fi
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
rm -rf "$out.partial"
mkdir -p "$scratch/src" "$out.partial"
# The programs already cached are kept: only the missing ones are built.
[[ -d $out ]] && cp -a "$out/." "$out.partial/"
trap 'go clean -modcache >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
for component in ascend-common npu-exporter ascend-device-plugin ascend-docker-runtime \
    ascend-dynamic-resource-allocation; do
    cp -r "$tree/component/$component" "$scratch/src/"
done
chmod -R u+w "$scratch/src"
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=mod" GOCACHE=$scratch/go/cache GOMODCACHE=$scratch/go/mod

# build NAME DIR [GO BUILD FLAG...]: the main package in DIR (below the scratch copy) as the program NAME, unless it
# is cached already.
build() {
    local name=$1 dir=$2 started=$SECONDS
    shift 2
    [[ -x $out.partial/$name ]] && return 0
    (cd "$scratch/src/$dir" && go build -trimpath "$@" -o "$out.partial/$name" .)
    echo "peers: $name built in $((SECONDS - started)) s"
}
build npu-exporter npu-exporter/cmd/npu-exporter -ldflags "-s -w"
# Without a build scene the plugin exits at once; "center" is the data-centre scene of Huawei's build script
# (component/ascend-device-plugin/build/build.sh).
build ascend-device-plugin ascend-device-plugin -ldflags "-s -w -X main.BuildScene=center"
build ascend-docker-runtime ascend-docker-runtime/runtime -ldflags "-s -w"
build ascend-docker-hook ascend-docker-runtime/hook -ldflags "-s -w"
# The program name of Huawei's image (component/ascend-dynamic-resource-allocation/build/Dockerfile).
build ascend-dra ascend-dynamic-resource-allocation -ldflags "-s -w"

# ascend-docker-cli with the compiler flags of its CMakeLists.txt (component/ascend-docker-runtime/cli/src, and
# build/libboundscheck for the library, linked in statically as there).
build_cli() {
    local started=$SECONDS
    [[ -n $boundscheck && ! -x $out.partial/ascend-docker-cli ]] || return 0
    mkdir -p "$scratch/boundscheck"
    (cd "$scratch/boundscheck" && gcc -c -fstack-protector-all -fpie -I "$boundscheck/include" "$boundscheck"/src/*.c)
    gcc -std=gnu11 -fstack-protector-all -fpie -D_FORTIFY_SOURCE=2 -O2 -I "$boundscheck/include" \
        "$tree"/component/ascend-docker-runtime/cli/src/*.c "$scratch"/boundscheck/*.o -pie -Wl,-s,-z,now \
        -o "$out.partial/ascend-docker-cli"
    echo "peers: ascend-docker-cli built in $((SECONDS - started)) s"
}
build_cli

rm -rf "$out"
mv "$out.partial" "$out"
stage_plugin_files
echo "$out"
