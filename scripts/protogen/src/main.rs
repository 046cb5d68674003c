//! Compiles kubelet protos with protox and writes tonic client and server code for each proto package into
//! `<out-dir>` (one `<package>.rs` file per package). The workspace's one proto generator, run by
//! `scripts/gen_protos.sh` for every crate with a `proto/generate.txt`.
//!
//! Usage: `kubelet-protogen <proto-root> <out-dir> <proto>...` with each proto relative to the root.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(proto_root), Some(out_dir)) = (args.next(), args.next()) else {
        return usage();
    };
    let protos: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if protos.is_empty() {
        return usage();
    }
    match generate(PathBuf::from(proto_root), PathBuf::from(out_dir), &protos) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ascend-deviceplugin-protogen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: ascend-deviceplugin-protogen <proto-root> <out-dir> <proto>...");
    ExitCode::from(2)
}

fn generate(proto_root: PathBuf, out_dir: PathBuf, protos: &[PathBuf]) -> Result<(), String> {
    let files: Vec<PathBuf> = protos.iter().map(|p| proto_root.join(p)).collect();
    let descriptors = protox::compile(&files, [&proto_root]).map_err(|e| format!("compiling {files:?}: {e:?}"))?;
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .out_dir(&out_dir)
        .compile_fds(descriptors)
        .map_err(|e| format!("generating code into {}: {e}", out_dir.display()))
}
