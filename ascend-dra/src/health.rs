//! Chip health as the cluster sees it: a device taint in the ResourceSlice and an entry on the kubelet's health
//! stream. The health checks themselves are the device plugin's monitor (one health mechanism for both ways of
//! exposing chips: deadlines per DCMI call, fault-event wake-ups, polling).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{DeviceManager, FaultLevel, LogicId};
use ascend_node::inventory::{DeviceKind, Health, Snapshot};
use k8s_openapi::api::resource::v1::DeviceTaint;

/// The taint key of a faulty chip; its value is the fault level (for example `SeparateNPU`).
pub const TAINT_KEY: &str = ascend_kube::UNHEALTHY_TAINT_KEY;

/// How long the fault-level read after a health change may take.
const LEVEL_DEADLINE: Duration = Duration::from_secs(5);

/// One chip's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipHealth {
    /// Whether the chip may take new work.
    pub healthy: bool,
    /// Why not, for people.
    pub reason: String,
    /// The fault level, when the chip is faulty and DCMI could tell.
    pub level: Option<FaultLevel>,
    /// The chip dropped off the bus.
    pub dropped: bool,
}

impl ChipHealth {
    /// A healthy chip.
    pub fn healthy() -> Self {
        ChipHealth { healthy: true, reason: String::new(), level: None, dropped: false }
    }

    /// Whether the fault requires isolating the chip, evicting what runs on it: Huawei's `SeparateNPU` levels and
    /// a chip gone from the bus. Lesser faults (restart levels, `PreSeparateNPU`: isolate once free) only stop new
    /// work.
    pub fn requires_isolation(&self) -> bool {
        self.dropped || self.level.is_some_and(|level| level >= FaultLevel::SeparateNpu)
    }

    /// The device taint: `NoExecute` when the chip must be isolated, `NoSchedule` otherwise; none when healthy.
    pub fn taint(&self) -> Option<DeviceTaint> {
        if self.healthy {
            return None;
        }
        let value = match (self.dropped, self.level) {
            (true, _) => "CardDropped".to_owned(),
            (false, Some(level)) => level.name().to_owned(),
            (false, None) => "Unknown".to_owned(),
        };
        Some(DeviceTaint {
            key: TAINT_KEY.to_owned(),
            value: Some(value),
            effect: if self.requires_isolation() { "NoExecute" } else { "NoSchedule" }.to_owned(),
            time_added: None,
        })
    }
}

/// Health per physical id from a monitor snapshot (whole chips only).
pub fn health_from_snapshot(snapshot: &Snapshot) -> BTreeMap<u32, (LogicId, Health)> {
    snapshot
        .resources()
        .flat_map(|resource| resource.devices.values())
        .filter(|device| matches!(device.kind, DeviceKind::Chip { .. }))
        .map(|device| (device.chip.phy.get(), (device.chip.logic, device.health.clone())))
        .collect()
}

/// Completes the monitor's verdict with the fault level, read from DCMI on a blocking thread with a deadline (only
/// when a chip turns unhealthy, so the hot path stays the monitor's).
pub async fn grade(manager: &Arc<dyn DeviceManager>, logic: LogicId, health: &Health) -> ChipHealth {
    let reason = match health {
        Health::Healthy => return ChipHealth::healthy(),
        Health::Unhealthy(reason) => reason.clone(),
    };
    let dropped = reason.contains("card dropped");
    let manager = Arc::clone(manager);
    let read = tokio::task::spawn_blocking(move || manager.health(logic));
    let level = match tokio::time::timeout(LEVEL_DEADLINE, read).await {
        Ok(Ok(Ok(report))) => Some(report.level),
        _ => None,
    };
    ChipHealth { healthy: false, reason, level, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faulty(level: Option<FaultLevel>, dropped: bool) -> ChipHealth {
        ChipHealth { healthy: false, reason: "test".into(), level, dropped }
    }

    #[test]
    fn isolating_faults_evict_and_the_rest_only_stop_new_work() {
        assert_eq!(ChipHealth::healthy().taint(), None);
        let taint = faulty(Some(FaultLevel::SeparateNpu), false).taint().unwrap();
        assert_eq!((taint.effect.as_str(), taint.value.as_deref()), ("NoExecute", Some("SeparateNPU")));
        let taint = faulty(Some(FaultLevel::RestartNpu), false).taint().unwrap();
        assert_eq!((taint.effect.as_str(), taint.value.as_deref()), ("NoSchedule", Some("RestartNPU")));
        let taint = faulty(None, true).taint().unwrap();
        assert_eq!((taint.effect.as_str(), taint.value.as_deref()), ("NoExecute", Some("CardDropped")));
        assert_eq!(faulty(None, false).taint().unwrap().effect, "NoSchedule");
        assert_eq!(faulty(Some(FaultLevel::PreSeparateNpu), false).taint().unwrap().effect, "NoSchedule");
    }
}
