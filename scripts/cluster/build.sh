#!/usr/bin/env bash
# Builds the test bed's Go programs from their Go modules: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet and kubectl (Kubernetes), etcd, containerd with its runc shim and ctr, runc, and helm. Each set goes to
# $CLUSTER_CACHE/<name>-<version>/bin and is skipped when that directory is complete, so only the first run on a
# machine pays for the build. Usage: scripts/cluster/build.sh [etcd|containerd|runc|helm|kubernetes]...  (prints each time)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/cluster/lib.sh
source "$here/lib.sh"

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

# Go's build and module caches are scratch here, removed once every set is cached: only the binaries are kept. Left in
# Go's default places they held 4.3 GB of compiled packages and 1.8 GB of modules after this build, on the disk the
# Rust builds of the same CI run need (a cold run once failed linking the daemons' release build: the linker died of
# SIGBUS when the disk filled).
go_scratch=$CLUSTER_CACHE/build/go
export GOCACHE=$go_scratch/cache GOMODCACHE=$go_scratch/mod

# A wrapper module per program set: Kubernetes and etcd keep `replace` lines in their own go.mod, which Go ignores in
# a dependency, so the wrapper pins what they replace (kubernetes/kubernetes#79384). The main packages are recorded
# as `tool` dependencies so the module graph keeps them without any Go source of ours.
wrapper() { # dir module-line...
    local dir=$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    printf '%s\n' "$@" >"$dir/go.mod"
}

build_kubernetes() {
    local version=$KUBERNETES_VERSION out
    out=$(cache_bin kubernetes "$version")
    if complete "$out" kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; then
        return 0
    fi
    local staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
        cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api cri-client
        csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
        kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission
        sample-apiserver sample-cli-plugin sample-controller)
    local staging_version=0.${version#1.} lines=() module dir
    for module in "${staging[@]}"; do
        lines+=("replace k8s.io/$module => k8s.io/$module v$staging_version")
    done
    dir=$CLUSTER_CACHE/build/kubernetes-$version
    wrapper "$dir" "module local/kubernetes-build" "go 1.24.0" "godebug default=go1.24" \
        "require k8s.io/kubernetes v$version" "${lines[@]}"
    local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl) packages=()
    for module in "${cmds[@]}"; do packages+=("k8s.io/kubernetes/cmd/$module"); done
    (cd "$dir" && go get -tool "${packages[@]/%/@v$version}")
    # The version stamps upstream's hack/lib/version.sh sets; without them the node reports v0.0.0-master.
    local minor=${version#1.} flags="-s -w" package
    minor=${minor%%.*}
    for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $package.gitVersion=v$version -X $package.gitMajor=1 -X $package.gitMinor=$minor"
        flags+=" -X $package.gitTreeState=clean -X $package.buildDate=1970-01-01T00:00:00Z"
    done
    # One invocation, so each dependency is compiled once for all five programs. The tags are upstream's
    # (hack/lib/golang.sh).
    mkdir -p "$out.partial"
    (cd "$dir" && go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$flags" -o "$out.partial/" \
        "${packages[@]}")
    finish "$out"
}

# wrapped_build NAME VERSION PACKAGE [GO BUILD FLAG...]: builds the main package PACKAGE, the root of its module, at
# VERSION through a wrapper module, into the cache as the program NAME.
wrapped_build() {
    local name=$1 version=$2 package=$3 out dir
    shift 3
    out=$(cache_bin "$name" "$version")
    complete "$out" "$name" && return 0
    dir=$CLUSTER_CACHE/build/$name-$version
    wrapper "$dir" "module local/$name-build" "go 1.24.0" "require $package v$version"
    (cd "$dir" && go get -tool "$package@v$version")
    mkdir -p "$out.partial"
    (cd "$dir" && go build -trimpath "$@" -o "$out.partial/$name" "$package")
    finish "$out"
}

build_etcd() {
    wrapped_build etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 -ldflags "-s -w"
}

build_containerd() {
    local version=$CONTAINERD_VERSION out module=github.com/containerd/containerd/v2
    out=$(cache_bin containerd "$version")
    complete "$out" containerd containerd-shim-runc-v2 ctr && return 0
    local flags="-s -w -X $module/version.Version=v$version"
    mkdir -p "$out.partial"
    # The tags of containerd's Makefile; the shim is built without gRPC as upstream does.
    GOBIN=$out.partial go install -trimpath -tags urfave_cli_no_docs -ldflags "$flags" \
        "$module/cmd/containerd@v$version" "$module/cmd/ctr@v$version"
    GOBIN=$out.partial go install -trimpath -tags "urfave_cli_no_docs no_grpc" -ldflags "$flags" \
        "$module/cmd/containerd-shim-runc-v2@v$version"
    finish "$out"
}

build_runc() {
    # runc's go.mod has `exclude` lines, which only its own module may use: a wrapper module, as for etcd. Its nsenter
    # is C (cgo); seccomp support links libseccomp (Debian's libseccomp-dev), as upstream's release build does.
    CGO_ENABLED=1 wrapped_build runc "$RUNC_VERSION" github.com/opencontainers/runc -tags seccomp \
        -ldflags "-s -w -X main.version=$RUNC_VERSION"
}

build_helm() {
    local version=$HELM_VERSION out module=helm.sh/helm/v3
    out=$(cache_bin helm "$version")
    complete "$out" helm && return 0
    # The stamps of helm's Makefile: its version, and the Kubernetes version `helm template` and `helm lint` assume
    # without a cluster, taken from the client-go it is built with (without them it assumes 1.20, below every chart's
    # kubeVersion floor).
    go mod download "$module@v$version"
    local minor
    minor=$(sed -n 's/^\s*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$(go env GOMODCACHE)/$module@v$version/go.mod")
    [[ -n $minor ]] || die "cannot find helm $version's client-go version in its go.mod"
    local flags="-s -w -X $module/internal/version.version=v$version" package
    for package in pkg/lint/rules pkg/chartutil; do
        flags+=" -X $module/$package.k8sVersionMajor=1 -X $module/$package.k8sVersionMinor=$minor"
    done
    mkdir -p "$out.partial"
    GOBIN=$out.partial go install -trimpath -ldflags "$flags" "$module/cmd/helm@v$version"
    finish "$out"
}

# A set is complete when every program is there; it is built into a .partial directory and renamed at the end, so an
# interrupted build is never taken for a finished one.
complete() {
    local dir=$1 program
    shift
    for program in "$@"; do [[ -x $dir/$program ]] || return 1; done
    echo "cluster build: $dir is cached"
}
finish() {
    rm -rf "$1"
    mv "$1.partial" "$1"
}

sets=("$@")
((${#sets[@]})) || sets=(etcd containerd runc helm kubernetes)
for set in "${sets[@]}"; do
    started=$SECONDS
    "build_$set"
    echo "cluster build: $set ready in $((SECONDS - started)) s"
done
if [[ -d $go_scratch ]]; then
    # The module cache's files are read-only; `go clean -modcache` is Go's way to remove them.
    go clean -modcache
    rm -rf "$go_scratch"
    echo "cluster build: removed Go's build and module caches ($go_scratch)"
fi
