//! Chip-to-chip link counters: HCCS packet and CRC-error counters per link (910B, A3) and the SIO CRC errors between
//! the two dies of a card (A3, Ascend950), both read with `dcmi_get_device_info`.
//!
//! Huawei's npu-exporter reads the same queries (Ascend/mind-cluster component/ascend-common/devmanager/dcmi/dcmi.go,
//! `DcGetHccsStatisticInfoU64`, `DcGetHccsStatisticInfo`, `DcGetSioInfo`).

use dcmi_sys as sys;

use crate::chip::Chip;
use crate::chip_view::ChipView;
use crate::error::Result;
use crate::limits::HCCS_LINKS;

/// `DCMI_MAIN_CMD_HCCS`.
const MAIN_CMD_HCCS: u32 = sys::dcmi_main_cmd::DCMI_MAIN_CMD_HCCS.0;
/// HCCS sub-command with 32-bit counters (older drivers).
const HCCS_STATISTICS_U32: u32 = 3;
/// HCCS sub-command with 64-bit counters.
const HCCS_STATISTICS_U64: u32 = 5;
/// `DCMI_MAIN_CMD_SIO`.
const MAIN_CMD_SIO: u32 = sys::dcmi_main_cmd::DCMI_MAIN_CMD_SIO.0;
/// SIO sub-command of the CRC error counters.
const SIO_CRC_ERRORS: u32 = 0;

/// Packet and CRC-error counters of each HCCS link since the driver started, indexed by link number as the driver
/// numbers them (link 0 unused on 910B and A3 servers, links 0 and 1 on Atlas 9000 A3 SuperPoD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HccsStatistics {
    /// Messages transmitted per link.
    pub tx_messages: [u64; HCCS_LINKS],
    /// Messages received per link.
    pub rx_messages: [u64; HCCS_LINKS],
    /// CRC errors per link.
    pub crc_errors: [u64; HCCS_LINKS],
}

/// CRC errors on the SIO (the die-to-die interface of a two-die card) since the driver started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SioCrcErrors {
    /// Errors in transmitted data.
    pub tx: u16,
    /// Errors in received data.
    pub rx: u16,
}

impl ChipView<'_> {
    /// The 64-bit query, and the 32-bit one where the driver does not know it.
    pub(crate) fn hccs_statistics(self) -> Result<HccsStatistics> {
        let library = self.dcmi.library();
        let target = self.target();
        match library.device_info(
            target,
            MAIN_CMD_HCCS,
            HCCS_STATISTICS_U64,
            sys::dcmi_hccs_statistic_info_u64::default(),
        ) {
            Ok(raw) => Ok(copy_links(&raw.tx_cnt, &raw.rx_cnt, &raw.crc_err_cnt, |count| count)),
            Err(error) if error.is_unsupported() => {
                let raw = library.device_info(
                    target,
                    MAIN_CMD_HCCS,
                    HCCS_STATISTICS_U32,
                    sys::dcmi_hccs_statistic_info::default(),
                )?;
                Ok(copy_links(&raw.tx_cnt, &raw.rx_cnt, &raw.crc_err_cnt, u64::from))
            }
            Err(error) => Err(error),
        }
    }

    pub(crate) fn sio_crc_errors(self) -> Result<SioCrcErrors> {
        let raw = self.dcmi.library().device_info(
            self.target(),
            MAIN_CMD_SIO,
            SIO_CRC_ERRORS,
            sys::dcmi_sio_crc_err_statistic_info::default(),
        )?;
        Ok(SioCrcErrors { tx: raw.tx_error_count, rx: raw.rx_error_count })
    }
}

fn copy_links<T: Copy>(tx: &[T], rx: &[T], crc: &[T], widen: fn(T) -> u64) -> HccsStatistics {
    let mut statistics = HccsStatistics::default();
    for link in 0..HCCS_LINKS {
        statistics.tx_messages[link] = tx.get(link).copied().map_or(0, widen);
        statistics.rx_messages[link] = rx.get(link).copied().map_or(0, widen);
        statistics.crc_errors[link] = crc.get(link).copied().map_or(0, widen);
    }
    statistics
}

impl Chip {
    /// Message and CRC-error counters of each HCCS link (910B, A3): the driver's 64-bit counters, or its 32-bit ones
    /// where it lacks them.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without HCCS, or any DCMI error.
    #[doc(alias = "dcmi_get_device_info")]
    pub fn hccs_statistics(&self) -> Result<HccsStatistics> {
        self.view().hccs_statistics()
    }

    /// CRC errors between the two dies of the card (A3, Ascend950).
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without SIO, or any DCMI error.
    #[doc(alias = "dcmi_get_device_info")]
    #[doc(alias = "dcmiv2_get_device_info")]
    pub fn sio_crc_errors(&self) -> Result<SioCrcErrors> {
        self.view().sio_crc_errors()
    }
}
