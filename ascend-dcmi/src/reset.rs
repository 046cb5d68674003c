//! Chip reset on a [`Chip`]: in-band, out-of-band as the fallback, then waiting for the boot to finish; and the
//! boot status that tells when it has.

use std::time::{Duration, Instant};

use crate::chip::Chip;
use crate::error::{Error, Result};

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

/// The longest pause between two boot-status reads.
const MAX_BOOT_POLL: Duration = Duration::from_millis(500);
/// The shortest pause between two boot-status reads.
const MIN_BOOT_POLL: Duration = Duration::from_millis(10);

impl Chip {
    /// Where the chip is in its boot; [`BootStatus::Finished`] for both the header's 3 and the driver's 16.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_boot_status")]
    pub fn boot_status(&self) -> Result<BootStatus> {
        self.dcmi().library().boot_status(self.target()).map(BootStatus::from_raw)
    }

    /// Hot-resets the chip and waits until it has booted or `timeout` passed.
    ///
    /// The in-band reset is tried first. If it fails and the out-of-band channel is ready, the out-of-band
    /// sequence follows: prepare (`dcmi_pre_reset_soc`), reset on channel 0, rescan the bus (`dcmi_rescan_soc`).
    ///
    /// # Errors
    /// The in-band error when no out-of-band channel is ready; the error of a step of the out-of-band sequence;
    /// [`Error::Timeout`] (about `dcmi_get_device_boot_status`) when the chip has not booted in time.
    #[doc(alias = "dcmi_set_device_reset")]
    #[doc(alias = "dcmi_pre_reset_soc")]
    #[doc(alias = "dcmi_rescan_soc")]
    pub fn reset(&self, timeout: Duration) -> Result<()> {
        let started = Instant::now();
        let library = self.dcmi().library();
        let target = self.target();
        if let Err(in_band) = library.reset(target, true) {
            if !library.outband_channel_ready(target).unwrap_or(false) {
                return Err(in_band);
            }
            library.pre_reset(target)?;
            library.reset(target, false)?;
            library.rescan(target)?;
        }
        self.wait_until_booted(timeout.saturating_sub(started.elapsed()))
    }

    /// Polls the boot status until it says finished. Errors while the chip reboots (it may not answer, or answer
    /// "not ready") are waited out; only the deadline ends the wait.
    ///
    /// # Errors
    /// [`Error::Timeout`] when `timeout` passes first.
    pub fn wait_until_booted(&self, timeout: Duration) -> Result<()> {
        let started = Instant::now();
        let pause = (timeout / 20).clamp(MIN_BOOT_POLL, MAX_BOOT_POLL);
        loop {
            if let Ok(BootStatus::Finished) = self.boot_status() {
                return Ok(());
            }
            if started.elapsed() >= timeout {
                return Err(Error::Timeout { context: self.context("dcmi_get_device_boot_status"), deadline: timeout });
            }
            std::thread::sleep(pause.min(timeout.saturating_sub(started.elapsed())));
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
