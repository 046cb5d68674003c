#!/usr/bin/env python3
"""What the release checks need to know about the workspace's crates, read from `cargo metadata` JSON on stdin.

    publishable     the crates that `cargo publish` would upload (`publish` not `false`): `name version directory` a
                    line, the directory relative to the workspace root
    publish-order   the same crates, each after every sibling it depends on (dev-dependencies included: crates.io
                    resolves them too), one name a line
    check-manifest  fails, naming each crate and field, unless every publishable crate carries what crates.io and
                    docs.rs show: description, license, readme, keywords, categories, documentation, rust-version,
                    docs.rs metadata building every feature with `--cfg docsrs`, and no placeholder repository
    rust-version    fails unless each publishable crate's declared rust-version is at least every rust-version its
                    normal and build dependencies declare (needs metadata with `resolve`, so without --no-deps);
                    prints the declared versions, one `crate version` a line

Used by scripts/checks/package.sh and scripts/checks/rust-version.sh; tested by crate_metadata_test.py.
"""

import json
import sys

# What a crate must state for crates.io and docs.rs, each with the reason a user would miss it.
REQUIRED_FIELDS = {
    "description": "crates.io shows it in search results",
    "license": "users must know the terms",
    "readme": "crates.io shows it as the crate's page",
    "keywords": "crates.io search",
    "categories": "crates.io browsing",
    "documentation": "the crate page links the docs with it",
    "rust_version": "cargo refuses a too old toolchain with a clear message instead of a compile error",
}
# The repository URL until the project has a public one; publishing it would show a dead link on crates.io forever.
PLACEHOLDER_HOSTS = ("example.invalid", "example.com", "example.org")


def publishable(metadata):
    """The workspace members that `cargo publish` would upload, in `cargo metadata` order."""
    members = set(metadata["workspace_members"])
    return [
        package for package in metadata["packages"] if package["id"] in members and package.get("publish") != []
    ]


def relative_directory(metadata, package):
    """The package's directory relative to the workspace root (`.` for the root package)."""
    root = metadata["workspace_root"].rstrip("/") + "/"
    directory = package["manifest_path"].rsplit("/", 1)[0] + "/"
    return directory[len(root) :].rstrip("/") or "."


def publish_order(metadata):
    """The publishable crates, dependencies first; fails on a cycle, which crates.io cannot take in any order."""
    crates = publishable(metadata)
    names = {package["name"] for package in crates}
    waiting = {
        package["name"]: {
            dependency["name"]
            for dependency in package["dependencies"]
            if dependency["name"] in names and dependency["name"] != package["name"]
        }
        for package in crates
    }
    order = []
    while waiting:
        ready = [name for name, needs in waiting.items() if needs <= set(order)]
        if not ready:
            raise ValueError(f"the sibling dependencies of {', '.join(sorted(waiting))} form a cycle")
        for name in ready:
            order.append(name)
            del waiting[name]
    return order


def manifest_problems(package):
    """Everything the crate's manifest lacks for crates.io and docs.rs, as sentences naming the field."""
    name = package["name"]
    problems = []
    for field, reason in REQUIRED_FIELDS.items():
        if not package.get(field):
            problems.append(f"{name}: `{field.replace('_', '-')}` is missing ({reason})")
    repository = package.get("repository") or ""
    if any(host in repository for host in PLACEHOLDER_HOSTS):
        problems.append(
            f"{name}: `repository` is the placeholder {repository}; leave it out until the project has a public URL"
        )
    # `[package.metadata.docs.rs]` is nested tables: {"docs": {"rs": {...}}}.
    docs_rs = ((package.get("metadata") or {}).get("docs") or {}).get("rs") or {}
    features = set(package.get("features", {})) - {"default"}
    enabled = set(docs_rs.get("features", []))
    if features and not docs_rs.get("all-features") and not features <= enabled:
        missing = ", ".join(sorted(features - enabled))
        problems.append(f"{name}: docs.rs would build without the features {missing} (set all-features = true)")
    args = docs_rs.get("rustdoc-args", [])
    if not any(args[index : index + 2] == ["--cfg", "docsrs"] for index in range(len(args))):
        problems.append(f'{name}: docs.rs rustdoc-args lack "--cfg", "docsrs" (the feature badges need it)')
    return problems


def parse_version(text):
    """"1.88" or "1.88.0" as a comparable tuple of three numbers."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def dependency_floor(metadata, package_id):
    """The highest rust-version among the crates a build of `package_id` compiles, and the crate declaring it."""
    nodes = {node["id"]: node for node in metadata["resolve"]["nodes"]}
    packages = {package["id"]: package for package in metadata["packages"]}
    seen, stack = set(), [package_id]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        for dependency in nodes[current]["deps"]:
            # Dev-dependencies are not built for a user of the crate; a normal or build edge is.
            if any(kind["kind"] in (None, "build") for kind in dependency["dep_kinds"]):
                stack.append(dependency["pkg"])
    floors = [
        (parse_version(packages[other]["rust_version"]), f"{packages[other]['name']} {packages[other]['version']}")
        for other in seen - {package_id}
        if packages[other].get("rust_version")
    ]
    return max(floors, default=((0, 0, 0), "no dependency"))


def rust_version_problems(metadata):
    """Each publishable crate whose declared rust-version is missing or below what a dependency needs."""
    problems = []
    for package in publishable(metadata):
        floor, holder = dependency_floor(metadata, package["id"])
        declared = package.get("rust_version")
        if not declared:
            problems.append(f"{package['name']}: no rust-version declared (its dependencies need {fmt(floor)})")
        elif parse_version(declared) < floor:
            problems.append(
                f"{package['name']}: rust-version {declared} is below {fmt(floor)}, which {holder} declares"
            )
    return problems


def fmt(version):
    return ".".join(str(part) for part in version[:2]) if version[2] == 0 else ".".join(map(str, version))


def main(argv):
    if len(argv) != 2 or argv[1] not in ("publishable", "publish-order", "check-manifest", "rust-version"):
        print(__doc__, file=sys.stderr)
        return 2
    metadata = json.load(sys.stdin)
    command = argv[1]
    if command == "publishable":
        for package in publishable(metadata):
            print(package["name"], package["version"], relative_directory(metadata, package))
        return 0
    if command == "publish-order":
        try:
            print("\n".join(publish_order(metadata)))
        except ValueError as cycle:
            print(cycle, file=sys.stderr)
            return 1
        return 0
    if command == "check-manifest":
        problems = [problem for package in publishable(metadata) for problem in manifest_problems(package)]
    else:
        problems = rust_version_problems(metadata)
        if not problems:
            for package in publishable(metadata):
                print(package["name"], package["rust_version"])
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
