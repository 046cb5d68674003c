//! Chip reset and boot status.

/// Where a chip is in its boot (`dcmi_get_device_boot_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum BootStatus {
    /// 0: not initialised.
    Uninitialized,
    /// 1: in BIOS.
    Bios,
    /// 2: OS booting.
    Os,
    /// 3 (the header's value) or 16 (what the driver returns after a hot reset): booted.
    Finished,
    /// Any other value.
    Other(u32),
}

impl BootStatus {
    /// Maps the raw value; both 3 and 16 mean finished.
    pub fn from_raw(raw: u32) -> Self {
        match raw {
            0 => BootStatus::Uninitialized,
            1 => BootStatus::Bios,
            2 => BootStatus::Os,
            3 | 16 => BootStatus::Finished,
            other => BootStatus::Other(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_finished_values_mean_finished() {
        assert_eq!(BootStatus::from_raw(3), BootStatus::Finished);
        assert_eq!(BootStatus::from_raw(16), BootStatus::Finished);
        assert_eq!(BootStatus::from_raw(2), BootStatus::Os);
    }
}
