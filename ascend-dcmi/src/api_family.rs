//! [`ApiFamily`]: which of the driver's two APIs a loaded `libdcmi.so` serves.

use std::fmt;

/// The DCMI API family the driver serves, detected at initialisation as Huawei's tools detect it: `dcmi_init`
/// first (V1), then `dcmiv2_init` (V2).
///
/// | family | chips | a chip is addressed by |
/// |---|---|---|
/// | V1 (`dcmi_*`) | 310, 310B, 310P, 910, 910B, 910 A3 | `(card, device)`, a [`ChipLocator`](crate::ChipLocator) |
/// | V2 (`dcmiv2_*`) | Ascend950 ("A5") | its logic id; there are no cards |
///
/// The safe API is the same on both; what one family has no call for fails with
/// [`Error::UnavailableOnApi`](crate::Error::UnavailableOnApi) naming the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ApiFamily {
    /// `dcmi_*`: every chip up to the 910 A3.
    V1,
    /// `dcmiv2_*`: Ascend950, where `dcmi_init` fails.
    V2,
}

impl ApiFamily {
    /// `"DCMI V1"` or `"DCMI V2"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApiFamily::V1 => "DCMI V1",
            ApiFamily::V2 => "DCMI V2",
        }
    }
}

impl fmt::Display for ApiFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
