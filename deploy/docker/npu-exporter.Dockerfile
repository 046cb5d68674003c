# syntax=docker/dockerfile:1
# The npu-exporter image. Build from the repository root (the workspace is the build context):
#   docker build -f deploy/docker/npu-exporter.Dockerfile -t npu-exporter:0.1.0 .
# npu-exporter.Dockerfile.dockerignore keeps target/ and .git out of the context.

FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p ascend-programs --no-default-features --features exporter --bin npu-exporter \
    && install -D -m 0755 target/release/npu-exporter /out/npu-exporter

# Slim glibc runtime: the exporter dlopen()s the host's libdcmi.so (see ascend-device-plugin.Dockerfile).
FROM debian:bookworm-slim AS runtime
COPY --from=builder /out/npu-exporter /usr/local/bin/npu-exporter
# Unprivileged by default (65532 is the conventional "nonroot" id). Reading the chips needs only access to their
# device nodes (group HwHiAiUser on Huawei's driver: add it with --group-add); the Kubernetes DaemonSet overrides
# the user because the kubelet's PodResources socket is root-only
# (deploy/helm/ascend-npu/templates/exporter/daemonset.yaml).
USER 65532:65532
EXPOSE 8082
ENTRYPOINT ["/usr/local/bin/npu-exporter"]
