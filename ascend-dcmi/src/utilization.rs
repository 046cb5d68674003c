//! Utilisation: which of DCMI's three ways of asking works, learned once, and which kinds a chip lacks.
//!
//! The AI-core family of kinds (AI core, vector core, AI cube, NPU overall) can come from one call: first
//! `dcmi_get_device_multi_utilization_rate_period`, then `dcmi_get_device_multi_utilization_rate`, then one
//! `dcmi_get_device_utilization_rate` per kind. The first that works is remembered for the handle. The other kinds
//! only have the single call. A single call answering -8255 is remembered per chip and kind, and never made again.

use std::collections::HashSet;

use parking_lot::Mutex;

use dcmi_sys::dcmi_multi_utilization_info;

use crate::api_family::ApiFamily;
use crate::error::{CallContext, Error, Result};
use crate::ffi::{LoadedLibrary, Target};
use crate::ids::LogicId;
use crate::telemetry::UtilizationKind;
use crate::units::Percent;

/// The `period` passed to the period call (the vendor passes 1).
const UTILIZATION_PERIOD: i32 = 1;

/// The DCMI call a handle uses for the AI-core family of utilisation kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UtilizationMethod {
    /// `dcmi_get_device_multi_utilization_rate_period`.
    MultiPeriod,
    /// `dcmi_get_device_multi_utilization_rate`.
    Multi,
    /// One `dcmi_get_device_utilization_rate` per kind.
    Single,
}

/// What a handle has learned about utilisation calls.
#[derive(Debug, Default)]
pub(crate) struct UtilizationCache {
    method: Mutex<Option<UtilizationMethod>>,
    unsupported: Mutex<HashSet<(LogicId, UtilizationKind)>>,
}

impl UtilizationCache {
    pub fn method(&self) -> Option<UtilizationMethod> {
        *self.method.lock()
    }

    /// One utilisation reading.
    pub fn read(
        &self,
        library: &LoadedLibrary,
        target: Target,
        logic: LogicId,
        kind: UtilizationKind,
    ) -> Result<Percent> {
        let call = match library.family() {
            ApiFamily::V1 => "dcmi_get_device_utilization_rate",
            ApiFamily::V2 => "dcmiv2_get_device_utilization_rate",
        };
        let single_context = CallContext { call, chip: target.locator, logic: Some(logic) };
        if self.unsupported.lock().contains(&(logic, kind)) {
            return Err(Error::NotSupported(single_context));
        }
        if let Some(field) = multi_field(kind) {
            if let Some(info) = self.read_multi(library, target)? {
                return percent(field(&info), single_context);
            }
        }
        match library.utilization(target, kind.raw()) {
            Ok(raw) => percent(raw, single_context),
            Err(error) => {
                if matches!(error, Error::NotSupported(_)) {
                    self.unsupported.lock().insert((logic, kind));
                }
                Err(error)
            }
        }
    }

    /// The multi-call answer, or `None` when this handle uses single calls. Probes on first use; only an
    /// "unsupported" answer (-8255 or a missing symbol) moves the probe on, other errors are returned unremembered.
    fn read_multi(&self, library: &LoadedLibrary, target: Target) -> Result<Option<dcmi_multi_utilization_info>> {
        let known = self.method();
        let order: &[UtilizationMethod] = match known {
            Some(UtilizationMethod::Single) => return Ok(None),
            Some(UtilizationMethod::Multi) => &[UtilizationMethod::Multi],
            Some(UtilizationMethod::MultiPeriod) => &[UtilizationMethod::MultiPeriod],
            None => &[UtilizationMethod::MultiPeriod, UtilizationMethod::Multi],
        };
        for method in order {
            let answer = match method {
                UtilizationMethod::MultiPeriod => library.multi_utilization_period(target, UTILIZATION_PERIOD),
                _ => library.multi_utilization(target),
            };
            match answer {
                Ok(info) => {
                    *self.method.lock() = Some(*method);
                    return Ok(Some(info));
                }
                Err(error) if error.is_unsupported() && known.is_none() => continue,
                Err(error) => return Err(error),
            }
        }
        *self.method.lock() = Some(UtilizationMethod::Single);
        Ok(None)
    }
}

/// The field of the multi-call struct that holds a kind, for the kinds it holds.
fn multi_field(kind: UtilizationKind) -> Option<fn(&dcmi_multi_utilization_info) -> u32> {
    match kind {
        UtilizationKind::AiCore => Some(|info| info.aicore_util),
        UtilizationKind::VectorCore => Some(|info| info.aiv_util),
        UtilizationKind::AiCube => Some(|info| info.aic_util),
        UtilizationKind::Overall => Some(|info| info.npu_util),
        _ => None,
    }
}

fn percent(raw: u32, context: CallContext) -> Result<Percent> {
    Percent::new(raw)
        .ok_or_else(|| Error::InvalidValue { context, detail: format!("utilisation {raw} is not a percentage") })
}
