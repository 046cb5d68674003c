//! Loading the driver library (`libdcmi.so`), once or until it works: the one way every node program does it.
//!
//! A daemon that starts with its node may start before the driver is installed or its directory mounted; such
//! daemons wait with [`load_driver_until`] and advertise nothing meanwhile. One-shot programs use [`load_driver`] and
//! report the error.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use ascend_dcmi::{Dcmi, DcmiBuilder};

use crate::error::{Error, Result};

/// Where the driver library is, how far to trust it and how long its calls may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverOptions {
    /// Load exactly this `libdcmi.so` instead of searching the standard places.
    pub library: Option<PathBuf>,
    /// Where the host's `/` is mounted.
    pub host_root: PathBuf,
    /// Refuse a library that is not root-owned and read-only (off only for test builds).
    pub verify_library_ownership: bool,
    /// The deadline of one DCMI call (`None`: ascend-dcmi's default).
    pub call_deadline: Option<Duration>,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            library: None,
            host_root: PathBuf::from("/"),
            verify_library_ownership: true,
            call_deadline: None,
        }
    }
}

impl DriverOptions {
    /// The `ascend-dcmi` builder these options describe.
    pub fn builder(&self) -> DcmiBuilder {
        let mut builder =
            Dcmi::builder().host_root(self.host_root.clone()).verify_library_ownership(self.verify_library_ownership);
        if let Some(library) = &self.library {
            builder = builder.library_path(library.clone());
        }
        if let Some(deadline) = self.call_deadline {
            builder = builder.call_deadline(deadline);
        }
        builder
    }
}

/// Loads `libdcmi.so` once, on a blocking thread, and logs its version and path.
///
/// # Errors
/// [`Error::Driver`] naming the library problem, [`Error::DriverThread`] if the loading thread failed.
pub async fn load_driver(options: &DriverOptions) -> Result<Dcmi> {
    let builder = options.builder();
    let dcmi = tokio::task::spawn_blocking(move || builder.init())
        .await
        .map_err(|error| Error::DriverThread(error.to_string()))?
        .map_err(|source| Error::Driver { source })?;
    let version = dcmi.driver_version().unwrap_or_else(|error| format!("unknown ({error})"));
    tracing::info!(%version, library = %dcmi.library_path().display(), "driver loaded");
    Ok(dcmi)
}

/// Loads the driver, trying again every `retry` until it works; `None` when `shutdown` completes first.
pub async fn load_driver_until(
    options: &DriverOptions,
    retry: Duration,
    shutdown: impl Future<Output = ()>,
) -> Option<Dcmi> {
    tokio::pin!(shutdown);
    let mut attempt: u64 = 0;
    loop {
        attempt += 1;
        let loading = tokio::select! {
            loading = load_driver(options) => loading,
            () = &mut shutdown => return None,
        };
        match loading {
            Ok(dcmi) => return Some(dcmi),
            Err(error) => {
                tracing::error!(%error, attempt, retry_in = ?retry, "no usable Ascend driver on this node; retrying")
            }
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            () = &mut shutdown => return None,
        }
    }
}
