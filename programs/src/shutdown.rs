//! The stop signals the daemons honour; the one implementation lives in [`ascend_cli::signal`].

pub use ascend_cli::signal::termination;
