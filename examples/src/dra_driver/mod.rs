//! `ascend-dra-driver`: flags, driver and API-server set-up, `/healthz` and `/metrics`, around
//! [`ascend_dra::run`].

pub mod cli;
pub mod daemon;
