//! A chip's ECC counters (`[card.chip.ecc]` of a topology, `ecc` of an overlay; public as `topology::Ecc`).

use serde::{Deserialize, Serialize};

/// `[card.chip.ecc]`: ECC counters, named as in `struct dcmi_ecc_info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct Ecc {
    /// ECC enabled (default true).
    pub enable_flag: bool,
    pub single_bit_error_cnt: u32,
    pub double_bit_error_cnt: u32,
    pub total_single_bit_error_cnt: u32,
    pub total_double_bit_error_cnt: u32,
    pub single_bit_isolated_pages_cnt: u32,
    pub double_bit_isolated_pages_cnt: u32,
    pub single_bit_next_isolated_pages_cnt: u32,
    pub double_bit_next_isolated_pages_cnt: u32,
}

impl Default for Ecc {
    fn default() -> Self {
        Self {
            enable_flag: true,
            single_bit_error_cnt: 0,
            double_bit_error_cnt: 0,
            total_single_bit_error_cnt: 0,
            total_double_bit_error_cnt: 0,
            single_bit_isolated_pages_cnt: 0,
            double_bit_isolated_pages_cnt: 0,
            single_bit_next_isolated_pages_cnt: 0,
            double_bit_next_isolated_pages_cnt: 0,
        }
    }
}
