//! Time to recover: a fault that asks for a restart, raised on a free chip of a plugin run with
//! `--recovery-mode=inference`, until the kubelet's ListAndWatch lists the chip Healthy again after the plugin reset
//! it (withdrawn with its reset group, reset through DCMI, booted, read healthy).
//!
//! What the figure holds: the idle time the operator sets (`--recovery-idle`), the wait before the reset for the
//! kubelet to see the group withdrawn (2 s), the simulator's reset and boot (`reset_duration_ms`, 500 ms; a real
//! chip takes far longer, up to Huawei's 180 s boot wait) and the plugin's own reaction between them. The monitor
//! polls at its default 5 s, as a deployed plugin does.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use dcmi_sim::topology::FaultSpec;
use dcmi_sim::{write_overlay, ChipOverlay, Overlay};

use crate::fault_latency::{ChipTarget, FaultBench, FAULT_CODE, FAULT_HEALTH};

/// How long a recovery may take: the idle time, the withdrawal and the boot come on top of the fault's pick-up.
const WAIT: Duration = Duration::from_secs(60);

/// One recovery: from the fault to the chip listed Unhealthy, and to the chip listed Healthy again.
#[derive(Debug, Clone, Copy)]
pub struct Recovery {
    pub unhealthy: Duration,
    pub back: Duration,
}

impl FaultBench<'_> {
    /// Raises the restart fault `repeats` times, each on the next chip (a chip that faults again soon after its
    /// reset is held out, by design), and times each recovery; every chip runs no process, so only the fault keeps
    /// one out. The plugin must run recovery: nothing here clears the fault but its reset.
    ///
    /// # Errors
    /// The overlay cannot be written, or the kubelet does not see a change within 60 s.
    pub async fn measure_recoveries(&self, repeats: usize) -> Result<Vec<Recovery>> {
        let mut recoveries = Vec::with_capacity(repeats);
        for repeat in 0..repeats {
            let chip = &self.chips[repeat % self.chips.len()];
            let started = Instant::now();
            self.write_idle_node(Some(chip))?;
            self.wait_health(chip, "Unhealthy", WAIT).await?;
            let unhealthy = started.elapsed();
            self.wait_health(chip, "Healthy", WAIT).await?;
            recoveries.push(Recovery { unhealthy, back: started.elapsed() });
            self.write_idle_node(None)?;
        }
        Ok(recoveries)
    }

    /// The overlay: no process on any chip, and the restart fault on `faulty`.
    fn write_idle_node(&self, faulty: Option<&ChipTarget>) -> Result<()> {
        let chips = self
            .chips
            .iter()
            .map(|chip| {
                let raised = faulty.is_some_and(|faulty| faulty.logic_id == chip.logic_id);
                ChipOverlay {
                    logic_id: chip.logic_id,
                    processes: Some(Vec::new()),
                    health: raised.then_some(FAULT_HEALTH),
                    faults: raised.then(|| vec![FaultSpec::Code(FAULT_CODE)]),
                    ..ChipOverlay::default()
                }
            })
            .collect();
        write_overlay(self.overlay, &Overlay { chips, injections: Vec::new() }).context("writing the overlay")
    }
}
