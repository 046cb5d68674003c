//! Telling more than one party what recovery did: a daemon records Node Events and counts metrics from the same
//! [`RecoveryObserver`] calls.

use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::ChipIds;

use super::planner::HeldOut;
use super::runner::RecoveryObserver;

/// Every observer of the list hears every call, in order.
#[derive(Clone, Default)]
pub struct RecoveryObservers(Vec<Arc<dyn RecoveryObserver>>);

impl RecoveryObservers {
    /// No observer yet.
    pub fn new() -> Self {
        RecoveryObservers::default()
    }

    /// `observer` hears the calls too.
    #[must_use]
    pub fn with(mut self, observer: Arc<dyn RecoveryObserver>) -> Self {
        self.0.push(observer);
        self
    }
}

impl std::fmt::Debug for RecoveryObservers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryObservers").field("count", &self.0.len()).finish()
    }
}

impl RecoveryObserver for RecoveryObservers {
    fn reset_started(&self, chip: ChipIds, group: &[ChipIds]) {
        self.0.iter().for_each(|observer| observer.reset_started(chip, group));
    }

    fn reset_finished(&self, chip: ChipIds, outcome: &Result<Duration, String>) {
        self.0.iter().for_each(|observer| observer.reset_finished(chip, outcome));
    }

    fn reset_aborted(&self, chip: ChipIds, taken: &[ChipIds]) {
        self.0.iter().for_each(|observer| observer.reset_aborted(chip, taken));
    }

    fn held_out(&self, chip: ChipIds, why: &HeldOut) {
        self.0.iter().for_each(|observer| observer.held_out(chip, why));
    }

    fn held_out_now(&self, chips: &[ChipIds]) {
        self.0.iter().for_each(|observer| observer.held_out_now(chips));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ascend_dcmi::{LogicId, PhyId};

    use super::*;

    #[derive(Default)]
    struct Calls(Mutex<Vec<String>>);

    impl RecoveryObserver for Calls {
        fn reset_started(&self, chip: ChipIds, _group: &[ChipIds]) {
            self.0.lock().unwrap().push(format!("started {}", chip.phy));
        }
        fn held_out(&self, chip: ChipIds, _why: &HeldOut) {
            self.0.lock().unwrap().push(format!("held out {}", chip.phy));
        }
    }

    #[test]
    fn every_observer_hears_every_call() {
        let (first, second) = (Arc::new(Calls::default()), Arc::new(Calls::default()));
        let observers = RecoveryObservers::new().with(first.clone()).with(second.clone());
        let chip = ChipIds { logic: LogicId(1), phy: PhyId(3), locator: None };
        observers.reset_started(chip, &[chip]);
        observers.held_out(chip, &HeldOut::BudgetUsed);
        for calls in [first, second] {
            assert_eq!(*calls.0.lock().unwrap(), ["started 3", "held out 3"]);
        }
    }
}
