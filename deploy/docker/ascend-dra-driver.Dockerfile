# syntax=docker/dockerfile:1
# The ascend-dra-driver image. Build from the repository root (the workspace is the build context):
#   docker build -f deploy/docker/ascend-dra-driver.Dockerfile -t ascend-dra-driver:0.1.0 .
# ascend-dra-driver.Dockerfile.dockerignore keeps target/ and .git out of the context.

# Build stage: the toolchain and Debian release of the other images, for the same glibc reasons.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
# Generated gRPC and DCMI bindings are committed, so the build needs neither protoc nor libclang. The one feature
# builds the driver alone, without the simulator.
# ascend-ctk-hook is relinked statically (glibc, position-dependent): it loads no library, and a static start skips
# the dynamic loader on every container start in hook mode (programs/build.rs has the figures).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p ascend-programs --no-default-features --features dra-driver,doctor,ctk \
        --bin ascend-dra-driver --bin ascend-doctor --bin ascend-ctk \
    && install -D -m 0755 target/release/ascend-dra-driver /out/ascend-dra-driver \
    && install -D -m 0755 target/release/ascend-doctor /out/ascend-doctor \
    && cargo rustc --release --locked -p ascend-programs --no-default-features --features dra-driver,doctor,ctk \
        --bin ascend-ctk-hook -- -C target-feature=+crt-static -C relocation-model=static \
    && install -D -m 0755 target/release/ascend-ctk /out/ascend-ctk \
    && install -D -m 0755 target/release/ascend-ctk-hook /out/ascend-ctk-hook

# Runtime stage: slim glibc, because the driver dlopen()s the host's libdcmi.so.
FROM debian:bookworm-slim AS runtime
COPY --from=builder /out/ascend-dra-driver /usr/local/bin/ascend-dra-driver
# `kubectl ascend doctor NODE` runs it here through the exec subresource (the driver's view of the host).
COPY --from=builder /out/ascend-doctor /usr/local/bin/ascend-doctor
# The node setup init step (ascend-ctk node-setup) installs it on the host, with the hook's own binary beside it.
COPY --from=builder /out/ascend-ctk /usr/local/bin/ascend-ctk
COPY --from=builder /out/ascend-ctk-hook /usr/local/bin/ascend-ctk-hook
# Root, deliberately: the driver serves sockets in the kubelet's root-owned plugin directories, writes CDI specs to
# /var/run/cdi and opens the chips' device nodes via libdcmi.
USER 0:0
EXPOSE 11253
ENTRYPOINT ["/usr/local/bin/ascend-dra-driver"]
