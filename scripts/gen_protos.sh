#!/usr/bin/env bash
# Regenerates the committed gRPC code of every crate that has a proto/generate.txt (today ascend-deviceplugin,
# ascend-node and dra-kubelet-plugin) with the pure-Rust generator in scripts/protogen (no protoc).
#   scripts/gen_protos.sh [--check] [crate ...]   (default: every such crate)
# Without --check it rewrites <crate>/src/generated/; with --check it fails (exit 1) naming each committed file that
# differs from what the protos generate (CI runs it). Each line of generate.txt is
# `<proto under proto/> <file the generator writes> <committed file under src/generated/>`.
set -euo pipefail
repo_dir="$(cd "$(dirname "$0")/.." && pwd)"
check=false
crates=()
for argument in "$@"; do
    case $argument in
        --check) check=true ;;
        -*) echo "usage: $0 [--check] [crate ...]" >&2; exit 2 ;;
        *) crates+=("$argument") ;;
    esac
done
if ((${#crates[@]} == 0)); then
    for list in "$repo_dir"/*/proto/generate.txt; do
        crates+=("$(basename "$(dirname "$(dirname "$list")")")")
    done
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
for crate in "${crates[@]}"; do
    crate_dir=$repo_dir/$crate
    list=$crate_dir/proto/generate.txt
    [[ -f $list ]] || { echo "gen_protos: $crate has no proto/generate.txt" >&2; exit 2; }
    protos=() generated=() committed=()
    while read -r proto output file; do
        [[ -z $proto || $proto == \#* ]] && continue
        [[ -n $file ]] || { echo "gen_protos: $list: '$proto' needs three fields" >&2; exit 2; }
        protos+=("$proto") generated+=("$output") committed+=("$file")
    done <"$list"
    out=$scratch/$crate
    mkdir -p "$out"
    CARGO_TARGET_DIR="$repo_dir/target/protogen" cargo run --quiet --locked \
        --manifest-path "$repo_dir/scripts/protogen/Cargo.toml" -- "$crate_dir/proto" "$out" "${protos[@]}"
    # Formatted with the repository's rustfmt settings so that `cargo fmt` leaves the committed files alone.
    rustfmt --edition 2021 --config-path "$repo_dir/rustfmt.toml" "$out"/*.rs
    for i in "${!generated[@]}"; do
        target=$crate_dir/src/generated/${committed[$i]}
        if $check; then
            if ! diff -u "$target" "$out/${generated[$i]}"; then
                echo "$crate/src/generated/${committed[$i]} is out of date: run scripts/gen_protos.sh $crate" >&2
                status=1
            fi
        else
            cp "$out/${generated[$i]}" "$target"
        fi
    done
done
exit "$status"
