//! One-line meanings of fault levels and of the fault codes the stack synthesises itself.
//!
//! The driver's own fault codes number in the hundreds and their texts belong to Huawei's fault reference; what a
//! code means for the operator is captured by the level the fault policy grades it to, so a code without a known
//! name is explained by its level.

use ascend_dcmi::{FaultCode, FaultLevel};

/// What a fault level asks the operator to do, in one line.
pub fn level_meaning(level: FaultLevel) -> &'static str {
    match level {
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

/// The name of a code the stack synthesises, if it is one.
pub fn synthesised_code_name(code: FaultCode) -> Option<&'static str> {
    match code {
        FaultCode::CARD_DROP => Some("card dropped off the PCIe bus or is rebooting"),
        FaultCode::HANG => Some("chip hung: it holds processes but does no work"),
        _ => None,
    }
}

/// One line for a fault code at a level: its name when known, else what its level means.
pub fn code_meaning(code: FaultCode, level: FaultLevel) -> String {
    match synthesised_code_name(code) {
        Some(name) => format!("{name}; {}", level_meaning(level)),
        None => level_meaning(level).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_has_a_distinct_meaning() {
        let mut seen = std::collections::BTreeSet::new();
        for level in FaultLevel::ALL {
            assert!(seen.insert(level_meaning(level)), "{level} repeats a meaning");
        }
    }

    #[test]
    fn synthesised_codes_are_named() {
        let text = code_meaning(FaultCode::CARD_DROP, FaultLevel::SeparateNpu);
        assert!(text.starts_with("card dropped"), "{text}");
        assert!(text.ends_with("must not take workloads"), "{text}");
        assert_eq!(code_meaning(FaultCode(0x80E0_1801), FaultLevel::RestartNpu), level_meaning(FaultLevel::RestartNpu));
    }
}
