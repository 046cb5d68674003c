#!/usr/bin/env bash
# The comparison tier (docs/huawei-compatibility.md): Huawei's npu-exporter and docker runtime, built from a mind-cluster
# tree at the pinned commit, run beside ours on every sample host, their outputs compared; a difference that
# peer-tests/known-differences.toml does not list and explain fails it. Run by scripts/test.sh after the build.
#
#   peer-tests/run.sh [--tree DIR] [-- RUN.PY ARGUMENTS]   e.g. -- --hosts atlas-950-8 --programs npu-exporter
#
# Without a tree (none given and none beside the checkout) it says so and is skipped, except under CI (CI=true), where
# the tree is always laid beside the checkout and its absence is an error. Needs root (mount namespaces, device nodes)
# and our debug binaries (cargo build --workspace --all-features).
set -euo pipefail
cd "$(dirname "$0")/.."

tree_args=()
while (($#)); do
    case $1 in
        --tree) tree_args=(--tree "${2:?--tree needs a directory}"); shift 2 ;;
        --) shift; break ;;
        -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "peer-tests: unknown argument '$1' (usage: peer-tests/run.sh [--tree DIR] [-- RUN.PY ARGUMENTS])" >&2; exit 2 ;;
    esac
done

# The harness's own tests first: a comparison whose differ is wrong proves nothing.
python3 -m unittest discover -s peer-tests/tests -t peer-tests

status=0
bin=$(bash scripts/peers/build.sh "${tree_args[@]}" | tail -n 1) || status=$?
if ((status == 3)); then
    if [[ ${CI:-} == true ]]; then
        echo "peer-tests: error: no mind-cluster tree beside the checkout (../shared/peers/mind-cluster), where CI lays it" >&2
        exit 1
    fi
    echo "peer-tests: SKIPPED: no mind-cluster tree; give one with --tree DIR (any checkout of Ascend/mind-cluster at" \
        "the commit in scripts/peers/versions.env)"
    exit 0
fi
((status == 0)) || exit "$status"

target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
for program in dcmi-sim npu-exporter ascend-ctk; do
    [[ -x $target/debug/$program ]] || {
        echo "peer-tests: error: $target/debug/$program is not built (cargo build --workspace --all-features)" >&2
        exit 1
    }
done
exec python3 peer-tests/run.py --huawei-bin "$bin" --our-bin "$target/debug" --work "$target/peer-tests" "$@"
