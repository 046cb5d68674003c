//! Every program that loads the driver spells its flags the same way (`ascend_node::DriverArgs`, flattened into each
//! command line): its `--help` shows `--dcmi-library` and `--skip-library-ownership-check`, and no program declares a
//! spelling of its own.

use std::process::Command;

/// The programs that load `libdcmi.so`, with the arguments that reach their top-level help.
const PROGRAMS: [(&str, &str); 5] = [
    ("ascend-device-plugin", env!("CARGO_BIN_EXE_ascend-device-plugin")),
    ("ascend-dra-driver", env!("CARGO_BIN_EXE_ascend-dra-driver")),
    ("npu-exporter", env!("CARGO_BIN_EXE_npu-exporter")),
    ("ascend-node-labeller", env!("CARGO_BIN_EXE_ascend-node-labeller")),
    ("ascend-smi", env!("CARGO_BIN_EXE_ascend-smi")),
];

#[test]
fn every_program_that_loads_the_driver_spells_its_flags_the_same_way() {
    for (name, path) in PROGRAMS {
        let output = Command::new(path).arg("--help").output().unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(output.status.success(), "{name} --help failed: {}", String::from_utf8_lossy(&output.stderr));
        let help = String::from_utf8_lossy(&output.stdout);
        let flags: Vec<&str> = help
            .split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '[' || c == '<')
            .filter(|word| word.starts_with("--") && word.contains("librar"))
            .collect();
        assert!(flags.contains(&"--dcmi-library"), "{name}: no --dcmi-library in\n{help}");
        assert!(
            flags.contains(&"--skip-library-ownership-check"),
            "{name}: no --skip-library-ownership-check in\n{help}"
        );
        let others: Vec<&&str> =
            flags.iter().filter(|flag| !["--dcmi-library", "--skip-library-ownership-check"].contains(flag)).collect();
        assert!(others.is_empty(), "{name}: a driver flag spelled its own way: {others:?}");
    }
}

#[test]
fn the_earlier_spellings_still_work() {
    // The exporter's Prometheus-style spellings and ascend-smi's `--library` are aliases of the same flags: each must
    // reach the loader, which then names the missing file.
    let cases = [
        ("npu-exporter", env!("CARGO_BIN_EXE_npu-exporter"), vec!["--dcmi.library=/nonexistent/libdcmi.so"]),
        ("ascend-smi", env!("CARGO_BIN_EXE_ascend-smi"), vec!["--library", "/nonexistent/libdcmi.so", "info"]),
    ];
    for (name, path, args) in cases {
        let output = Command::new(path)
            .args(&args)
            .env_remove("ASCEND_DCMI_LIBRARY")
            .output()
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(!output.status.success(), "{name} {args:?} succeeded without a driver");
        assert!(said.contains("/nonexistent/libdcmi.so"), "{name} {args:?} did not name the library:\n{said}");
    }
}
