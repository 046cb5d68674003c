//! Shared test fixtures.

pub mod fake_host;
pub mod golden;
