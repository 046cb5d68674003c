//! Chip health: DCMI's overall health word, the active fault codes, and the fault level they grade to.
//!
//! The grading itself is a [`crate::FaultPolicy`]; this module holds the values it works on.

use std::fmt;
use std::str::FromStr;

use crate::limits::MAX_FAULT_CODES;

/// A fault event id, for example `0x80E01801`. Huawei's stack also synthesises 64-bit ids (card drop, hang).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FaultCode(pub u64);

impl FaultCode {
    /// Synthesised when health returns -8012: the card dropped off the bus.
    pub const CARD_DROP: FaultCode = FaultCode(0x40F8_4E00);
    /// Synthesised by hang detection: the chip holds processes but does no work.
    pub const HANG: FaultCode = FaultCode(0x2_0000_1002);
}

impl fmt::Display for FaultCode {
    /// Upper-case hex without `0x`, at least eight digits, as `faultCode.json` writes codes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08X}", self.0)
    }
}

/// The error of parsing a [`FaultCode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fault code {0:?}; expected hex such as 80E01801 or 0x80E01801")]
pub struct ParseFaultCodeError(pub String);

impl FromStr for FaultCode {
    type Err = ParseFaultCodeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        let digits = trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")).unwrap_or(trimmed);
        if digits.is_empty() || digits.len() > 16 {
            return Err(ParseFaultCodeError(s.to_owned()));
        }
        u64::from_str_radix(digits, 16).map(FaultCode).map_err(|_| ParseFaultCodeError(s.to_owned()))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for FaultCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// DCMI's overall health word (`dcmi_get_device_health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum DcmiHealth {
    /// 0: no alarm.
    Ok,
    /// 1: minor alarm.
    Minor,
    /// 2: major alarm.
    Major,
    /// 3: critical alarm.
    Critical,
    /// 0xFFFFFFFF: the chip is absent.
    Absent,
    /// Any other value.
    Other(u32),
}

impl DcmiHealth {
    /// Maps the raw health word.
    pub fn from_raw(raw: u32) -> Self {
        match raw {
            0 => DcmiHealth::Ok,
            1 => DcmiHealth::Minor,
            2 => DcmiHealth::Major,
            3 => DcmiHealth::Critical,
            u32::MAX => DcmiHealth::Absent,
            other => DcmiHealth::Other(other),
        }
    }

    /// A short name for tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DcmiHealth::Ok => "ok",
            DcmiHealth::Minor => "minor",
            DcmiHealth::Major => "major",
            DcmiHealth::Critical => "critical",
            DcmiHealth::Absent => "absent",
            DcmiHealth::Other(_) => "other",
        }
    }
}

/// How serious a chip's faults are, least serious first (Huawei's fault handling levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FaultLevel {
    /// No fault.
    #[default]
    NormalNpu,
    /// A fault that needs no handling.
    NotHandleFault,
    /// Sub-health: works, watch it.
    SubHealthFault,
    /// Restart the request.
    RestartRequest,
    /// Restart the business (job).
    RestartBusiness,
    /// Restart the NPU when it is free.
    FreeRestartNpu,
    /// Restart the NPU.
    RestartNpu,
    /// Isolate the NPU once it is free.
    PreSeparateNpu,
    /// Isolate the NPU now.
    SeparateNpu,
    /// Isolated by an operator (or by a fault-frequency rule) until cleared by hand.
    ManuallySeparateNpu,
}

impl FaultLevel {
    /// Every level, least serious first.
    pub const ALL: [FaultLevel; 10] = [
        FaultLevel::NormalNpu,
        FaultLevel::NotHandleFault,
        FaultLevel::SubHealthFault,
        FaultLevel::RestartRequest,
        FaultLevel::RestartBusiness,
        FaultLevel::FreeRestartNpu,
        FaultLevel::RestartNpu,
        FaultLevel::PreSeparateNpu,
        FaultLevel::SeparateNpu,
        FaultLevel::ManuallySeparateNpu,
    ];

    /// Huawei's name, as used in `faultCode.json` list names and ConfigMaps (`"SeparateNPU"` ...).
    pub const fn name(self) -> &'static str {
        match self {
            FaultLevel::NormalNpu => "NormalNPU",
            FaultLevel::NotHandleFault => "NotHandleFault",
            FaultLevel::SubHealthFault => "SubHealthFault",
            FaultLevel::RestartRequest => "RestartRequest",
            FaultLevel::RestartBusiness => "RestartBusiness",
            FaultLevel::FreeRestartNpu => "FreeRestartNPU",
            FaultLevel::RestartNpu => "RestartNPU",
            FaultLevel::PreSeparateNpu => "PreSeparateNPU",
            FaultLevel::SeparateNpu => "SeparateNPU",
            FaultLevel::ManuallySeparateNpu => "ManuallySeparateNPU",
        }
    }

    /// A number for metrics: 0 for `NormalNpu` up to 9 for `ManuallySeparateNpu`.
    pub fn severity_rank(self) -> u8 {
        FaultLevel::ALL.iter().position(|level| *level == self).map_or(0, |p| p as u8)
    }

    /// Whether a chip at this level may be handed to (or stay with) workloads. `in_use` says whether a workload
    /// holds the chip now: pre-separation waits for the workload to finish, and so does a free-time restart.
    pub fn is_schedulable(self, in_use: bool) -> bool {
        match self {
            FaultLevel::NormalNpu | FaultLevel::NotHandleFault | FaultLevel::SubHealthFault => true,
            FaultLevel::FreeRestartNpu | FaultLevel::PreSeparateNpu => in_use,
            _ => false,
        }
    }
}

impl fmt::Display for FaultLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The active fault codes of a chip, held inline (no heap allocation).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FaultCodes {
    len: usize,
    codes: [FaultCode; MAX_FAULT_CODES],
}

impl Default for FaultCodes {
    fn default() -> Self {
        Self { len: 0, codes: [FaultCode(0); MAX_FAULT_CODES] }
    }
}

impl fmt::Debug for FaultCodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl FaultCodes {
    /// Builds a list, skipping zeros (DCMI pads with them) and keeping at most [`MAX_FAULT_CODES`].
    pub fn from_codes(codes: impl IntoIterator<Item = FaultCode>) -> Self {
        let mut list = Self::default();
        for code in codes.into_iter().filter(|code| code.0 != 0) {
            if !list.push(code) {
                break;
            }
        }
        list
    }

    /// Appends a code unless it is already present; returns false when the list is full.
    pub fn push(&mut self, code: FaultCode) -> bool {
        if self.contains(code) {
            return true;
        }
        if self.len == MAX_FAULT_CODES {
            return false;
        }
        self.codes[self.len] = code;
        self.len += 1;
        true
    }

    /// Whether the code is active.
    pub fn contains(&self, code: FaultCode) -> bool {
        self.as_slice().contains(&code)
    }

    /// The codes, in the order the driver reported them.
    pub fn as_slice(&self) -> &[FaultCode] {
        &self.codes[..self.len]
    }

    /// How many codes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no fault is active.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for FaultCodes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.as_slice())
    }
}

/// A chip's health at one moment: what DCMI said, which faults are active, and what they grade to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HealthReport {
    /// DCMI's health word; `None` when the chip dropped and could not answer.
    pub dcmi: Option<DcmiHealth>,
    /// Active fault codes (with [`FaultCode::CARD_DROP`] when the card dropped).
    pub faults: FaultCodes,
    /// The most serious level the fault policy gave any active fault (or the health word).
    pub level: FaultLevel,
    /// Whether the card dropped off the bus or is rebooting (-8012 from the health call).
    pub card_dropped: bool,
}

impl HealthReport {
    /// A healthy report with no faults.
    pub fn healthy() -> Self {
        Self {
            dcmi: Some(DcmiHealth::Ok),
            faults: FaultCodes::default(),
            level: FaultLevel::NormalNpu,
            card_dropped: false,
        }
    }

    /// Whether the chip may be handed to new workloads.
    pub fn is_healthy(&self) -> bool {
        !self.card_dropped && self.level.is_schedulable(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_codes_parse_and_print_as_hex() {
        assert_eq!("80E01801".parse(), Ok(FaultCode(0x80E0_1801)));
        assert_eq!("0x110001024".parse(), Ok(FaultCode(0x1_1000_1024)));
        assert!("".parse::<FaultCode>().is_err());
        assert!("xyz".parse::<FaultCode>().is_err());
        assert_eq!(FaultCode(0x1801).to_string(), "00001801");
        assert_eq!(FaultCode::CARD_DROP.to_string(), "40F84E00");
    }

    #[test]
    fn levels_are_ordered_by_seriousness() {
        assert!(FaultLevel::SeparateNpu > FaultLevel::PreSeparateNpu);
        assert!(FaultLevel::ManuallySeparateNpu > FaultLevel::SeparateNpu);
        assert!(FaultLevel::NotHandleFault < FaultLevel::SubHealthFault);
        assert_eq!(FaultLevel::ManuallySeparateNpu.severity_rank(), 9);
        assert!(FaultLevel::SubHealthFault.is_schedulable(false));
        assert!(!FaultLevel::PreSeparateNpu.is_schedulable(false));
        assert!(FaultLevel::PreSeparateNpu.is_schedulable(true));
        assert!(!FaultLevel::RestartNpu.is_schedulable(true));
    }

    #[test]
    fn fault_code_list_skips_padding_and_duplicates() {
        let list = FaultCodes::from_codes([FaultCode(0), FaultCode(5), FaultCode(5), FaultCode(7)]);
        assert_eq!(list.as_slice(), &[FaultCode(5), FaultCode(7)]);
        let full = FaultCodes::from_codes((1..=200).map(FaultCode));
        assert_eq!(full.len(), MAX_FAULT_CODES);
    }

    #[test]
    fn health_word_maps_absent() {
        assert_eq!(DcmiHealth::from_raw(u32::MAX), DcmiHealth::Absent);
        assert_eq!(DcmiHealth::from_raw(2), DcmiHealth::Major);
        assert!(HealthReport::healthy().is_healthy());
    }
}
