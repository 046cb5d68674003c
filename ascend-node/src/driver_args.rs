//! The driver flags, declared once: every program that loads the driver flattens [`DriverArgs`] into its command
//! line, so `--help` spells them the same way everywhere.

use std::path::PathBuf;

use crate::driver::DriverOptions;

/// Where `libdcmi.so` is and whether to check who owns it.
///
/// `--dcmi.library` and `--dcmi.skip-ownership-check` (the exporter's Prometheus-style spellings) and `--library`
/// (the earlier spelling of `ascend-smi` and the node labeller) are aliases of the same flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct DriverArgs {
    /// Load exactly this libdcmi.so instead of searching ASCEND_DCMI_LIBRARY, the ldconfig cache and the driver
    /// directories.
    #[arg(long = "dcmi-library", env = "ASCEND_DCMI_LIBRARY", value_name = "PATH", aliases = ["dcmi.library", "library"])]
    pub dcmi_library: Option<PathBuf>,

    /// Load a libdcmi.so that is not root-owned and read-only (test builds only).
    #[arg(long, env = "ASCEND_SKIP_LIBRARY_OWNERSHIP_CHECK", alias = "dcmi.skip-ownership-check")]
    pub skip_library_ownership_check: bool,
}

impl DriverArgs {
    /// The loading options these flags describe, for a host whose `/` is at `host_root`.
    pub fn options(&self, host_root: impl Into<PathBuf>) -> DriverOptions {
        DriverOptions {
            library: self.dcmi_library.clone(),
            host_root: host_root.into(),
            verify_library_ownership: !self.skip_library_ownership_check,
            call_deadline: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Program {
        #[command(flatten)]
        driver: DriverArgs,
    }

    #[test]
    fn every_spelling_sets_the_same_flags() {
        for spelling in ["--dcmi-library", "--dcmi.library", "--library"] {
            let program = Program::parse_from(["p", spelling, "/opt/libdcmi.so"]);
            assert_eq!(program.driver.dcmi_library, Some(PathBuf::from("/opt/libdcmi.so")), "{spelling}");
        }
        for spelling in ["--skip-library-ownership-check", "--dcmi.skip-ownership-check"] {
            let options = Program::parse_from(["p", spelling]).driver.options("/host");
            assert!(!options.verify_library_ownership, "{spelling}");
            assert_eq!(options.host_root, PathBuf::from("/host"));
        }
    }

    #[test]
    fn the_ownership_check_is_on_unless_skipped() {
        assert!(Program::parse_from(["p"]).driver.options("/").verify_library_ownership);
    }
}
