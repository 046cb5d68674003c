//! Typed identifiers for the four id spaces of an Ascend host.
//!
//! The DCMI V1 API addresses a chip by `(card, device)`, the V2 API (Ascend950) by logic id; the driver enumerates
//! chips by **logic id** (also the id in fault events); Kubernetes device names use the **physical id**. The `N` of a
//! chip's device node `/dev/davinci<N>`, which `ASCEND_VISIBLE_DEVICES` and CDI device names also carry, is the
//! physical id, except on Ascend950, where it is the logic id ([`ChipIds::device_node_number`]). Inside a
//! container the CANN runtime renumbers the visible chips `0..n` (the "visible" ordinal, not modelled here). Mixing them
//! up is the most common integration bug, so each is its own type.

use std::fmt;
use std::num::ParseIntError;
use std::str::FromStr;

use crate::ChipType;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub struct $name(pub $inner);

        impl $name {
            /// The raw value passed to or returned by DCMI.
            pub const fn get(self) -> $inner {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl FromStr for $name {
            type Err = ParseIntError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.trim().parse::<$inner>().map($name)
            }
        }

        impl From<$inner> for $name {
            fn from(raw: $inner) -> Self {
                $name(raw)
            }
        }
    };
}

id_type!(
    /// A card (NPU management unit) as returned by `dcmi_get_card_list`; not contiguous.
    CardId(i32)
);
id_type!(
    /// A chip's index on its card (0..=3): one per card on 910/910B, two on 310P Duo and A3 cards.
    DeviceId(i32)
);
id_type!(
    /// The driver's enumeration index of a chip (0..=255); also the chip id carried by fault events.
    LogicId(u32)
);
id_type!(
    /// The physical chip id: `/dev/davinci<phy>`, Kubernetes device names and `ASCEND_VISIBLE_DEVICES`.
    PhyId(u32)
);

/// Where a chip sits: the `(card, device)` pair every per-chip DCMI V1 call takes. The V2 API (Ascend950) has no
/// cards, so a chip there has no locator ([`ChipIds::locator`] is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChipLocator {
    /// The card.
    pub card: CardId,
    /// The chip's index on the card.
    pub device: DeviceId,
}

impl fmt::Display for ChipLocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "card {} device {}", self.card, self.device)
    }
}

/// Every id of one chip, as found by enumeration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChipIds {
    /// The driver's enumeration index.
    pub logic: LogicId,
    /// The physical id (Kubernetes device names; `/dev/davinci<phy>` but on Ascend950).
    pub phy: PhyId,
    /// The `(card, device)` pair on the V1 API; `None` on the V2 API, which has no cards (an invented pair would
    /// send V1 callers to a card that does not exist).
    pub locator: Option<ChipLocator>,
}

impl ChipIds {
    /// The `N` of the chip's device node `/dev/davinci<N>`, which is also the id `ASCEND_VISIBLE_DEVICES` and the CDI
    /// device names carry: the logic id on Ascend950, the physical id on every other chip type. The one place the
    /// stack decides it (the device plugin, the runtime's chip discovery, the DRA driver, `ascend-smi` and the doctor
    /// ask here).
    ///
    /// Huawei's device plugin converts an Ascend950 chip's physical id to its logic id before it names
    /// `/dev/davinci<N>` and `ASCEND_VISIBLE_DEVICES` (mind-cluster `component/ascend-device-plugin/pkg/server/plugin.go`,
    /// `getFinalVisibleDevices` and `convertToLogicIDs`, for `Ascend910A5`), and its runtime makes `/dev/davinci<N>` of
    /// that number unchanged (`component/ascend-docker-runtime/runtime/process/process.go`, `addDevice`): the driver
    /// is expected to number an Ascend950's node by logic id. docs/huawei-compatibility.md has the details.
    pub fn device_node_number(&self, chip_type: ChipType) -> u32 {
        match chip_type {
            ChipType::Ascend950 => self.logic.0,
            _ => self.phy.0,
        }
    }
}

impl fmt::Display for ChipIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.locator {
            Some(locator) => write!(f, "chip phy {} (logic {}, {locator})", self.phy, self.logic),
            None => write!(f, "chip phy {} (logic {})", self.phy, self.logic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ascend950_numbers_device_nodes_by_logic_id() {
        // atlas-950-8: logic 0 is physical 4.
        let ids = ChipIds { logic: LogicId(0), phy: PhyId(4), locator: None };
        assert_eq!(ids.device_node_number(ChipType::Ascend950), 0);
        assert_eq!(ids.device_node_number(ChipType::Ascend910B), 4);
        assert_eq!(ids.device_node_number(ChipType::Ascend310P), 4);
    }

    #[test]
    fn ids_parse_and_display_round_trip() {
        let phy: PhyId = " 7 ".parse().expect("valid id");
        assert_eq!(phy, PhyId(7));
        assert_eq!(phy.to_string(), "7");
        assert!("x".parse::<LogicId>().is_err());
        assert!("-1".parse::<LogicId>().is_err());
        assert_eq!("-1".parse::<CardId>(), Ok(CardId(-1)));
    }

    #[test]
    fn chip_ids_display_names_every_space() {
        let locator = Some(ChipLocator { card: CardId(2), device: DeviceId(1) });
        let ids = ChipIds { logic: LogicId(1), phy: PhyId(4), locator };
        assert_eq!(ids.to_string(), "chip phy 4 (logic 1, card 2 device 1)");
        let v2 = ChipIds { locator: None, ..ids };
        assert_eq!(v2.to_string(), "chip phy 4 (logic 1)");
    }
}
