//! Where the host's chip list, chip type and product type come from, in the order the CDI
//! generator and the runtime use:
//!
//! 1. a chip type the operator gave (`--chip-type`): the chips are the `/dev/davinci<N>` nodes and
//!    the driver is not asked (the way out when DCMI itself is broken);
//! 2. DCMI (feature `dcmi`): `libdcmi.so` found as the vendor's tools find it, under the host root
//!    (or the file `ASCEND_DCMI_LIBRARY` names); physical ids, chip type and product type from the
//!    driver, each chip's device node checked ([`HostChips::check_device_nodes`]);
//! 3. the `/dev` scan, with the reason DCMI was not used ([`ChipSource::fallback_warning`]).

use std::fmt;
use std::path::PathBuf;

use crate::error::Result;
use crate::host::HostChips;
use crate::secure_path::HostRoot;

/// Which source gave the chip list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChipSource {
    /// The operator gave the chip type; the chips come from the `/dev` scan.
    ChipTypeFlag,
    /// DCMI, loaded from this library.
    Dcmi {
        /// The `libdcmi.so` that answered.
        library: PathBuf,
    },
    /// DCMI's earlier answer, remembered by [`crate::ChipCache`] and still valid.
    DcmiCache {
        /// The `libdcmi.so` that answered.
        library: PathBuf,
        /// The cache file.
        cache: PathBuf,
    },
    /// The `/dev` scan, because DCMI could not be used.
    DeviceScan {
        /// Why DCMI was not used.
        dcmi_unavailable: String,
    },
}

impl ChipSource {
    /// The warning to show when DCMI was wanted but not used: the chip type is then unknown and
    /// a chip without its device node goes unnoticed. `None` for the other sources.
    pub fn fallback_warning(&self) -> Option<String> {
        match self {
            ChipSource::DeviceScan { dcmi_unavailable } => Some(format!(
                "chips found by scanning /dev/davinci* because DCMI was not used: {dcmi_unavailable}; the chip type \
                 is unknown (pass --chip-type) and a chip without its device node cannot be noticed"
            )),
            ChipSource::ChipTypeFlag | ChipSource::Dcmi { .. } | ChipSource::DcmiCache { .. } => None,
        }
    }
}

impl fmt::Display for ChipSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChipSource::ChipTypeFlag => f.write_str("the /dev scan with the chip type given by the operator"),
            ChipSource::Dcmi { library } => write!(f, "DCMI ({})", library.display()),
            ChipSource::DcmiCache { library, cache } => {
                write!(f, "DCMI ({}), as remembered in {}", library.display(), cache.display())
            }
            // The reason is long; `fallback_warning` carries it.
            ChipSource::DeviceScan { .. } => f.write_str("the /dev scan (DCMI not used)"),
        }
    }
}

/// The chips of a host and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredChips {
    /// The chips, chip type and product type.
    pub chips: HostChips,
    /// Their source.
    pub source: ChipSource,
}

impl DiscoveredChips {
    /// One line describing what was found, for logs.
    pub fn summary(&self) -> String {
        let ids: Vec<String> = self.chips.chips.iter().map(|chip| chip.node_id.to_string()).collect();
        format!(
            "chips [{}], chip type {}, product {}, from {}",
            ids.join(","),
            self.chips.chip_type.as_deref().unwrap_or("unknown"),
            self.chips.product_type.as_deref().unwrap_or("unknown"),
            self.source
        )
    }
}

/// Finds the host's chips: the operator's chip type if given, else DCMI, else the `/dev` scan
/// (see the module documentation).
///
/// # Errors
/// [`crate::Error::DeviceNodeMissing`] when DCMI reports a chip whose node is absent; the errors
/// of [`HostChips::scan`]. DCMI failing to load, initialise or answer is not an error: the scan
/// is used and [`ChipSource::fallback_warning`] says why.
pub fn discover_chips(root: &HostRoot, chip_type: Option<String>) -> Result<DiscoveredChips> {
    if chip_type.is_some() {
        return Ok(DiscoveredChips { chips: HostChips::scan(root, chip_type)?, source: ChipSource::ChipTypeFlag });
    }
    let dcmi_unavailable = match from_driver(root)? {
        Ok(found) => return Ok(found),
        Err(reason) => reason,
    };
    Ok(DiscoveredChips { chips: HostChips::scan(root, None)?, source: ChipSource::DeviceScan { dcmi_unavailable } })
}

/// What asking the driver gave: the chips, or why the driver could not be used.
type DriverAnswer = std::result::Result<DiscoveredChips, String>;

#[cfg(feature = "dcmi")]
fn from_driver(root: &HostRoot) -> Result<DriverAnswer> {
    use crate::error::Error;

    let dcmi = match ascend_dcmi::Dcmi::builder().host_root(root.path()).init() {
        Ok(dcmi) => dcmi,
        Err(error) => return Ok(Err(format!("loading libdcmi.so: {error}"))),
    };
    let library = dcmi.library_path().to_path_buf();
    let chips = match HostChips::from_dcmi(root, &dcmi) {
        Ok(chips) => chips,
        Err(error @ Error::Dcmi { .. }) => return Ok(Err(format!("{}: {error}", library.display()))),
        Err(other) => return Err(other),
    };
    if chips.chips.is_empty() {
        return Ok(Err(format!("{} reports no chips", library.display())));
    }
    Ok(Ok(DiscoveredChips { chips, source: ChipSource::Dcmi { library } }))
}

#[cfg(not(feature = "dcmi"))]
fn from_driver(_root: &HostRoot) -> Result<DriverAnswer> {
    Ok(Err("ascend-oci was built without its `dcmi` feature".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host root with an empty `/dev` and no driver.
    fn driverless_root() -> (tempfile::TempDir, HostRoot) {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::create_dir(dir.path().join("dev")).expect("mkdir dev");
        let root = HostRoot::open(dir.path()).expect("host root");
        (dir, root)
    }

    #[test]
    fn operator_chip_type_skips_the_driver() {
        let (_dir, root) = driverless_root();
        let found = discover_chips(&root, Some("310B".to_owned())).expect("discovery");
        assert_eq!(found.source, ChipSource::ChipTypeFlag);
        assert_eq!(found.chips.chip_type.as_deref(), Some("310B"));
        assert_eq!(found.source.fallback_warning(), None);
    }

    #[test]
    fn no_driver_means_the_scan_and_a_warning_with_the_reason() {
        let (_dir, root) = driverless_root();
        let found = discover_chips(&root, None).expect("discovery");
        let ChipSource::DeviceScan { dcmi_unavailable } = &found.source else {
            panic!("expected the /dev scan, got {}", found.source);
        };
        assert!(!dcmi_unavailable.is_empty());
        let warning = found.source.fallback_warning().expect("warning");
        assert!(warning.contains(dcmi_unavailable.as_str()) && warning.contains("--chip-type"), "{warning}");
        assert_eq!(found.chips.chip_type, None);
        assert!(found.summary().contains("chip type unknown"), "{}", found.summary());
    }
}
