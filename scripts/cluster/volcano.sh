#!/usr/bin/env bash
# The real Volcano on the test cluster: vc-scheduler with Huawei's Ascend plugin (ascend-for-volcano, from the
# mind-cluster tree the comparison tier builds from) and vc-controller-manager, for
# cluster-tests/tests/volcano_scheduler.rs.
#
#   scripts/cluster/volcano.sh build   builds both into $CLUSTER_CACHE/volcano-<version>-mind-cluster-<commit>/bin
#                                      (cached: only a machine's first run pays; prints the build's time); exits 3,
#                                      saying so, when there is no mind-cluster tree
#   scripts/cluster/volcano.sh start   applies Volcano's CRDs and the scheduler's configuration, starts both programs
#   scripts/cluster/volcano.sh stop    stops them (down.sh does too)
#
# How it is built, and how that differs from Huawei's build (mind-cluster
# `component/ascend-for-volcano/build/build.sh`):
# - Huawei copies the plugin into a Volcano source tree at pkg/scheduler/plugins/ascend-volcano-plugin/ and builds it
#   there. Here the tree is the module `volcano.sh/volcano` as the Go module proxy serves it, copied to scratch, and
#   built as its own main module (its go.mod's replace lines then apply), with `-mod=mod` standing in for Huawei's
#   `go mod tidy`.
# - Huawei builds the plugin as a Go plugin `.so` that vc-scheduler loads from --plugins-dir; the file's name, the
#   configuration's plugin name and its PluginName (set with -X) must match. Here the plugin is compiled into
#   vc-scheduler instead, which is simpler and cheaper: a `.so` needs cgo and every dependency compiled a second time
#   in plugin mode (-dynlink), about doubling a build CI pays for cold, and any mismatch of Go or module versions
#   between the two fails only when the scheduler loads it. Its top-level package is a `package main`, as a `.so`'s
#   must be; for this build it is renamed to a library package, and a file of ours in vc-scheduler's main package
#   registers its New under its PluginName, which is what Volcano's LoadCustomPlugins does with a `.so`
#   (pkg/scheduler/framework/plugins.go). PluginName is set as Huawei's build sets it, to the name its default build
#   gives (REL_NPU_PLUGIN, volcano-npu_v26.1.0 when the tree has no service_config.ini); the configuration names it.
# - Huawei patches Volcano's allocate action so that a task is scored (BatchNodeOrderFn, where the plugin's node score
#   is) also when a single node passes the predicates: the same change is made here, and checked to apply. Its other
#   patch, an `Ignore` action in the job controller's running state, matches nothing in v1.15 (`switch
#   action.Action`), so Huawei's build leaves that file as it is, and so does this one.
# - Only the two programs are built (no webhook manager, agents or CLI), statically (CGO off), in one invocation so
#   that their shared packages compile once.
#
# How it runs: both programs as host processes beside the control plane (like kube-scheduler), with the admin
# kubeconfig, logs in $CLUSTER_LOGS/vc-*.log. Huawei's YAML runs them as Deployments under their own ServiceAccounts;
# images would add a packing step and nothing the tests look at. The scheduler's configuration is Huawei's v1.15
# YAML's (actions, tiers and plugins, init-params) with one change: `useClusterInfoManager: "false"`, the plugin's
# direct mode, reading the device plugin's mindx-dl-deviceinfo ConfigMaps and Node annotations, because the cluster
# runs no ClusterD (scripts/cluster/config/volcano-scheduler.conf). No admission webhook: Volcano's webhook manager
# fills defaults (queue, minAvailable) and rejects invalid Jobs; the tests' objects set what it would default, and a
# webhook is called through a Service, which this cluster without kube-proxy does not route, with TLS certificates
# Volcano's installer makes.
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/peers/lib.sh
source "$REPO_ROOT/scripts/peers/lib.sh"

# The name Huawei's build gives the plugin (its REL_NPU_PLUGIN without a service_config.ini); the scheduler's
# configuration names it.
NPU_PLUGIN_NAME=volcano-npu_v26.1.0
# The volcano.sh/apis standing in for the one Volcano keeps in its own tree (see build).
VOLCANO_APIS_VERSION=v1.14.0
VOLCANO_BIN=$CLUSTER_CACHE/volcano-$VOLCANO_VERSION-mind-cluster-${MIND_CLUSTER_COMMIT:0:12}/bin

build() {
    if [[ -x $VOLCANO_BIN/vc-scheduler && -x $VOLCANO_BIN/vc-controller-manager && -d $VOLCANO_BIN/crd ]]; then
        echo "volcano: $VOLCANO_BIN is cached"
        return 0
    fi
    local tree started=$SECONDS
    if ! tree=$(peers_find_tree ""); then
        echo "volcano: no mind-cluster tree at ${MIND_CLUSTER_TREE:-$DEFAULT_MIND_CLUSTER_TREE}, so no Ascend" \
            "plugin to build Volcano with (its cluster tests are skipped)"
        exit 3
    fi
    # Go's caches are scratch, removed once the programs are cached, as scripts/cluster/build.sh does (which says why);
    # a failed build keeps them for the next try.
    local scratch=$CLUSTER_CACHE/build/volcano-$VOLCANO_VERSION
    export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0 \
        GOCACHE=$scratch/go/cache GOMODCACHE=$scratch/go/mod
    local module_dir src=$scratch/src
    rm -rf "$src"
    mkdir -p "$scratch"
    module_dir=$(cd "$scratch" && go mod download -json "volcano.sh/volcano@v$VOLCANO_VERSION" |
        sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
    [[ -d $module_dir ]] || die "go mod download named no directory for volcano.sh/volcano@v$VOLCANO_VERSION"
    cp -r "$module_dir" "$src"
    chmod -R u+w "$src"
    # Volcano's API types are the nested module staging/src/volcano.sh/apis, which the module's zip leaves out (Go
    # drops nested modules) and its go.mod replaces by that directory. The proxy serves no volcano.sh/apis v1.15.0;
    # its v1.14.0 stands in, from a copy with the one identifier v1.15.0 adds to the API types (the scheduling
    # group's queue-allocation-gate annotation key, volcano-sh/apis `pkg/apis/scheduling/v1beta1/labels.go`). The
    # rest of what v1.15.0 changes there is comments, validation markers and regenerated client code.
    local apis_dir
    apis_dir=$(cd "$scratch" && go mod download -json "volcano.sh/apis@$VOLCANO_APIS_VERSION" |
        sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
    [[ -d $apis_dir ]] || die "go mod download named no directory for volcano.sh/apis@$VOLCANO_APIS_VERSION"
    mkdir -p "$src/staging/src/volcano.sh"
    cp -r "$apis_dir" "$src/staging/src/volcano.sh/apis"
    chmod -R u+w "$src/staging/src/volcano.sh/apis"
    cat >"$src/staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/queue_allocation_gate.go" <<'GO'
package v1beta1

// QueueAllocationGateKey is the annotation and scheduling-gate name of Volcano's queue admission, new in v1.15.
const QueueAllocationGateKey = GroupName + "/queue-allocation-gate"
GO
    local plugin=$src/pkg/scheduler/plugins/ascend-volcano-plugin
    cp -r "$tree/component/ascend-for-volcano" "$plugin"
    # CI lays the mind-cluster tree without write bits, and cp keeps them off.
    chmod -R u+w "$plugin"
    rm -rf "$plugin/output" "$plugin/test" "$plugin/testdata"
    # The plugin's top-level package is a package main, as a .so must be; as a library it takes the name of its
    # directory, and vc-scheduler imports it through a file of ours that registers it under its name.
    sed -i 's/^package main$/package ascendplugin/' "$plugin"/*.go
    cat >"$src/cmd/scheduler/ascend_npu_plugin.go" <<'GO'
package main

import (
	"volcano.sh/volcano/pkg/scheduler/framework"
	ascendplugin "volcano.sh/volcano/pkg/scheduler/plugins/ascend-volcano-plugin"
)

// Registers the Ascend plugin compiled into this program as Volcano registers a plugin loaded from a .so file.
func init() {
	framework.RegisterPluginBuilder(ascendplugin.PluginName, ascendplugin.New)
}
GO
    # Score a task also when one node passes the predicates, as Huawei's patched allocate action does.
    local allocate=$src/pkg/scheduler/actions/allocate/allocate.go
    perl -0pi -e 's/\n(\s*)case len\(nodes\) == 1:[^\n]*\n[^\n]*\n\s*case len\(nodes\) > 1:[^\n]*\n/\n$1default:\n/' \
        "$allocate"
    grep -q 'case len(nodes) == 1' "$allocate" && die "the allocate action's single-node case is still in $allocate"
    local flags="-s -w -X volcano.sh/volcano/pkg/version.Version=v$VOLCANO_VERSION"
    flags+=" -X volcano.sh/volcano/pkg/version.Built=1970-01-01"
    flags+=" -X volcano.sh/volcano/pkg/scheduler/plugins/ascend-volcano-plugin.PluginName=$NPU_PLUGIN_NAME"
    mkdir -p "$VOLCANO_BIN.partial" "$VOLCANO_BIN.partial/crd"
    # The CRDs start applies, from the same tree.
    cp "$src"/config/crd/volcano/bases/*.yaml "$VOLCANO_BIN.partial/crd/"
    (cd "$src" && go build -trimpath -ldflags "$flags" -o "$VOLCANO_BIN.partial/" \
        ./cmd/scheduler ./cmd/controller-manager)
    mv "$VOLCANO_BIN.partial/scheduler" "$VOLCANO_BIN.partial/vc-scheduler"
    mv "$VOLCANO_BIN.partial/controller-manager" "$VOLCANO_BIN.partial/vc-controller-manager"
    rm -rf "$VOLCANO_BIN"
    mv "$VOLCANO_BIN.partial" "$VOLCANO_BIN"
    go clean -modcache
    rm -rf "$scratch"
    echo "volcano: built $VOLCANO_VERSION with Huawei's plugin ($NPU_PLUGIN_NAME) in $((SECONDS - started)) s"
}

# The ports of both programs, on loopback and off the defaults (:11251 for health, which the device plugin's own
# health endpoint already takes on the node, and :8080, :8081 for metrics).
SCHEDULER_HEALTHZ=127.0.0.1:11351
CONTROLLER_HEALTHZ=127.0.0.1:11352

start_volcano() {
    [[ -x $VOLCANO_BIN/vc-scheduler ]] || die "no Volcano build in $VOLCANO_BIN: run scripts/cluster/volcano.sh build"
    stop_volcano
    kubectl apply --server-side --force-conflicts -f "$VOLCANO_BIN/crd" >/dev/null
    local crd
    for crd in "$VOLCANO_BIN/crd"/*.yaml; do
        crd=$(basename "$crd" .yaml)
        kubectl wait --for=condition=Established "crd/${crd#*_}.${crd%%_*}" --timeout=60s >/dev/null
    done
    kubectl create namespace volcano-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    sed "s|@NPU_PLUGIN@|$NPU_PLUGIN_NAME|" "$CLUSTER_SCRIPTS/config/volcano-scheduler.conf" \
        >"$CLUSTER_STATE/volcano-scheduler.conf"
    # The flags of Huawei's YAML less its log files (the logs go to $CLUSTER_LOGS) and its thread counts sized for
    # large clusters. Its controller list (all but sharding and cronjob) is cut to the job, podgroup and queue
    # controllers the tests use: the controller manager initialises controllers one after another, and one whose
    # informers wait for a CRD that is not installed (JobFlow's, HyperJob's ...) holds back every later one.
    start vc-controller-manager "$VOLCANO_BIN/vc-controller-manager" --kubeconfig="$ADMIN_KUBECONFIG" \
        --enable-healthz=true --healthz-address="$CONTROLLER_HEALTHZ" --listen-address=127.0.0.1:11353 \
        --controllers=job-controller,pg-controller,queue-controller --leader-elect=false -v=2
    start vc-scheduler "$VOLCANO_BIN/vc-scheduler" --kubeconfig="$ADMIN_KUBECONFIG" \
        --scheduler-conf="$CLUSTER_STATE/volcano-scheduler.conf" --leader-elect=false \
        --enable-healthz=true --healthz-address="$SCHEDULER_HEALTHZ" --listen-address=127.0.0.1:11354 \
        --schedule-period=1s --percentage-nodes-to-find=100 -v=3
    WAIT_LOG=vc-controller-manager wait_for 60 vc-controller-manager curl -sf "http://$CONTROLLER_HEALTHZ/healthz"
    WAIT_LOG=vc-scheduler wait_for 60 vc-scheduler curl -sf "http://$SCHEDULER_HEALTHZ/healthz"
    WAIT_LOG=vc-scheduler wait_for 60 "Volcano's default queue" kubectl get queue default
    say "Volcano $VOLCANO_VERSION running (logs: $CLUSTER_LOGS/vc-scheduler.log, vc-controller-manager.log)"
}

stop_volcano() {
    stop_pid vc-scheduler
    stop_pid vc-controller-manager
}

case ${1:-} in
    build) build ;;
    start) start_volcano ;;
    stop) stop_volcano ;;
    *) die "usage: volcano.sh build|start|stop" ;;
esac
