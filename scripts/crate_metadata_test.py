#!/usr/bin/env python3
"""Tests of crate_metadata.py on small hand-made `cargo metadata` documents. Run: python3 scripts/crate_metadata_test.py"""

import copy
import unittest

import crate_metadata


def package(name, **fields):
    complete = {
        "id": f"path+file:///w/{name}#0.1.0",
        "name": name,
        "version": "0.1.0",
        "publish": None,
        "description": "a crate",
        "license": "MIT OR Apache-2.0",
        "readme": "README.md",
        "keywords": ["npu"],
        "categories": ["hardware-support"],
        "documentation": f"https://docs.rs/{name}",
        "rust_version": "1.88",
        "repository": None,
        "features": {"default": [], "mock": ["dep:mockall"]},
        "metadata": {"docs": {"rs": {"all-features": True, "rustdoc-args": ["--cfg", "docsrs"]}}},
    }
    complete.update(fields)
    return complete


def registry(name, rust_version):
    return {"id": f"registry+https://r#{name}@1.0.0", "name": name, "version": "1.0.0", "rust_version": rust_version}


def node(package_id, *edges):
    return {"id": package_id, "deps": [{"pkg": pkg, "dep_kinds": [{"kind": kind}]} for pkg, kind in edges]}


def workspace(*packages, dependencies=()):
    members = [p for p in packages if p["id"].startswith("path+")]
    return {
        "packages": list(packages),
        "workspace_members": [p["id"] for p in members],
        "resolve": {"nodes": [node(p["id"], *[e for (owner, *e) in dependencies if owner == p["id"]]) for p in packages]},
    }


class Publishable(unittest.TestCase):
    def test_publish_false_and_foreign_packages_are_left_out(self):
        metadata = workspace(package("lib"), package("tools", publish=[]), registry("serde", "1.61"))
        self.assertEqual([p["name"] for p in crate_metadata.publishable(metadata)], ["lib"])

    def test_a_crate_limited_to_a_named_registry_is_still_published(self):
        metadata = workspace(package("lib", publish=["internal"]))
        self.assertEqual([p["name"] for p in crate_metadata.publishable(metadata)], ["lib"])


class PublishOrder(unittest.TestCase):
    @staticmethod
    def needs(*names, kind=None):
        return [{"name": name, "kind": kind} for name in names]

    def test_dependencies_come_first_dev_dependencies_included(self):
        metadata = workspace(
            package("dcmi", dependencies=self.needs("sys") + self.needs("sim", kind="dev")),
            package("sim", dependencies=self.needs("sys", "toml")),
            package("sys", dependencies=[]),
            package("plugin", dependencies=self.needs("dcmi") + self.needs("plugin", kind="dev")),
            package("tools", publish=[], dependencies=self.needs("plugin")),
        )
        self.assertEqual(crate_metadata.publish_order(metadata), ["sys", "sim", "dcmi", "plugin"])

    def test_a_cycle_is_named(self):
        metadata = workspace(
            package("a", dependencies=self.needs("b", kind="dev")), package("b", dependencies=self.needs("a"))
        )
        with self.assertRaisesRegex(ValueError, "a, b form a cycle"):
            crate_metadata.publish_order(metadata)

    def test_directories_are_relative_to_the_workspace_root(self):
        metadata = {"workspace_root": "/w"}
        self.assertEqual(crate_metadata.relative_directory(metadata, {"manifest_path": "/w/lib/Cargo.toml"}), "lib")
        self.assertEqual(crate_metadata.relative_directory(metadata, {"manifest_path": "/w/Cargo.toml"}), ".")


class Manifest(unittest.TestCase):
    def test_a_complete_manifest_passes(self):
        self.assertEqual(crate_metadata.manifest_problems(package("lib")), [])

    def test_each_missing_field_is_named(self):
        for field in crate_metadata.REQUIRED_FIELDS:
            incomplete = package("lib", **{field: None})
            problems = crate_metadata.manifest_problems(incomplete)
            self.assertEqual(len(problems), 1, problems)
            self.assertIn(field.replace("_", "-"), problems[0])

    def test_the_placeholder_repository_is_refused(self):
        problems = crate_metadata.manifest_problems(package("lib", repository="https://example.invalid/ascend-rs"))
        self.assertIn("placeholder", problems[0])

    def test_docs_rs_must_build_every_feature_with_docsrs(self):
        listed = package("lib", metadata={"docs": {"rs": {"features": ["mock"], "rustdoc-args": ["--cfg", "docsrs"]}}})
        self.assertEqual(crate_metadata.manifest_problems(listed), [])
        partial = copy.deepcopy(listed)
        partial["features"]["serde"] = ["dep:serde"]
        self.assertIn("serde", crate_metadata.manifest_problems(partial)[0])
        without_cfg = package("lib", metadata={"docs": {"rs": {"all-features": True}}})
        self.assertIn("docsrs", crate_metadata.manifest_problems(without_cfg)[0])


class RustVersion(unittest.TestCase):
    def setUp(self):
        self.lib = package("lib", rust_version="1.88")
        self.loader = registry("libloading", "1.88.0")
        self.bench = registry("criterion", "1.91")
        self.deep = registry("hashbrown", "1.85")

    def metadata(self, lib):
        return workspace(
            lib,
            self.loader,
            self.bench,
            self.deep,
            dependencies=[
                (lib["id"], self.loader["id"], None),
                (lib["id"], self.bench["id"], "dev"),
                (self.loader["id"], self.deep["id"], None),
            ],
        )

    def test_dev_dependencies_do_not_raise_the_floor(self):
        self.assertEqual(crate_metadata.dependency_floor(self.metadata(self.lib), self.lib["id"]),
                         ((1, 88, 0), "libloading 1.0.0"))
        self.assertEqual(crate_metadata.rust_version_problems(self.metadata(self.lib)), [])

    def test_a_version_below_a_dependency_is_named(self):
        low = package("lib", rust_version="1.85")
        problems = crate_metadata.rust_version_problems(self.metadata(low))
        self.assertEqual(problems, ["lib: rust-version 1.85 is below 1.88, which libloading 1.0.0 declares"])

    def test_transitive_dependencies_count(self):
        self.deep["rust_version"] = "1.90"
        problems = crate_metadata.rust_version_problems(self.metadata(self.lib))
        self.assertIn("hashbrown", problems[0])

    def test_a_missing_rust_version_is_named(self):
        problems = crate_metadata.rust_version_problems(self.metadata(package("lib", rust_version=None)))
        self.assertIn("no rust-version", problems[0])


if __name__ == "__main__":
    unittest.main()
