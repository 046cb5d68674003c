//! Time from a fault raised in the simulator (the overlay file replaced) to the kubelet's ListAndWatch update that
//! marks the chip Unhealthy; the fault is then cleared and the chip seen Healthy again before the next repeat.
//!
//! The simulator notices an overlay change within 20 ms (its watch period), so every figure includes up to 20 ms
//! of simulator pick-up, the same for both delivery paths.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use dcmi_sim::topology::FaultSpec;
use dcmi_sim::{write_overlay, ChipOverlay, Overlay};

/// A critical fault code (HBM multi-bit ECC: `HbmDoubleBitFaultCode` in Huawei's `Ascend/mind-cluster`,
/// `component/ascend-device-plugin/pkg/common/constants.go`, one of `RestartBusinessCodes` in `build/faultCode.json`
/// there: its policy asks for a restart, so recovery resets the chip), raised with severity 2.
pub const FAULT_CODE: u32 = 0x80E0_1801;
pub const FAULT_HEALTH: u32 = 2;
/// How long the kubelet may take to see a fault or its clearing.
pub const WAIT: Duration = Duration::from_secs(30);

/// One chip of the node: its logic id (what the overlay names) and its advertised device id.
#[derive(Debug, Clone)]
pub struct ChipTarget {
    pub logic_id: u32,
    pub device_id: String,
}

/// Where the measurement runs.
pub struct FaultBench<'a> {
    pub kubelet: &'a FakeKubelet,
    pub resource: &'a str,
    pub overlay: &'a Path,
    pub chips: &'a [ChipTarget],
}

impl FaultBench<'_> {
    /// Raises and clears a fault `repeats` times, cycling through the chips. With `spread`, repeat `k` first
    /// waits `spread * k / repeats` so that the faults land at evenly spread phases of a polling interval
    /// (otherwise each fault would follow a poll tick by the same amount).
    ///
    /// # Errors
    /// The overlay cannot be written, or the kubelet does not see the change within 30 s.
    pub async fn measure(&self, repeats: usize, spread: Option<Duration>) -> Result<Vec<Duration>> {
        let mut latencies = Vec::with_capacity(repeats);
        for repeat in 0..repeats {
            let chip = &self.chips[repeat % self.chips.len()];
            if let Some(interval) = spread {
                tokio::time::sleep(interval.mul_f64(repeat as f64 / repeats as f64)).await;
            }
            let started = Instant::now();
            self.set_fault(chip, true)?;
            self.wait_health(chip, "Unhealthy", WAIT).await?;
            latencies.push(started.elapsed());
            self.set_fault(chip, false)?;
            self.wait_health(chip, "Healthy", WAIT).await?;
        }
        Ok(latencies)
    }

    fn set_fault(&self, chip: &ChipTarget, raised: bool) -> Result<()> {
        let faults = if raised { vec![FaultSpec::Code(FAULT_CODE)] } else { Vec::new() };
        let overlay = Overlay {
            chips: vec![ChipOverlay {
                logic_id: chip.logic_id,
                health: Some(if raised { FAULT_HEALTH } else { 0 }),
                faults: Some(faults),
                ..ChipOverlay::default()
            }],
            injections: Vec::new(),
        };
        write_overlay(self.overlay, &overlay).with_context(|| format!("overlay for logic id {}", chip.logic_id))
    }

    /// Waits up to `within` until the kubelet lists `chip` with `health`.
    pub async fn wait_health(&self, chip: &ChipTarget, health: &str, within: Duration) -> Result<()> {
        let what = format!("{} {health}", chip.device_id);
        self.kubelet
            .wait_until(&what, within, |kubelet| {
                kubelet
                    .devices(self.resource)
                    .unwrap_or_default()
                    .iter()
                    .any(|device| device.id == chip.device_id && device.health == health)
            })
            .await
            .map_err(|error| anyhow!("{error}"))
    }
}
