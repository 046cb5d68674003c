//! Compiles the kubelet protos under `<proto-root>` with protox and writes tonic client and server code for
//! each proto package into `<out-dir>` (one `<package>.rs` file per package).
//!
//! Usage: `ascend-deviceplugin-protogen <proto-root> <out-dir>`; run it through `gen_protos.sh`.

use std::path::PathBuf;
use std::process::ExitCode;

/// The protos we generate, relative to the proto root.
const PROTOS: [&str; 2] = ["deviceplugin/v1beta1/api.proto", "podresources/v1/api.proto"];

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(proto_root), Some(out_dir), None) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: ascend-deviceplugin-protogen <proto-root> <out-dir>");
        return ExitCode::from(2);
    };
    match generate(PathBuf::from(proto_root), PathBuf::from(out_dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ascend-deviceplugin-protogen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn generate(proto_root: PathBuf, out_dir: PathBuf) -> Result<(), String> {
    let files: Vec<PathBuf> = PROTOS.iter().map(|p| proto_root.join(p)).collect();
    let descriptors = protox::compile(&files, [&proto_root]).map_err(|e| format!("compiling {files:?}: {e:?}"))?;
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .out_dir(&out_dir)
        .compile_fds(descriptors)
        .map_err(|e| format!("generating code into {}: {e}", out_dir.display()))
}
