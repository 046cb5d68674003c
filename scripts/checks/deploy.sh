#!/usr/bin/env bash
# Checks of the deploy/ artifacts, run by scripts/test.sh (CI has no cluster, kubelet or Docker engine):
#   1. the Dockerfile checker passes its own tests;
#   2. the Helm chart deploy/helm/ascend-npu passes `helm lint --strict` with its defaults, each profile of
#      deploy/helm/profiles and every part switched on; a misspelt value and the device plugin beside the DRA driver
#      fail, naming the problem; the plain manifests of deploy/kubernetes are what the chart renders
#      (scripts/render-manifests.sh --check);
#   3. every example manifest and every render of the chart passes kubernetes-validate --strict for each Kubernetes
#      version in $KUBERNETES_VERSIONS (a self-test first proves that a bad manifest and an unknown kind do fail); the
#      chart's PrometheusRule passes `promtool check rules`;
#   4. the Dockerfiles pass scripts/check_dockerfiles.py;
#   5. deploy/host/install.sh passes deploy/host/install_test.sh, and the shell scripts pass shellcheck;
#   6. Prometheus rule files in deploy/prometheus pass `promtool check rules`, their unit tests `promtool test rules`.
# Every tool it needs must be installed (scripts/install-deps.sh); a missing one is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The Kubernetes minor versions supported upstream at the time of writing; all are in kubernetes-validate's schemas.
KUBERNETES_VERSIONS=${KUBERNETES_VERSIONS:-"1.34.0 1.35.0 1.36.0 1.37.0"}
# Overridable so that the promtool part can be tried on other rule files.
PROMETHEUS_DIR=${PROMETHEUS_DIR:-deploy/prometheus}
CHART=deploy/helm/ascend-npu

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf -- '--- %s\n' "$*"; }
die() {
    echo "deploy check: FAIL: $*" >&2
    exit 1
}

for tool in python3 kubernetes-validate promtool shellcheck systemd-analyze cargo go; do
    command -v "$tool" >/dev/null || die "$tool is not installed (run scripts/install-deps.sh)"
done

say "Dockerfile checker tests"
python3 scripts/check_dockerfiles_test.py

say "Helm chart: lint, refusals, renders"
helm=scripts/cluster/helm
# Every part on, once with the device plugin (Volcano mode, node Events, time-sharing, renames, the exporter's TLS and
# the Prometheus operator's objects) and once with the DRA driver (partitionable): what the profiles leave off.
cat >"$work/values-all-device-plugin.yaml" <<'EOF'
pool: {chipType: "910B", name: training-910b, extraTolerationKeys: [huawei.com/Ascend910]}
devicePlugin: {replicas: 2, renames: [Ascend910=npu-910], volcano: {enabled: true}, nodeEvents: true}
nodeSetup: {runtime: containerd, runtimeConfig: /etc/containerd/config.toml, enableCdi: false}
exporter: {naming: both, webConfigSecret: npu-exporter-web-config, podMonitor: true, prometheusRule: true}
EOF
cat >"$work/values-all-dra.yaml" <<'EOF'
devicePlugin: {enabled: false}
draDriver: {enabled: true, partitionable: true}
nodeSetup: {runtime: crio, installDir: /opt/ascend/bin}
exporter: {podMonitor: true, prometheusRule: true}
EOF
rendered=()
for values in "" "$work/values-all-device-plugin.yaml" "$work/values-all-dra.yaml" deploy/helm/profiles/*.yaml; do
    name=render-$(basename "${values:-defaults}" .yaml)
    flags=(--namespace ascend-system)
    [[ -n $values ]] && flags+=(--values "$values")
    "$helm" lint --strict "$CHART" "${flags[@]}" >"$work/lint.txt" 2>&1 ||
        die "helm lint --strict with ${values:-the default values}: $(cat "$work/lint.txt")"
    "$helm" template ascend-npu "$CHART" "${flags[@]}" >"$work/$name.yaml" ||
        die "helm template with ${values:-the default values} failed"
    # The Prometheus operator's kinds have no schema in kubernetes-validate: the rules go to promtool instead.
    python3 - "$work/$name.yaml" "$work/$name.rules.yaml" <<'PYTHON'
import sys, yaml
with open(sys.argv[1]) as handle:
    documents = [document for document in yaml.safe_load_all(handle) if document]
rules = [document for document in documents if document["kind"] == "PrometheusRule"]
with open(sys.argv[1], "w") as handle:
    yaml.safe_dump_all([d for d in documents if not d["apiVersion"].startswith("monitoring.coreos.com/")], handle)
if rules:
    with open(sys.argv[2], "w") as handle:
        yaml.safe_dump(rules[0]["spec"], handle)
PYTHON
    if [[ -f $work/$name.rules.yaml ]]; then
        promtool check rules "$work/$name.rules.yaml" >/dev/null || die "the chart's PrometheusRule ($name) fails promtool"
    fi
    echo "$name: lint clean, $(grep -c '^kind:' "$work/$name.yaml") objects besides the Prometheus operator's"
    rendered+=("$work/$name.yaml")
done
# Bad values fail the install with the problem named, before anything reaches the cluster.
expect_refused() { # what-the-error-names helm-flag...
    local names=$1 output
    shift
    if output=$("$helm" template ascend-npu "$CHART" --namespace ascend-system "$@" 2>&1); then
        die "helm template accepted $*"
    fi
    grep -q -- "$names" <<<"$output" || die "helm template $* failed without naming $names: $output"
}
expect_refused "exporterr" --set exporterr.enabled=true
expect_refused "naming" --set exporter.naming=prometheus
expect_refused "both true" --set draDriver.enabled=true
expect_refused "replicas" --set devicePlugin.replicas=0
expect_refused "namespace of its own" --namespace default --set namespace.create=true
expect_refused "runtime" --set nodeSetup.runtime=podman
expect_refused "installDir" --set nodeSetup.installDir=usr/local/bin
expect_refused "recovery/mode" --set devicePlugin.recovery.mode=1
expect_refused "recovery.mode is not off while devicePlugin.volcano" --set devicePlugin.recovery.mode=inference \
    --set devicePlugin.volcano.enabled=true
echo "a misspelt key, a bad value, the device plugin beside the DRA driver, a shared namespace and recovery in" \
    "Volcano mode are refused"
bash scripts/render-manifests.sh --check
echo "deploy/kubernetes/*.yaml are the chart's renders"

# kubernetes-validate prints INFO per valid object, ERROR per invalid one, and only WARNs (exit 0) for a kind it has
# no schema for; a WARN here means a misspelt kind or apiVersion, so it fails too.
validate() {
    local version=$1
    shift
    local output status=0
    output=$(kubernetes-validate --strict --quiet -k "$version" "$@" 2>&1) || status=$?
    if ((status != 0)) || [[ -n $output ]]; then
        printf '%s\n' "$output" >&2
        return 1
    fi
}

say "kubernetes-validate self-test"
cat >"$work/bad-field.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  containers: [{name: c, image: busybox:1.36, imagePullPolice: Always}]
EOF
cat >"$work/bad-kind.yaml" <<'EOF'
apiVersion: node.k8s.io/v1
kind: RuntimeClas
metadata: {name: bad}
handler: ascend
EOF
for bad in bad-field bad-kind; do
    if validate "${KUBERNETES_VERSIONS##* }" "$work/$bad.yaml" 2>/dev/null; then
        die "kubernetes-validate accepted $bad.yaml: the validation below would prove nothing"
    fi
done
echo "an unknown field and an unknown kind are rejected"

manifests=()
while IFS= read -r file; do
    manifests+=("$file")
done < <(find deploy/kubernetes/examples -name '*.yaml' | sort)
for version in $KUBERNETES_VERSIONS; do
    say "kubernetes-validate --strict, Kubernetes $version"
    validate "$version" "${manifests[@]}" "${rendered[@]}" ||
        die "manifests do not validate against Kubernetes $version"
    echo "${#manifests[@]} example manifests and ${#rendered[@]} renders of the chart are valid"
done

say "Dockerfiles"
python3 scripts/check_dockerfiles.py --manifests deploy/kubernetes deploy/docker/*.Dockerfile

say "host installation"
shellcheck deploy/host/install.sh deploy/host/install_test.sh deploy/krew/package.sh scripts/checks/deploy.sh \
    scripts/render-manifests.sh
bash deploy/host/install_test.sh

say "ascend-doctor check ids named in deploy/README.md"
id_pattern='(driver|versions|container_runtime|kubernetes|monitoring)\.[a-z_]+'
documented=$(grep -oE "\`$id_pattern\`" deploy/README.md | tr -d '`' | sort -u)
[[ -n $documented ]] || die "deploy/README.md names no ascend-doctor check id"
defined=$(cat ascend-doctor/src/*.rs | grep -oE "\"$id_pattern\"" | tr -d '"' | sort -u)
missing=$(comm -23 <(echo "$documented") <(echo "$defined"))
[[ -z $missing ]] ||
    die "deploy/README.md names check ids ascend-doctor does not define: $(echo "$missing" | tr '\n' ' ')"
undocumented=$(comm -13 <(echo "$documented") <(echo "$defined"))
[[ -z $undocumented ]] && echo "all $(echo "$documented" | wc -l) ids exist, and every doctor check is in the guide" ||
    echo "all documented ids exist; not yet in the guide: $(echo "$undocumented" | tr '\n' ' ')"

say "Prometheus rules"
rule_files=()
test_files=()
if [[ -d $PROMETHEUS_DIR ]]; then
    # A file with top-level `groups` is a rule file; one with `rule_files` and `tests` is a promtool unit test.
    while IFS=$'\t' read -r role file; do
        case $role in
            rules) rule_files+=("$file") ;;
            tests) test_files+=("$file") ;;
            *) echo "not a rule or test file, not checked by promtool: $file" ;;
        esac
    done < <(find "$PROMETHEUS_DIR" "$CHART/files" -name '*.y*ml' | sort | python3 -c '
import sys, yaml
for name in sys.stdin.read().split():
    with open(name) as handle:
        document = yaml.safe_load(handle)
    if isinstance(document, dict) and "groups" in document:
        print(f"rules\t{name}")
    elif isinstance(document, dict) and "tests" in document and "rule_files" in document:
        print(f"tests\t{name}")
    else:
        print(f"other\t{name}")
')
fi
if ((${#rule_files[@]})); then
    promtool check rules "${rule_files[@]}"
else
    echo "no rule files in $PROMETHEUS_DIR yet: nothing for promtool check rules"
fi
if ((${#test_files[@]})); then
    # promtool resolves rule_files relative to the test file, so each runs from its own directory.
    for file in "${test_files[@]}"; do
        (cd "$(dirname "$file")" && promtool test rules "$(basename "$file")")
    done
elif ((${#rule_files[@]})); then
    echo "note: $PROMETHEUS_DIR has rules but no promtool unit tests"
fi

say "deploy checks passed"
