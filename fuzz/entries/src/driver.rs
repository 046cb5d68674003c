//! What comes from the driver's side: the operator's `faultCode.json` and the strings and structs DCMI returns.

use std::path::Path;

use ascend_dcmi::FaultPolicy;

use crate::text;

/// `faultCode.json`, as `FaultPolicy::from_file` reads it; every listed code is graded by the policy.
pub fn fault_code_json(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(policy) = FaultPolicy::from_json(text, Path::new("faultCode.json")) {
        assert!(policy.len() <= text.len(), "{} codes from {} bytes", policy.len(), text.len());
    }
}

/// DCMI's fixed string buffers and the texts decoded from them (see `ascend_dcmi::fuzzing`).
pub fn driver_output(data: &[u8]) {
    ascend_dcmi::fuzzing::driver_output(data);
}

/// The structs and lists the V2 calls fill, with counts the driver may get wrong (see `ascend_dcmi::fuzzing`).
pub fn driver_v2_output(data: &[u8]) {
    ascend_dcmi::fuzzing::driver_v2_output(data);
}
