//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod doctor_host;
pub mod mock_host;
pub mod snapshot;
pub mod topology;
