//! Link settings of the bundled binaries.
//!
//! `ascend-ctk` is on the start path of every container on a node that uses the `ascend-runtime` link or the
//! createRuntime hook, so its own start-up is part of every container start (issue 33). It is linked as a
//! position-dependent executable: a PIE of this size carries 14,340 relative relocations into 275 KB of
//! `.data.rel.ro`, which the dynamic loader writes on every start, one copy-on-write page fault per page. Measured on
//! the runtime's own phase (runtime mode with `/bin/true` in runc's place, hyperfine, 300 runs): 2.5 ms and 238 page
//! faults as a PIE, 2.2 ms and 172 as a position-dependent executable (`/usr/bin/env /bin/true`: 1.2 ms, 123).
//! `-z pack-relative-relocs` (RELR) kept the PIE and saved 0.1 ms of `ascend-ctk --version`'s 1.2 ms. What a PIE
//! adds is the randomised address of the executable's own code; the libraries, stack, heap and mappings stay
//! randomised. Debian 12's own `runc` and `podman`, on the same start path, are position-dependent executables too
//! (`readelf -h`: `EXEC`).
//! The daemons keep the toolchain's default (PIE): they start once.
//!
//! `ascend-ctk-hook`, which runc starts on every container start in hook mode, is position-dependent too. It loads
//! no library, so the release builds (deploy/docker, benches/run.sh) relink it statically after the build:
//! `cargo rustc --release -p ascend-programs --bin ascend-ctk-hook -- -C target-feature=+crt-static -C
//! relocation-model=static` (cargo cannot choose `crt-static` for one binary; this relinks only that one). Measured
//! alone (the container state on stdin, the five default driver mounts, 400 runs of each, alternating; medians):
//! `/bin/true` 0.87 ms, `ascend-ctk hook` 1.39 ms, `ascend-ctk-hook` dynamic 1.34 ms, static 0.99 ms. In the dynamic
//! build the loader (`ld.so`, and `libgcc_s` with its CPU-feature constructor) took about half of the hook process's
//! CPU samples (`perf record`).

//!
//! Both are linked against the unwinder of `libgcc_eh.a` instead of `libgcc_s.so.1` (glibc targets): rustc asks for
//! `-lgcc_s`, and a linker script of that name in a directory searched first (`$OUT_DIR/static-unwinder`) answers
//! with `libgcc_eh.a`. Loading `libgcc_s.so.1` cost every start its mapping, its symbol bindings and its constructor
//! `__cpu_indicator_init`, whose `cpuid` instructions trap to the hypervisor on virtual machines. Measured on the
//! runtime's own phase in hook mode (`/bin/true` as runc, the chip cache warm; 1500 runs of each, alternating, the
//! median of the differences to `env /bin/true` started in the same turn): 0.50 ms above it with `libgcc_s.so.1`,
//! 0.35 ms without. Unwinding (panics, backtraces) works the same; a `libdcmi.so` that needs `libgcc_s.so.1` still
//! loads it when DCMI is asked.

use std::path::PathBuf;

/// The binaries on the path of every container start.
const START_PATH_BINARIES: [&str; 2] = ["ascend-ctk", "ascend-ctk-hook"];

fn main() {
    // Only for glibc/musl Linux targets, where gcc or clang drive the link and know -no-pie.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        for binary in START_PATH_BINARIES {
            println!("cargo:rustc-link-arg-bin={binary}=-no-pie");
        }
        if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu") {
            match static_unwinder() {
                Ok(directory) => {
                    for binary in START_PATH_BINARIES {
                        println!("cargo:rustc-link-arg-bin={binary}=-L{}", directory.display());
                    }
                }
                Err(error) => println!("cargo:warning=linking libgcc_s.so.1 dynamically: {error}"),
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// A directory holding `libgcc_s.so`, a linker script that stands for the static unwinder `libgcc_eh.a`.
fn static_unwinder() -> std::io::Result<PathBuf> {
    let out = std::env::var_os("OUT_DIR").ok_or_else(|| std::io::Error::other("OUT_DIR is not set"))?;
    let directory = PathBuf::from(out).join("static-unwinder");
    std::fs::create_dir_all(&directory)?;
    let script = "/* programs/build.rs: the unwinder from libgcc_eh.a instead of libgcc_s.so.1 */\nINPUT(-lgcc_eh)\n";
    std::fs::write(directory.join("libgcc_s.so"), script)?;
    Ok(directory)
}
