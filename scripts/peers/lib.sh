# Shared by the scripts/peers/ scripts: where Huawei's mind-cluster tree is, which commit it must be, and where its
# programs are cached once built.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the scripts that source this file
PEERS_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$PEERS_SCRIPTS/../.." && pwd)
# shellcheck source=scripts/peers/versions.env
source "$PEERS_SCRIPTS/versions.env"

# Built programs outside the repository, so that every clone on the machine shares them; keyed by the commit and the
# Go version that built them.
PEERS_CACHE=${PEERS_CACHE:-/var/cache/ascend-rs-peers}
# Where CI lays the pinned tree: beside the checkout.
DEFAULT_MIND_CLUSTER_TREE=$REPO_ROOT/../shared/peers/mind-cluster
# And the bounds-checking library ascend-docker-cli is built with (versions.env).
DEFAULT_LIBBOUNDSCHECK_TREE=$REPO_ROOT/../shared/peers/libboundscheck

peers_die() {
    echo "peers: error: $*" >&2
    exit 1
}

# peers_bin_dir: the cache directory of this commit's programs for the Go on PATH.
peers_bin_dir() {
    local go_version
    go_version=$(go env GOVERSION 2>/dev/null) || peers_die "go is not on PATH"
    echo "$PEERS_CACHE/mind-cluster-${MIND_CLUSTER_COMMIT:0:12}-$go_version/bin"
}

# peers_tree_commit DIR: prints the commit the tree at DIR is, from git when it is a checkout, otherwise from the
# PROVENANCE.md a copied subset carries; prints nothing when neither says.
peers_tree_commit() {
    local dir=$1
    if git -C "$dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$dir" rev-parse HEAD
    elif [[ -f $dir/PROVENANCE.md ]]; then
        grep -o '[0-9a-f]\{40\}' "$dir/PROVENANCE.md" | head -n 1
    fi
}

# peers_find_tree [DIR]: prints the mind-cluster tree to build from (DIR, else $MIND_CLUSTER_TREE, else the one beside
# the checkout); returns 1 with nothing printed when there is none; dies when the tree is another commit.
peers_find_tree() {
    local dir=${1:-${MIND_CLUSTER_TREE:-$DEFAULT_MIND_CLUSTER_TREE}} commit
    [[ -d $dir/component ]] || return 1
    dir=$(cd "$dir" && pwd)
    commit=$(peers_tree_commit "$dir")
    [[ $commit == "$MIND_CLUSTER_COMMIT" ]] ||
        peers_die "$dir is mind-cluster commit '${commit:-unknown}', the comparison needs $MIND_CLUSTER_COMMIT (scripts/peers/versions.env)"
    echo "$dir"
}
