# syntax=docker/dockerfile:1
# The ascend-device-plugin image. Build from the repository root (the workspace is the build context):
#   docker build -f deploy/docker/ascend-device-plugin.Dockerfile -t ascend-device-plugin:0.1.0 .
# ascend-device-plugin.Dockerfile.dockerignore keeps target/ and .git out of the context.

# Build stage: Rust 1.95, the toolchain the workspace is built and tested with; Debian 12, as the runtime stage, so
# the binary needs no newer glibc than the runtime has.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
# Generated gRPC and DCMI bindings are committed, so the build needs neither protoc nor libclang.
# ascend-ctk-hook is relinked statically (glibc, position-dependent): it loads no library, and a static start skips
# the dynamic loader on every container start in hook mode (programs/build.rs has the figures).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p ascend-programs --no-default-features \
        --features device-plugin,node-labeller,doctor,ctk \
        --bin ascend-device-plugin --bin ascend-node-labeller --bin ascend-doctor --bin ascend-ctk \
    && install -D -m 0755 target/release/ascend-device-plugin /out/ascend-device-plugin \
    && install -D -m 0755 target/release/ascend-node-labeller /out/ascend-node-labeller \
    && install -D -m 0755 target/release/ascend-doctor /out/ascend-doctor \
    && cargo rustc --release --locked -p ascend-programs --no-default-features --features device-plugin,node-labeller,doctor,ctk \
        --bin ascend-ctk-hook -- -C target-feature=+crt-static -C relocation-model=static \
    && install -D -m 0755 target/release/ascend-ctk /out/ascend-ctk \
    && install -D -m 0755 target/release/ascend-ctk-hook /out/ascend-ctk-hook

# Runtime stage: slim glibc, not static musl: the daemon dlopen()s the host's libdcmi.so, a glibc shared library,
# which a static binary cannot load. The driver's libraries come from the host mounts; bookworm-slim also carries
# libstdc++ for vendor libraries that link it.
FROM debian:bookworm-slim AS runtime
COPY --from=builder /out/ascend-device-plugin /usr/local/bin/ascend-device-plugin
# The node labeller runs as a sidecar from the same image
# (deploy/helm/ascend-npu/templates/device-plugin/daemonset.yaml).
COPY --from=builder /out/ascend-node-labeller /usr/local/bin/ascend-node-labeller
# `kubectl ascend doctor NODE` runs it here through the exec subresource: this container sees the host's driver,
# device nodes and kubelet sockets, which is what the doctor checks.
COPY --from=builder /out/ascend-doctor /usr/local/bin/ascend-doctor
# The node setup init step (ascend-ctk node-setup) installs it on the host, with the hook's own binary beside it.
COPY --from=builder /out/ascend-ctk /usr/local/bin/ascend-ctk
COPY --from=builder /out/ascend-ctk-hook /usr/local/bin/ascend-ctk-hook
# Root, deliberately: the plugin creates its socket in the kubelet's /var/lib/kubelet/device-plugins and connects to
# kubelet.sock there, both root-owned and closed to other users, and it opens the chips' device nodes via libdcmi.
USER 0:0
EXPOSE 11251
ENTRYPOINT ["/usr/local/bin/ascend-device-plugin"]
