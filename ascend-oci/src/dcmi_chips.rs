//! [`HostChips`] from the driver (feature `dcmi`): the chips' node numbers, chip type and product type as DCMI
//! reports them, cross-checked against the host's device nodes.

use ascend_dcmi::{ApiFamily, Chip, ChipType, Dcmi};

use crate::error::{Error, Result};
use crate::host::{HostChip, HostChips};
use crate::secure_path::HostRoot;

/// The source name used in [`Error::DeviceNodeMissing`].
const REPORTED_BY: &str = "DCMI";

impl HostChips {
    /// The chips DCMI reports, each by the `N` of its `/dev/davinci<N>`
    /// ([`ascend_dcmi::ChipIds::device_node_number`]: the physical id, on Ascend950 the logic id). The chip
    /// type is DCMI's classification (`Ascend310P`, `Ascend910B`, ...: the names
    /// [`crate::shared_device_nodes`] understands) and the product type is `dcmi_get_product_type`, both
    /// read from the first chip that answers, as Huawei's runtime does; a chip family without a product
    /// type (the 910 family) leaves it `None`. When no chip names its type, a DCMI V2 driver still means
    /// Ascend950 numbering. Every chip's `/dev/davinci<N>` node must exist under `root`.
    ///
    /// # Errors
    /// [`Error::Dcmi`] when the chips cannot be listed; [`Error::DeviceNodeMissing`] naming the node
    /// of a reported chip that is absent, and the other errors of
    /// [`HostChips::check_device_nodes`].
    pub fn from_dcmi(root: &HostRoot, dcmi: &Dcmi) -> Result<HostChips> {
        let ids = dcmi.chips().map_err(|source| Error::Dcmi { operation: "list chips".to_owned(), source })?;
        let mut host = HostChips { chip_type: None, product_type: None, chips: Vec::new() };
        let mut numbering = match dcmi.api_family() {
            ApiFamily::V2 => ChipType::Ascend950,
            ApiFamily::V1 => ChipType::Ascend910B,
        };
        for ids in &ids {
            let Ok(chip) = dcmi.chip(ids.logic) else {
                continue;
            };
            if let Ok(Some(chip_type)) = chip.chip_type() {
                host.chip_type = Some(chip_type.as_str().to_owned());
                host.product_type = product_type(&chip);
                numbering = chip_type;
                break;
            }
        }
        host.chips = ids.iter().map(|ids| HostChip { node_id: ids.device_node_number(numbering) }).collect();
        host.chips.sort();
        host.chips.dedup();
        host.check_device_nodes(root, REPORTED_BY)?;
        Ok(host)
    }
}

/// The product type, `None` when the chip family has none (-8255) or the answer is empty.
fn product_type(chip: &Chip) -> Option<String> {
    chip.product_type().ok().map(|product| product.trim().to_owned()).filter(|product| !product.is_empty())
}
