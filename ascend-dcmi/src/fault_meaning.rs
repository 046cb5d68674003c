//! One-line meanings of fault levels and of the fault codes the stack synthesises itself, for people reading a
//! report (`ascend-smi`, the doctor).
//!
//! The driver's own fault codes number in the hundreds and their texts belong to Huawei's fault reference; what a
//! code means for the operator is captured by the level the fault policy grades it to, so a code without a known
//! name is explained by its level.

use crate::health::{FaultCode, FaultLevel};

impl FaultLevel {
    /// What this level asks the operator to do, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            FaultLevel::NormalNpu => "no fault",
            FaultLevel::NotHandleFault => "informational fault; no action needed",
            FaultLevel::SubHealthFault => "sub-healthy: still usable, watch it and plan maintenance",
            FaultLevel::RestartRequest => "the failed inference request must be retried",
            FaultLevel::RestartBusiness => "the job using the chip must be restarted",
            FaultLevel::FreeRestartNpu => "reset the chip once it is idle (npu-smi set -t reset)",
            FaultLevel::RestartNpu => "reset the chip now (npu-smi set -t reset) or reboot the node",
            FaultLevel::PreSeparateNpu => "isolate the chip once its current workload ends",
            FaultLevel::SeparateNpu => "isolate the chip now; it must not take workloads",
            FaultLevel::ManuallySeparateNpu => "isolated until an operator clears it by hand",
        }
    }
}

impl FaultCode {
    /// The name of a code the stack synthesises ([`FaultCode::CARD_DROP`], [`FaultCode::HANG`]), if it is one.
    pub fn synthesised_name(self) -> Option<&'static str> {
        match self {
            FaultCode::CARD_DROP => Some("card dropped off the PCIe bus or is rebooting"),
            FaultCode::HANG => Some("chip hung: it holds processes but does no work"),
            _ => None,
        }
    }

    /// One line for this code at a level: its name when known, else what its level means.
    pub fn meaning(self, level: FaultLevel) -> String {
        match self.synthesised_name() {
            Some(name) => format!("{name}; {}", level.meaning()),
            None => level.meaning().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_has_a_distinct_meaning() {
        let mut seen = std::collections::BTreeSet::new();
        for level in FaultLevel::ALL {
            assert!(seen.insert(level.meaning()), "{level} repeats a meaning");
        }
    }

    #[test]
    fn synthesised_codes_are_named() {
        let text = FaultCode::CARD_DROP.meaning(FaultLevel::SeparateNpu);
        assert!(text.starts_with("card dropped"), "{text}");
        assert!(text.ends_with("must not take workloads"), "{text}");
        assert_eq!(FaultCode(0x80E0_1801).meaning(FaultLevel::RestartNpu), FaultLevel::RestartNpu.meaning());
    }
}
