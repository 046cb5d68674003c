#!/usr/bin/env bash
# The plain manifests of deploy/kubernetes, for operators who apply YAML (or whose GitOps tool takes rendered YAML)
# rather than install the chart: each is `helm template` of deploy/helm/ascend-npu with one profile of
# deploy/helm/profiles, so that no manifest is written twice. The chart is the source; never edit the renders.
#   scripts/render-manifests.sh           writes deploy/kubernetes/<profile>.yaml
#   scripts/render-manifests.sh --check   fails, naming the file and the difference, when a render is out of date
# Helm comes from its Go module, built once per version into the test bed's cache (scripts/cluster/helm).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case ${1:-} in
    --check) check=true ;;
    "") ;;
    *)
        echo "usage: $0 [--check]" >&2
        exit 2
        ;;
esac

helm=scripts/cluster/helm

# Each profile's namespace: the pools' own, so that both pools can run in one cluster and be upgraded apart (Volcano
# mode is the training pool in a Volcano cluster, hence its namespace).
declare -A namespaces=(
    [training-910b]=ascend-training-910b
    [inference-310p]=ascend-inference-310p
    [volcano-910b]=ascend-training-910b
    [dra]=ascend-dra
)

chart=deploy/helm/ascend-npu
stale=0
for profile in deploy/helm/profiles/*.yaml; do
    name=$(basename "$profile" .yaml)
    namespace=${namespaces[$name]:-}
    if [[ -z $namespace ]]; then
        echo "render-manifests: $profile has no namespace in $0" >&2
        exit 1
    fi
    out=deploy/kubernetes/$name.yaml
    rendered=$(
        printf '# Rendered from %s with %s by scripts/render-manifests.sh: edit those, never this file.\n' \
            "$chart" "$profile"
        printf '#   kubectl apply --server-side -f %s\n' "$out"
        "$helm" template ascend-npu "$chart" --namespace "$namespace" --values "$profile"
    )
    if $check; then
        if ! diff -u "$out" <(printf '%s\n' "$rendered") >&2; then
            echo "render-manifests: $out is not what the chart renders (above); run scripts/render-manifests.sh" >&2
            stale=1
        fi
    else
        printf '%s\n' "$rendered" >"$out"
        echo "render-manifests: $out ($(grep -c '^kind:' "$out") objects)"
    fi
done
if $check; then
    for out in deploy/kubernetes/*.yaml; do
        [[ -f deploy/helm/profiles/$(basename "$out") ]] || {
            echo "render-manifests: $out has no profile in deploy/helm/profiles: a manifest written by hand" >&2
            stale=1
        }
    done
fi
exit "$stale"
