//! How recovery runs: its mode and limits.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::limiter::Budget;

/// When faulty chips are reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Never (Huawei's `-hotReset=-1`, its default and ours).
    #[default]
    Off,
    /// Once the chip's reset group is free (Huawei's `-hotReset=0`).
    Inference,
    /// Once no chip of the node is held: a training job's chips are reset after the whole job has ended (Huawei's
    /// `-hotReset=2`).
    OfflineTraining,
}

impl RecoveryMode {
    /// The spelling of flags and Helm values.
    pub const fn as_str(self) -> &'static str {
        match self {
            RecoveryMode::Off => "off",
            RecoveryMode::Inference => "inference",
            RecoveryMode::OfflineTraining => "offline-training",
        }
    }
}

impl fmt::Display for RecoveryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A recovery mode that is not one of the known spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown recovery mode {0:?}: use off, inference or offline-training (Huawei's -hotReset values -1, 0 and 2 are accepted too)")]
pub struct UnknownRecoveryMode(String);

impl FromStr for RecoveryMode {
    type Err = UnknownRecoveryMode;

    /// `off`, `inference`, `offline-training`, or Huawei's numbers `-1`, `0`, `2` for operators bringing their flags.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "off" | "-1" => Ok(RecoveryMode::Off),
            "inference" | "0" => Ok(RecoveryMode::Inference),
            "offline-training" | "2" => Ok(RecoveryMode::OfflineTraining),
            other => Err(UnknownRecoveryMode(other.to_owned())),
        }
    }
}

/// How recovery runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryConfig {
    /// When chips are reset.
    pub mode: RecoveryMode,
    /// How long a chip's reset group must have been free (default 60 s, as Huawei's).
    pub idle: Duration,
    /// Resets per chip (default 3 per 6 hours, as Huawei's); a chip that has used them stays out.
    pub per_chip: Budget,
    /// Resets per node (default 8 per hour): a node whose chips keep faulting is not reset over and over.
    pub per_node: Budget,
    /// How long the boot after a reset may take (default 180 s, as Huawei's).
    pub boot_timeout: Duration,
    /// A chip that faults again within this time after its reset stays out (default 10 minutes).
    pub refault_window: Duration,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            mode: RecoveryMode::Off,
            idle: Duration::from_secs(60),
            per_chip: Budget { capacity: 3, refill: Duration::from_secs(6 * 3600) },
            per_node: Budget { capacity: 8, refill: Duration::from_secs(3600) },
            boot_timeout: Duration::from_secs(180),
            refault_window: Duration::from_secs(600),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_our_spelling_and_huaweis_numbers_and_anything_else_is_named() {
        for mode in [RecoveryMode::Off, RecoveryMode::Inference, RecoveryMode::OfflineTraining] {
            assert_eq!(mode.as_str().parse::<RecoveryMode>(), Ok(mode));
        }
        assert_eq!("-1".parse::<RecoveryMode>(), Ok(RecoveryMode::Off));
        assert_eq!("2".parse::<RecoveryMode>(), Ok(RecoveryMode::OfflineTraining));
        let error = "1".parse::<RecoveryMode>().unwrap_err().to_string();
        assert!(error.contains("\"1\"") && error.contains("offline-training"), "{error}");
    }
}
