#!/usr/bin/env python3
"""Tests of check_dockerfiles.py: a good Dockerfile passes, and each kind of mistake is reported with its line.
Run: python3 scripts/check_dockerfiles_test.py
"""

from __future__ import annotations

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_dockerfiles as cd  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

WORKSPACE = cd.Workspace({"ascend-programs": {"ascend-device-plugin", "npu-exporter"}, "ascend-dcmi": set()})

GOOD = """\
# syntax=docker/dockerfile:1
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p ascend-programs --bin npu-exporter \\
    && install -D target/release/npu-exporter /out/npu-exporter

FROM debian:bookworm-slim
COPY --from=builder /out/npu-exporter /usr/local/bin/npu-exporter
USER 65532:65532
EXPOSE 8082
ENTRYPOINT ["/usr/local/bin/npu-exporter"]
"""

MANIFEST = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: x}
spec:
  template:
    spec:
      containers:
        - name: x
          image: npu-exporter:0.1.0
          ports: [{containerPort: 8082}]
"""


class CheckDockerfilesTest(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.root = Path(directory.name)
        (self.root / "manifests").mkdir()
        (self.root / "manifests" / "ds.yaml").write_text(MANIFEST)

    def problems(self, text: str, ignore: str | None = "target/\n") -> list[str]:
        path = self.root / "npu-exporter.Dockerfile"
        path.write_text(text)
        ignore_path = self.root / "npu-exporter.Dockerfile.dockerignore"
        if ignore is None:
            ignore_path.unlink(missing_ok=True)
        else:
            ignore_path.write_text(ignore)
        return cd.check_dockerfile(path, WORKSPACE, self.root / "manifests")

    def assertProblem(self, text: str, fragment: str, **kwargs: str | None) -> None:
        problems = self.problems(text, **kwargs)
        self.assertTrue(any(fragment in p for p in problems), f"{fragment!r} not in {problems}")

    def test_good_dockerfile_passes(self) -> None:
        self.assertEqual(self.problems(GOOD), [])

    def test_copy_from_an_unknown_or_later_stage(self) -> None:
        self.assertProblem(GOOD.replace("--from=builder", "--from=build"), "line 9: COPY --from=build names no earlier")

    def test_copy_of_a_path_the_stage_does_not_produce(self) -> None:
        self.assertProblem(GOOD.replace("--from=builder /out/npu-exporter", "--from=builder /out/other"),
                           "no RUN/COPY of stage 'builder' mentions /out/other")

    def test_binary_the_workspace_does_not_build(self) -> None:
        self.assertProblem(GOOD.replace("--bin npu-exporter", "--bin npu-exporterd"),
                           "binary 'npu-exporterd' is not built by package ascend-programs")

    def test_unknown_package_and_missing_locked(self) -> None:
        text = GOOD.replace("-p ascend-programs", "-p ascend-tool").replace("--locked ", "")
        self.assertProblem(text, "package 'ascend-tool' is not a workspace member")
        self.assertProblem(text, "without --locked")

    def test_unpinned_base_image(self) -> None:
        self.assertProblem(GOOD.replace("debian:bookworm-slim", "debian"), "base image 'debian' is not pinned")
        self.assertProblem(GOOD.replace("debian:bookworm-slim", "debian:latest"), "is not pinned")

    def test_root_user_needs_a_reason(self) -> None:
        self.assertProblem(GOOD.replace("USER 65532:65532", "USER root"), "runs as root; explain why")
        explained = GOOD.replace("USER 65532:65532", "# Root because the socket directory is root-only.\nUSER 0")
        self.assertEqual(self.problems(explained), [])

    def test_missing_user_and_shell_form_entrypoint(self) -> None:
        self.assertProblem(GOOD.replace("USER 65532:65532\n", ""), "sets no USER")
        self.assertProblem(GOOD.replace('["/usr/local/bin/npu-exporter"]', "/usr/local/bin/npu-exporter"),
                           "exec form")

    def test_entrypoint_must_be_copied_into_the_final_stage(self) -> None:
        self.assertProblem(GOOD.replace('["/usr/local/bin/npu-exporter"]', '["/bin/npu-exporter"]'),
                           "ENTRYPOINT runs /bin/npu-exporter, which no COPY")

    def test_dockerignore_must_exist_and_exclude_target(self) -> None:
        self.assertProblem(GOOD, "no npu-exporter.Dockerfile.dockerignore", ignore=None)
        self.assertProblem(GOOD, "does not exclude target/", ignore=".git/\n")

    def test_exposed_port_matches_the_manifest(self) -> None:
        self.assertProblem(GOOD.replace("EXPOSE 8082", "EXPOSE 9400"), "EXPOSE [9400] differs from the containerPorts")

    def test_repository_dockerfiles_pass_against_the_real_workspace(self) -> None:
        workspace = cd.load_workspace(None)
        for dockerfile in sorted((REPO / "deploy" / "docker").glob("*.Dockerfile")):
            with self.subTest(dockerfile=dockerfile.name):
                problems = cd.check_dockerfile(dockerfile, workspace, REPO / "deploy" / "kubernetes")
                self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
