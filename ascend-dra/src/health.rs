//! Chip health as the cluster sees it: a device taint in the ResourceSlice and an entry on the kubelet's health
//! stream. Both are read from the node layer's verdict ([`ascend_node::Health`], with its
//! [`ascend_node::UnhealthyCause`]) in the monitor's snapshot, the same verdict the device plugin reports: the driver
//! asks DCMI nothing more about a chip's health and parses no message text. The health checks themselves are the
//! monitor's (deadlines per DCMI call, fault-event wake-ups, polling).

use ascend_node::{Health, UnhealthyCause};
use dra_kubelet_plugin::HealthStatus;
use k8s_openapi::api::resource::v1::DeviceTaint;

/// The taint value of a chip whose card dropped off the bus.
pub const CARD_DROPPED: &str = "CardDropped";
/// The taint value of a chip unhealthy for a cause that says nothing of its faults (its health call failed or hangs,
/// the chips cannot be listed, it has not been checked yet).
pub const UNKNOWN_LEVEL: &str = "Unknown";
/// The taint value of a chip recovery has withdrawn while it, or a chip of its reset group, is reset.
pub const RECOVERING: &str = "Recovering";

/// The device taint of a chip, key `ascend_kube::UNHEALTHY_TAINT_KEY`: none when healthy; `NoExecute` when its cause
/// requires isolating the chip, evicting what runs on it ([`UnhealthyCause::requires_isolation`]: Huawei's
/// `SeparateNPU` levels and a card gone from the bus), `NoSchedule` otherwise (lesser faults, a chip being reset and causes of unknown gravity only stop new work).
/// The value is [`CARD_DROPPED`], [`RECOVERING`], the fault level's name, or [`UNKNOWN_LEVEL`].
pub fn taint(health: &Health) -> Option<DeviceTaint> {
    let cause = health.cause()?;
    let value = match cause.level() {
        _ if cause.card_dropped() => CARD_DROPPED.to_owned(),
        _ if *cause == UnhealthyCause::Recovering => RECOVERING.to_owned(),
        Some(level) => level.name().to_owned(),
        None => UNKNOWN_LEVEL.to_owned(),
    };
    Some(DeviceTaint {
        key: ascend_kube::UNHEALTHY_TAINT_KEY.to_owned(),
        value: Some(value),
        effect: if cause.requires_isolation() { "NoExecute" } else { "NoSchedule" }.to_owned(),
        time_added: None,
    })
}

/// The chip's entry on the kubelet's health stream: `Unknown` until the monitor has checked it, then `Healthy`, or
/// `Unhealthy` with the cause for people.
pub fn stream_status(health: &Health) -> (HealthStatus, String) {
    match health {
        Health::Healthy => (HealthStatus::Healthy, String::new()),
        Health::Unhealthy(UnhealthyCause::NotChecked) => (HealthStatus::Unknown, "not checked yet".to_owned()),
        Health::Unhealthy(cause) => (HealthStatus::Unhealthy, cause.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ascend_dcmi::{FaultCode, FaultLevel};

    use super::*;

    fn faulty(level: FaultLevel, card_dropped: bool) -> Health {
        Health::Unhealthy(UnhealthyCause::Faulty { level, faults: vec![FaultCode(0x80E0_1801)], card_dropped })
    }

    fn effect_and_value(health: &Health) -> (String, String) {
        let taint = taint(health).expect("a taint");
        (taint.effect, taint.value.unwrap_or_default())
    }

    #[test]
    fn isolating_faults_evict_and_the_rest_only_stop_new_work() {
        assert_eq!(taint(&Health::Healthy), None);
        let pair = |effect: &str, value: &str| (effect.to_owned(), value.to_owned());
        assert_eq!(effect_and_value(&faulty(FaultLevel::SeparateNpu, false)), pair("NoExecute", "SeparateNPU"));
        assert_eq!(effect_and_value(&faulty(FaultLevel::RestartNpu, false)), pair("NoSchedule", "RestartNPU"));
        assert_eq!(effect_and_value(&faulty(FaultLevel::RestartNpu, true)), pair("NoExecute", "CardDropped"));
        assert_eq!(effect_and_value(&faulty(FaultLevel::PreSeparateNpu, false)), pair("NoSchedule", "PreSeparateNPU"));
        let separated = Health::Unhealthy(UnhealthyCause::Separated);
        assert_eq!(effect_and_value(&separated), pair("NoExecute", "ManuallySeparateNPU"));
        let hung = Health::Unhealthy(UnhealthyCause::Hung(Duration::from_secs(2)));
        assert_eq!(effect_and_value(&hung), pair("NoSchedule", "Unknown"));
        let failed = Health::Unhealthy(UnhealthyCause::HealthCallFailed("-8005".into()));
        assert_eq!(effect_and_value(&failed), pair("NoSchedule", "Unknown"));
    }

    #[test]
    fn the_health_stream_says_unknown_until_checked_and_gives_the_cause() {
        assert_eq!(stream_status(&Health::Unhealthy(UnhealthyCause::NotChecked)).0, HealthStatus::Unknown);
        assert_eq!(stream_status(&Health::Healthy), (HealthStatus::Healthy, String::new()));
        let (status, message) = stream_status(&faulty(FaultLevel::SeparateNpu, true));
        assert_eq!(status, HealthStatus::Unhealthy);
        assert_eq!(message, "fault level SeparateNPU, faults 80E01801, card dropped off the bus");
    }
}
