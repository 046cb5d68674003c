#!/usr/bin/env python3
"""Renders a kustomization directory the way `kubectl kustomize` does, for the subset of kustomize that deploy/ uses.

It needs only Python and PyYAML, so the manifests can be rendered where no kubectl is installed; the tests
(kustomize_render_test.py) and scripts/checks/deploy.sh check its output against `kubectl kustomize`. It implements:

- `resources`: YAML files (several documents each) and directories holding a kustomization, recursively;
- `namespace`: sets metadata.namespace on namespaced kinds and renames a Namespace object, as kustomize does;
- `labels` (pairs, includeSelectors, includeTemplates) and the older `commonLabels`;
- `images`: name, newName, newTag, digest;
- `patches` whose patch (inline or `path`) is a strategic-merge patch naming its resource by apiVersion, kind and
  metadata.name; list fields merge by their Kubernetes merge key (containers and env by `name`, volumeMounts by
  `mountPath`, ...) or are replaced (args, command, tolerations, ...); `$patch: delete|replace` and null deletions.

Anything else (generators, name prefixes, JSON 6902 patches, patch targets, remote resources, unknown list fields
in a patch, RBAC subjects under a namespace change) is rejected with an error naming the file and the field, so a
manifest never silently renders differently from what kustomize would produce.

Transformers run in kustomize's order (patches, namespace, labels, images) on each kustomization after its
resources are built, and the output is sorted in kustomize's default "legacy" kind order.

Usage: kustomize_render.py DIR [--output FILE]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any, Iterable

import yaml

KUSTOMIZATION_FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KUSTOMIZATION_API_VERSIONS = ("kustomize.config.k8s.io/v1beta1",)
SUPPORTED_FIELDS = ("apiVersion", "kind", "resources", "namespace", "labels", "commonLabels", "images", "patches")

# Kinds whose objects live outside namespaces. A kind in neither set is an error: guessing wrong would either drop
# a namespace kustomize sets or add one the API server rejects.
CLUSTER_SCOPED_KINDS = frozenset({
    "APIService", "CSIDriver", "CSINode", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
    "DeviceClass", "IngressClass", "MutatingWebhookConfiguration", "Namespace", "Node", "PersistentVolume",
    "PriorityClass", "RuntimeClass", "StorageClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration", "VolumeAttachment",
})
NAMESPACED_KINDS = frozenset({
    "ConfigMap", "CronJob", "DaemonSet", "Deployment", "EndpointSlice", "Endpoints", "HorizontalPodAutoscaler",
    "Ingress", "Job", "Lease", "LimitRange", "NetworkPolicy", "PersistentVolumeClaim", "Pod", "PodDisruptionBudget",
    "PodMonitor", "PrometheusRule", "ReplicaSet", "ResourceQuota", "Role", "RoleBinding", "Secret", "Service",
    "ServiceAccount", "ServiceMonitor", "StatefulSet",
})

# kustomize's default ("legacy") output order: these kinds first, in this order; the webhook kinds last.
LEGACY_ORDER_FIRST = (
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount", "PodSecurityPolicy",
    "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service",
    "LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment", "StatefulSet",
    "CronJob", "PodDisruptionBudget",
)
LEGACY_ORDER_LAST = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")

# Where kustomize's label transformer writes, as (kinds or None for every kind, path, create missing maps).
# Metadata and pod-template labels: used by `commonLabels`, and by `labels` with includeTemplates.
METADATA_LABEL_PATHS = (
    (None, "metadata/labels", True),
    (("ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"),
     "spec/template/metadata/labels", True),
    (("CronJob",), "spec/jobTemplate/metadata/labels", True),
    (("CronJob",), "spec/jobTemplate/spec/template/metadata/labels", True),
)
# Selectors: used by `commonLabels`, and by `labels` with includeSelectors.
SELECTOR_LABEL_PATHS = (
    (("Service", "ReplicationController"), "spec/selector", True),
    (("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"), "spec/selector/matchLabels", True),
    (("Job", "PodDisruptionBudget"), "spec/selector/matchLabels", False),
    (("CronJob",), "spec/jobTemplate/spec/selector/matchLabels", False),
    (("NetworkPolicy",), "spec/podSelector/matchLabels", False),
)
# Selector fields kustomize also rewrites that this renderer does not: their presence under includeSelectors is an
# error rather than a silent difference.
UNSUPPORTED_SELECTOR_FIELDS = ("affinity", "topologySpreadConstraints")

# Strategic-merge list handling. A list field merges element-wise by its merge key, or is replaced whole; the key
# is looked up by field name, with the parent kind for the names whose key depends on the object (`ports`).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "imagePullSecrets": "name",
    "hostAliases": "ip", "topologySpreadConstraints": "topologyKey", "resourceClaims": "name",
}
SERVICE_PORTS_MERGE_KEY = "port"
CONTAINER_PORTS_MERGE_KEY = "containerPort"
REPLACED_LISTS = frozenset({
    "args", "command", "tolerations", "envFrom", "add", "drop", "supplementalGroups", "nodeSelectorTerms",
    "matchExpressions", "values", "searches", "nameservers", "options", "items", "accessModes", "rules", "subjects",
    "verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs", "ipFamilies",
})
PATCH_DIRECTIVE = "$patch"


class RenderError(Exception):
    """A kustomization this renderer cannot build, or would build differently from kustomize."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a directory holding kustomization.yaml")
    parser.add_argument("--output", "-o", type=Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        text = dump(render(args.directory))
    except RenderError as error:
        print(f"kustomize_render: {error}", file=sys.stderr)
        return 1
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def render(directory: Path) -> list[dict]:
    """Builds the kustomization in `directory` and returns its resources in kustomize's output order."""
    resources = build(directory.resolve(), ())
    return sorted(resources, key=legacy_sort_key)


def dump(resources: Iterable[dict]) -> str:
    """The resources as one YAML stream, documents separated by `---`."""
    return yaml.safe_dump_all(list(resources), sort_keys=False, default_flow_style=False, explicit_start=True)


def build(directory: Path, parents: tuple[Path, ...]) -> list[dict]:
    """Builds one kustomization: its resources (recursively), then its transformers."""
    if directory in parents:
        chain = " -> ".join(str(p) for p in (*parents, directory))
        raise RenderError(f"kustomizations include each other in a cycle: {chain}")
    kustomization_path = find_kustomization(directory)
    kustomization = load_kustomization(kustomization_path)
    where = str(kustomization_path)

    resources: list[dict] = []
    for entry in as_list(kustomization.get("resources", []), where, "resources"):
        resources.extend(load_resource_entry(directory, entry, where, (*parents, directory)))
    check_unique_ids(resources, where)

    for index, patch in enumerate(as_list(kustomization.get("patches", []), where, "patches")):
        apply_patch(resources, directory, patch, f"{where}: patches[{index}]")
    if "namespace" in kustomization:
        set_namespace(resources, kustomization["namespace"], where)
    for labels, selectors, templates in label_sets(kustomization, where):
        apply_labels(resources, labels, selectors, templates, where)
    for index, image in enumerate(as_list(kustomization.get("images", []), where, "images")):
        apply_image(resources, image, f"{where}: images[{index}]")
    check_unique_ids(resources, where)
    return resources


def find_kustomization(directory: Path) -> Path:
    if not directory.is_dir():
        raise RenderError(f"{directory}: not a directory")
    found = [directory / name for name in KUSTOMIZATION_FILE_NAMES if (directory / name).is_file()]
    if not found:
        raise RenderError(f"{directory}: no kustomization file (looked for {', '.join(KUSTOMIZATION_FILE_NAMES)})")
    if len(found) > 1:
        raise RenderError(f"{directory}: more than one kustomization file: {', '.join(p.name for p in found)}")
    return found[0]


def load_kustomization(path: Path) -> dict:
    documents = load_yaml_documents(path)
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise RenderError(f"{path}: a kustomization must be exactly one YAML mapping")
    kustomization = documents[0]
    unsupported = [key for key in kustomization if key not in SUPPORTED_FIELDS]
    if unsupported:
        raise RenderError(
            f"{path}: field(s) {', '.join(map(repr, unsupported))} not implemented by this renderer "
            f"(supported: {', '.join(SUPPORTED_FIELDS)})")
    api_version = kustomization.get("apiVersion", KUSTOMIZATION_API_VERSIONS[0])
    if api_version not in KUSTOMIZATION_API_VERSIONS:
        raise RenderError(f"{path}: apiVersion {api_version!r} is not one of {', '.join(KUSTOMIZATION_API_VERSIONS)}")
    if kustomization.get("kind", "Kustomization") != "Kustomization":
        raise RenderError(f"{path}: kind {kustomization['kind']!r} is not implemented (only Kustomization)")
    return kustomization


def load_yaml_documents(path: Path) -> list[Any]:
    try:
        text = path.read_text()
    except OSError as error:
        raise RenderError(f"{path}: cannot read: {error.strerror}") from error
    try:
        return [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as error:
        raise RenderError(f"{path}: invalid YAML: {error}") from error


def load_resource_entry(directory: Path, entry: Any, where: str, parents: tuple[Path, ...]) -> list[dict]:
    if not isinstance(entry, str) or not entry:
        raise RenderError(f"{where}: resources entry {entry!r} is not a path")
    if "://" in entry or entry.startswith(("github.com/", "git@")):
        raise RenderError(f"{where}: remote resource {entry!r} is not implemented (only local files and directories)")
    path = (directory / entry).resolve()
    if path.is_dir():
        return build(path, parents)
    if not path.is_file():
        raise RenderError(f"{where}: resource {entry!r} does not exist ({path})")
    documents = load_yaml_documents(path)
    for document in documents:
        check_resource(document, str(path))
    return documents


def check_resource(document: Any, where: str) -> None:
    if not isinstance(document, dict):
        raise RenderError(f"{where}: a resource document is not a mapping")
    for field in ("apiVersion", "kind"):
        if not isinstance(document.get(field), str) or not document[field]:
            raise RenderError(f"{where}: a resource has no {field}")
    name = document.get("metadata", {}).get("name") if isinstance(document.get("metadata"), dict) else None
    if not isinstance(name, str) or not name:
        raise RenderError(f"{where}: a {document['kind']} has no metadata.name")
    if document["kind"] == "List" or document["kind"].endswith("List"):
        raise RenderError(f"{where}: {document['kind']} documents are not implemented; list the items as documents")


def resource_id(resource: dict) -> tuple[str, str, str, str]:
    group = resource["apiVersion"].rpartition("/")[0]
    metadata = resource["metadata"]
    return group, resource["kind"], metadata.get("namespace", ""), metadata["name"]


def describe(resource: dict) -> str:
    namespace = resource["metadata"].get("namespace")
    name = resource["metadata"]["name"]
    return f"{resource['kind']} {namespace + '/' if namespace else ''}{name}"


def check_unique_ids(resources: list[dict], where: str) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for resource in resources:
        rid = resource_id(resource)
        if rid in seen:
            raise RenderError(f"{where}: {describe(resource)} appears more than once")
        seen.add(rid)


def as_list(value: Any, where: str, field: str) -> list:
    if not isinstance(value, list):
        raise RenderError(f"{where}: {field} must be a list")
    return value


def as_mapping(value: Any, where: str, field: str) -> dict:
    if not isinstance(value, dict):
        raise RenderError(f"{where}: {field} must be a mapping")
    return value


# ---- patches ---------------------------------------------------------------------------------------------------

def apply_patch(resources: list[dict], directory: Path, entry: Any, where: str) -> None:
    entry = as_mapping(entry, where, "a patches entry")
    unsupported = [key for key in entry if key not in ("path", "patch")]
    if unsupported:
        raise RenderError(
            f"{where}: {', '.join(map(repr, unsupported))} not implemented (a patch names its resource "
            "by apiVersion, kind and metadata.name; patch targets and options are not supported)")
    if ("path" in entry) == ("patch" in entry):
        raise RenderError(f"{where}: give exactly one of 'path' and 'patch'")
    if "path" in entry:
        source = directory / entry["path"]
        documents = load_yaml_documents(source)
        where = f"{where} ({source})"
    else:
        try:
            documents = [doc for doc in yaml.safe_load_all(entry["patch"]) if doc is not None]
        except yaml.YAMLError as error:
            raise RenderError(f"{where}: inline patch is invalid YAML: {error}") from error
    if len(documents) != 1:
        raise RenderError(f"{where}: a patch must hold exactly one document, found {len(documents)}")
    patch = documents[0]
    if isinstance(patch, list):
        raise RenderError(f"{where}: JSON 6902 patches are not implemented; write a strategic-merge patch")
    if not isinstance(patch, dict):
        raise RenderError(f"{where}: a patch must be a mapping")
    check_resource(patch, where)
    if patch["kind"] not in NAMESPACED_KINDS | CLUSTER_SCOPED_KINDS:
        raise RenderError(f"{where}: patching kind {patch['kind']!r} is not implemented (kustomize merges its lists "
                          "by a schema this renderer does not have)")
    target = find_patch_target(resources, patch, where)
    merged = strategic_merge(target, patch, where, target["kind"], ())
    target.clear()
    target.update(merged)


def find_patch_target(resources: list[dict], patch: dict, where: str) -> dict:
    group, kind, namespace, name = resource_id(patch)
    matches = [
        r for r in resources
        if resource_id(r)[:2] == (group, kind) and r["metadata"]["name"] == name
        and (not namespace or r["metadata"].get("namespace", "") == namespace)
    ]
    if not matches:
        raise RenderError(f"{where}: no resource matches the patch's {patch['apiVersion']} {kind} {name}")
    if len(matches) > 1:
        raise RenderError(f"{where}: the patch's {kind} {name} matches several resources; give metadata.namespace")
    return matches[0]


def strategic_merge(original: Any, patch: Any, where: str, kind: str, path: tuple[str, ...]) -> Any:
    """Merges `patch` into a copy of `original` with Kubernetes strategic-merge semantics (for the known fields)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get(PATCH_DIRECTIVE)
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != PATCH_DIRECTIVE}
    if directive is not None:
        raise RenderError(f"{where}: {PATCH_DIRECTIVE}: {directive!r} at {dotted(path)} is not implemented here")
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            raise RenderError(f"{where}: directive {key!r} at {dotted(path)} is not implemented")
        child_path = (*path, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and value.get(PATCH_DIRECTIVE) == "delete":
            result.pop(key, None)
        elif isinstance(value, list):
            result[key] = merge_list(result.get(key), value, where, kind, child_path)
        else:
            result[key] = strategic_merge(result.get(key), value, where, kind, child_path)
    return result


def merge_list(original: Any, patch: list, where: str, kind: str, path: tuple[str, ...]) -> list:
    field = path[-1]
    merge_key = list_merge_key(kind, path)
    if merge_key is None:
        if field in REPLACED_LISTS:
            return copy.deepcopy(patch)
        raise RenderError(
            f"{where}: strategic merge of the list {dotted(path)} is not implemented (no merge key known for "
            f"{field!r}); patch a field this renderer knows or replace the enclosing object with $patch: replace")
    # kustomize merges with its "prepend" list direction: the patch's elements come first, in the patch's order,
    # then the original elements the patch does not name, in their order.
    remaining = copy.deepcopy(original) if isinstance(original, list) else []
    merged = []
    for element in patch:
        if not isinstance(element, dict) or merge_key not in element:
            raise RenderError(f"{where}: every element of {dotted(path)} in a patch needs its merge key {merge_key!r}")
        position = next((i for i, old in enumerate(remaining)
                         if isinstance(old, dict) and old.get(merge_key) == element[merge_key]), None)
        old = remaining.pop(position) if position is not None else {}
        if element.get(PATCH_DIRECTIVE) == "delete":
            continue
        element_path = (*path, f"[{merge_key}={element[merge_key]}]")
        merged.append(strategic_merge(old, element, where, kind, element_path))
    return merged + remaining


def list_merge_key(kind: str, path: tuple[str, ...]) -> str | None:
    field = path[-1]
    if field == "ports":
        return SERVICE_PORTS_MERGE_KEY if kind == "Service" and path == ("spec", "ports") else CONTAINER_PORTS_MERGE_KEY
    return MERGE_KEYS.get(field)


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "the top level"


# ---- namespace -------------------------------------------------------------------------------------------------

def set_namespace(resources: list[dict], namespace: Any, where: str) -> None:
    if not isinstance(namespace, str) or not namespace:
        raise RenderError(f"{where}: namespace must be a non-empty string")
    namespaces = [r for r in resources if r["kind"] == "Namespace"]
    if len(namespaces) > 1:
        raise RenderError(f"{where}: namespace {namespace!r} would rename {len(namespaces)} Namespace objects to one")
    for resource in resources:
        kind = resource["kind"]
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            check_subjects_unchanged(resource, where)
        if kind == "Namespace":
            resource["metadata"]["name"] = namespace
        elif kind in NAMESPACED_KINDS:
            resource["metadata"]["namespace"] = namespace
        elif kind not in CLUSTER_SCOPED_KINDS:
            raise RenderError(f"{where}: does not know whether kind {kind!r} is namespaced ({describe(resource)})")


def check_subjects_unchanged(binding: dict, where: str) -> None:
    """kustomize keeps User and Group subjects of a binding under a namespace change, but may move ServiceAccount
    subjects into the new namespace, depending on the ServiceAccounts it renders and the namespaces they were first
    written with; those are rejected rather than guessed."""
    for subject in binding.get("subjects") or []:
        if subject.get("kind") not in ("User", "Group"):
            raise RenderError(f"{where}: rewriting the subjects of {describe(binding)} under a namespace change is "
                              f"not implemented (subject kind {subject.get('kind')!r}; User and Group are kept)")


# ---- labels ----------------------------------------------------------------------------------------------------

def label_sets(kustomization: dict, where: str) -> list[tuple[dict, bool, bool]]:
    """(labels, includeSelectors, includeTemplates) for commonLabels and each `labels` entry, in that order."""
    sets = []
    if "commonLabels" in kustomization:
        sets.append((check_labels(kustomization["commonLabels"], where, "commonLabels"), True, True))
    for index, entry in enumerate(as_list(kustomization.get("labels", []), where, "labels")):
        field = f"labels[{index}]"
        entry = as_mapping(entry, where, field)
        unsupported = [key for key in entry if key not in ("pairs", "includeSelectors", "includeTemplates")]
        if unsupported:
            raise RenderError(f"{where}: {field}: {', '.join(map(repr, unsupported))} not implemented")
        selectors = entry.get("includeSelectors", False)
        templates = entry.get("includeTemplates", False)
        if not isinstance(selectors, bool) or not isinstance(templates, bool):
            raise RenderError(f"{where}: {field}: includeSelectors and includeTemplates must be booleans")
        # kustomize writes template labels whenever it writes selectors, so that selectors keep matching.
        sets.append((check_labels(entry.get("pairs", {}), where, f"{field}.pairs"), selectors, templates or selectors))
    return sets


def check_labels(labels: Any, where: str, field: str) -> dict:
    labels = as_mapping(labels, where, field)
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise RenderError(f"{where}: {field}: label {key!r}: {value!r} must be string: string (quote numbers)")
    return labels


def apply_labels(resources: list[dict], labels: dict, selectors: bool, templates: bool, where: str) -> None:
    if not labels:
        return
    for resource in resources:
        kind = resource["kind"]
        specs = [METADATA_LABEL_PATHS[0]]
        if templates:
            specs.extend(METADATA_LABEL_PATHS[1:])
        if selectors:
            specs.extend(SELECTOR_LABEL_PATHS)
            pod_spec = resource.get("spec", {}).get("template", {}).get("spec", {})
            found = [f for f in UNSUPPORTED_SELECTOR_FIELDS if isinstance(pod_spec, dict) and f in pod_spec]
            if found and kind in ("Deployment", "StatefulSet"):
                raise RenderError(f"{where}: selector labels in {', '.join(found)} of {describe(resource)} are not "
                                  "implemented; use labels without includeSelectors")
        for kinds, path, create in specs:
            if kinds is None or kind in kinds:
                merge_labels_at(resource, path.split("/"), labels, create, where)


def merge_labels_at(resource: dict, path: list[str], labels: dict, create: bool, where: str) -> None:
    node = resource
    for step in path:
        child = node.get(step)
        if child is None:
            if not create:
                return
            child = node[step] = {}
        if not isinstance(child, dict):
            raise RenderError(f"{where}: {describe(resource)}: {'.'.join(path)} is not a mapping")
        node = child
    node.update(labels)


# ---- images ----------------------------------------------------------------------------------------------------

def apply_image(resources: list[dict], entry: Any, where: str) -> None:
    entry = as_mapping(entry, where, "an images entry")
    unsupported = [key for key in entry if key not in ("name", "newName", "newTag", "digest")]
    if unsupported:
        raise RenderError(f"{where}: {', '.join(map(repr, unsupported))} not implemented")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise RenderError(f"{where}: name is required")
    if "newTag" in entry and "digest" in entry:
        raise RenderError(f"{where}: give newTag or digest, not both")
    for resource in resources:
        for pod_spec in pod_specs(resource):
            for field in ("containers", "initContainers"):
                for container in pod_spec.get(field) or []:
                    if isinstance(container, dict) and isinstance(container.get("image"), str):
                        container["image"] = retag(container["image"], entry)


def pod_specs(resource: dict) -> list[dict]:
    spec = resource.get("spec")
    if not isinstance(spec, dict):
        return []
    found = [spec] if resource["kind"] == "Pod" else []
    template_spec = spec.get("template", {}).get("spec") if isinstance(spec.get("template"), dict) else None
    if isinstance(template_spec, dict):
        found.append(template_spec)
    return found


def split_image(image: str) -> tuple[str, str | None, str | None]:
    """(name, tag, digest) of an image reference; a registry port is part of the name, not a tag."""
    name, _, digest = image.partition("@")
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    tag = None
    if colon > last_slash:
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, digest or None


def retag(image: str, entry: dict) -> str:
    name, tag, digest = split_image(image)
    if name != entry["name"]:
        return image
    name = entry.get("newName", name)
    if "digest" in entry:
        return f"{name}@{entry['digest']}"
    if "newTag" in entry:
        return f"{name}:{entry['newTag']}"
    if digest:
        return f"{name}@{digest}"
    return f"{name}:{tag}" if tag else name


# ---- output order ----------------------------------------------------------------------------------------------

def legacy_sort_key(resource: dict) -> tuple:
    kind = resource["kind"]
    if kind in LEGACY_ORDER_FIRST:
        rank = LEGACY_ORDER_FIRST.index(kind) - len(LEGACY_ORDER_FIRST)
    elif kind in LEGACY_ORDER_LAST:
        rank = 1 + LEGACY_ORDER_LAST.index(kind)
    else:
        rank = 0
    group, _, namespace, name = resource_id(resource)
    return rank, group, resource["apiVersion"], kind, namespace, name


if __name__ == "__main__":
    sys.exit(main())
