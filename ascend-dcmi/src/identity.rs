//! What a chip is: its name strings, board, PCIe address, NUMA placement, die id and serial number.

use std::fmt;
use std::str::FromStr;

use crate::chip_type::ChipType;
use crate::ids::ChipIds;

/// The strings and core count of `dcmi_get_device_chip_info(_v2)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChipInfo {
    /// `chip_type`, usually `"Ascend"`.
    pub chip_type: String,
    /// `chip_name`, for example `"310P3"` or `"910B3"`: what classification reads.
    pub chip_name: String,
    /// `chip_ver`, for example `"V1"`.
    pub chip_version: String,
    /// Number of AI cores.
    pub aicore_count: u32,
    /// `npu_name` of the v2 call, when the driver has it.
    pub npu_name: Option<String>,
}

impl ChipInfo {
    /// Huawei's exporter label `model_name`: `<chip_name>-<chip_type>-<chip_ver>`.
    pub fn model_name(&self) -> String {
        format!("{}-{}-{}", self.chip_name, self.chip_type, self.chip_version)
    }
}

/// Board ids of `dcmi_get_device_board_info`; `None` where the driver reports 0xFFFFFFFF (invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BoardInfo {
    /// Board id (identifies A3 and A300I A2 boards).
    pub board_id: Option<u32>,
    /// PCB id.
    pub pcb_id: Option<u32>,
    /// BOM id.
    pub bom_id: Option<u32>,
    /// PCIe slot.
    pub slot_id: Option<u32>,
}

/// A PCIe address, displayed as `DDDD:BB:DD.F` in lower-case hex as Linux spells it in `/sys/bus/pci/devices`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PcieAddress {
    /// Domain.
    pub domain: u32,
    /// Bus.
    pub bus: u8,
    /// Device.
    pub device: u8,
    /// Function.
    pub function: u8,
}

impl fmt::Display for PcieAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{:x}", self.domain, self.bus, self.device, self.function)
    }
}

/// The error of parsing a [`PcieAddress`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid PCIe address {0:?}; expected DDDD:BB:DD.F in hex")]
pub struct ParsePcieAddressError(pub String);

impl FromStr for PcieAddress {
    type Err = ParsePcieAddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParsePcieAddressError(s.to_owned());
        let (domain, rest) = s.split_once(':').ok_or_else(bad)?;
        let (bus, rest) = rest.split_once(':').ok_or_else(bad)?;
        let (device, function) = rest.split_once('.').ok_or_else(bad)?;
        Ok(PcieAddress {
            domain: u32::from_str_radix(domain, 16).map_err(|_| bad())?,
            bus: u8::from_str_radix(bus, 16).map_err(|_| bad())?,
            device: u8::from_str_radix(device, 16).map_err(|_| bad())?,
            function: u8::from_str_radix(function, 16).map_err(|_| bad())?,
        })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for PcieAddress {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for PcieAddress {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A die id: five 32-bit words. The VDIE id is the chip's stable UUID (Huawei's `vdie_id` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DieId(pub [u32; 5]);

impl fmt::Display for DieId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, word) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("-")?;
            }
            write!(f, "{word:08X}")?;
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for DieId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The card's electronic label (`dcmi_get_card_elabel_v2`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Elabel {
    /// Product name.
    pub product_name: String,
    /// Model.
    pub model: String,
    /// Manufacturer.
    pub manufacturer: String,
    /// Manufacturing date.
    pub manufacturer_date: String,
    /// Serial number.
    pub serial_number: String,
}

/// Everything that identifies a chip; read once, it changes only when the hardware does.
///
/// Fields the driver cannot give for this chip type are `None` rather than an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ChipIdentity {
    /// The chip's ids.
    pub ids: ChipIds,
    /// The chip generation, `None` if the chip is not one this stack supports.
    pub chip_type: Option<ChipType>,
    /// Name strings and AI-core count.
    pub info: ChipInfo,
    /// Product type, for example `"Atlas 300I Duo"`.
    pub product_type: Option<String>,
    /// Board ids.
    pub board: Option<BoardInfo>,
    /// Mainboard id.
    pub mainboard_id: Option<u32>,
    /// PCIe address.
    pub pcie_address: Option<PcieAddress>,
    /// NUMA node, from the affine CPU list or the PCIe device's `numa_node`.
    pub numa_node: Option<u32>,
    /// NUMA-affine CPUs as a Linux cpulist, for example `"0-23"`.
    pub affinity_cpus: Option<String>,
    /// VDIE id: the chip's stable UUID.
    pub die_id: Option<DieId>,
    /// The card's electronic label.
    pub elabel: Option<Elabel>,
}

impl ChipIdentity {
    /// The card's serial number, if the electronic label could be read.
    pub fn serial_number(&self) -> Option<&str> {
        self.elabel.as_ref().map(|label| label.serial_number.as_str()).filter(|s| !s.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_address_round_trips() {
        let address: PcieAddress = "0000:c1:00.0".parse().expect("valid address");
        assert_eq!(address, PcieAddress { domain: 0, bus: 0xc1, device: 0, function: 0 });
        assert_eq!(address.to_string(), "0000:c1:00.0");
        assert!("c1:00.0".parse::<PcieAddress>().is_err());
        assert!("0000:zz:00.0".parse::<PcieAddress>().is_err());
    }

    #[test]
    fn die_id_formats_like_the_vendor() {
        let die = DieId([0x1, 0xABCDEF, 0, 0xFFFF_FFFF, 0x12]);
        assert_eq!(die.to_string(), "00000001-00ABCDEF-00000000-FFFFFFFF-00000012");
    }

    #[test]
    fn model_name_joins_the_strings() {
        let info = ChipInfo {
            chip_type: "Ascend".into(),
            chip_name: "310P3".into(),
            chip_version: "V1".into(),
            aicore_count: 8,
            npu_name: None,
        };
        assert_eq!(info.model_name(), "310P3-Ascend-V1");
    }
}
