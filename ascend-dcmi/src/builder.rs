//! [`DcmiBuilder`]: how the library is found, checked and loaded, and the settings the handle carries.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::dcmi::{Dcmi, Settings};
use crate::discovery::{self, SearchInputs};
use crate::error::{Error, Result};
use crate::fault_policy::FaultPolicy;
use crate::ffi::LoadedLibrary;
use crate::library_check::check_library;

/// The default per-call deadline: the vendor's tools give DCMI calls one second.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(1);

/// The default number of DCMI calls allowed in flight on worker threads at once. The library is documented to
/// refuse heavy concurrent use ("anti-attack protection"), so this is small.
pub const DEFAULT_WORKER_CONCURRENCY: usize = 4;

impl Dcmi {
    /// Finds, checks and loads `libdcmi.so` with the default settings.
    ///
    /// # Errors
    /// See [`DcmiBuilder::init`].
    pub fn init() -> Result<Dcmi> {
        DcmiBuilder::default().init()
    }

    /// A builder for the other settings: library path, host root, ownership check, deadline, concurrency, policy.
    pub fn builder() -> DcmiBuilder {
        DcmiBuilder::default()
    }
}

/// Builds a [`Dcmi`] handle; [`Dcmi::init`] is `DcmiBuilder::default().init()`.
///
/// ```no_run
/// use std::time::Duration;
/// use ascend_dcmi::Dcmi;
///
/// let dcmi = Dcmi::builder()
///     .host_root("/host")
///     .call_deadline(Duration::from_millis(500))
///     .worker_concurrency(2)
///     .init()?;
/// # Ok::<(), ascend_dcmi::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `init` is called"]
pub struct DcmiBuilder {
    library_path: Option<PathBuf>,
    host_root: Option<PathBuf>,
    verify_ownership: bool,
    call_deadline: Duration,
    worker_concurrency: usize,
    fault_policy: Option<FaultPolicy>,
}

impl Default for DcmiBuilder {
    fn default() -> Self {
        Self {
            library_path: None,
            host_root: None,
            verify_ownership: true,
            call_deadline: DEFAULT_CALL_DEADLINE,
            worker_concurrency: DEFAULT_WORKER_CONCURRENCY,
            fault_policy: None,
        }
    }
}

impl DcmiBuilder {
    /// Loads exactly this file instead of searching (no fallback to other places).
    pub fn library_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.library_path = Some(path.into());
        self
    }

    /// Where the host's `/` is mounted (for example `/host` in a container). It is put in front of the `ldconfig`
    /// cache, the standard driver directories and the `/sys` paths read for NUMA placement.
    pub fn host_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.host_root = Some(root.into());
        self
    }

    /// Whether to refuse a library that root does not own or that group or others can write (default `true`, as in
    /// the vendor's tools). Turn it off only for a library you trust by other means, such as a test build.
    pub fn verify_library_ownership(mut self, verify: bool) -> Self {
        self.verify_ownership = verify;
        self
    }

    /// The deadline of one DCMI call run on a worker thread (see [`Dcmi::call_with_deadline`]); default one second.
    pub fn call_deadline(mut self, deadline: Duration) -> Self {
        self.call_deadline = deadline;
        self
    }

    /// How many DCMI calls may run on worker threads at once (at least one; default 4). A call that hangs keeps its
    /// worker until it returns, so this also bounds the threads a dead card can hold.
    pub fn worker_concurrency(mut self, workers: usize) -> Self {
        self.worker_concurrency = workers.max(1);
        self
    }

    /// The policy that grades fault codes (default: [`FaultPolicy::default`]).
    pub fn fault_policy(mut self, policy: FaultPolicy) -> Self {
        self.fault_policy = Some(policy);
        self
    }

    /// The paths [`Self::init`] would try, in order (reads the environment and the `ldconfig` cache).
    pub fn candidate_paths(&self) -> Vec<PathBuf> {
        discovery::candidates(&self.search_inputs())
    }

    fn search_inputs(&self) -> SearchInputs {
        SearchInputs::from_environment(self.library_path.clone(), self.host_root.clone())
    }

    /// Finds, checks and loads the library, then calls `dcmi_init`.
    ///
    /// The first candidate that exists and passes the ownership check is loaded.
    ///
    /// # Errors
    /// * [`Error::UnsafeLibrary`] when candidates exist but none passes the ownership check (the first violation);
    /// * [`Error::LibraryNotFound`] listing every path searched when none exists;
    /// * [`Error::LibraryLoad`] when `dlopen` fails;
    /// * [`Error::FunctionMissing`]`("dcmi_init")` or [`Error::InitFailed`] when initialisation fails.
    pub fn init(self) -> Result<Dcmi> {
        let candidates = self.candidate_paths();
        let mut first_violation: Option<Error> = None;
        for candidate in &candidates {
            if !discovery::exists(candidate) {
                continue;
            }
            let path = if self.verify_ownership {
                match check_library(candidate) {
                    Ok(resolved) => resolved,
                    Err(violation) => {
                        first_violation.get_or_insert(violation);
                        continue;
                    }
                }
            } else {
                candidate.clone()
            };
            return self.load(&path);
        }
        Err(first_violation.unwrap_or(Error::LibraryNotFound { searched: candidates }))
    }

    fn load(self, path: &Path) -> Result<Dcmi> {
        let library = LoadedLibrary::open(path)?;
        library.init()?;
        let settings = Settings {
            call_deadline: self.call_deadline,
            worker_concurrency: self.worker_concurrency,
            host_root: self.host_root,
        };
        Ok(Dcmi::from_parts(library, settings, self.fault_policy.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_explicit_library_is_not_found_naming_the_path() {
        let error = DcmiBuilder::default().library_path("/nonexistent/libdcmi.so").init().expect_err("missing");
        match error {
            Error::LibraryNotFound { searched } => assert_eq!(searched, [PathBuf::from("/nonexistent/libdcmi.so")]),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn settings_have_safe_defaults_and_floors() {
        let builder = DcmiBuilder::default().worker_concurrency(0);
        assert_eq!(builder.worker_concurrency, 1);
        assert!(builder.verify_ownership);
        assert_eq!(builder.call_deadline, DEFAULT_CALL_DEADLINE);
        let explicit = builder.library_path("/opt/driver/libdcmi.so");
        assert_eq!(explicit.candidate_paths(), [PathBuf::from("/opt/driver/libdcmi.so")]);
    }
}
