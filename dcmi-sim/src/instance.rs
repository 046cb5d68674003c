//! The process-wide simulator instance behind the exported functions, and `dcmi_init`'s loading.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::error::Error;
use crate::overlay::OVERLAY_ENV;
use crate::samples;
use crate::state::Sim;
use crate::topology::Topology;

/// Environment variable naming the topology file (or `sample:<name>` for an embedded sample).
pub const CONFIG_ENV: &str = "DCMI_SIM_CONFIG";

static CURRENT: RwLock<Option<Arc<Sim>>> = parking_lot::const_rwlock(None);
static LAST_ERROR: Mutex<Option<String>> = parking_lot::const_mutex(None);
static CURRENT_SOURCE: Mutex<Option<Source>> = parking_lot::const_mutex(None);

/// What an instance was built from: the environment values and the topology file's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    config: String,
    overlay: Option<std::ffi::OsString>,
    file: Option<(std::time::SystemTime, u64)>,
}

impl Source {
    fn from_env(config: &str) -> Source {
        let file =
            std::fs::metadata(config).ok().and_then(|metadata| Some((metadata.modified().ok()?, metadata.len())));
        Source { config: config.to_owned(), overlay: std::env::var_os(OVERLAY_ENV), file }
    }
}

/// The running instance, if `dcmi_init` succeeded.
pub fn current() -> Option<Arc<Sim>> {
    CURRENT.read().clone()
}

/// The message of the last failed `dcmi_init` (cleared by a successful one).
pub fn last_error() -> Option<String> {
    LAST_ERROR.lock().clone()
}

/// Loads the topology named by `value`: a file path, or `sample:<name>`; returns it with its origin.
///
/// # Errors
/// [`Error`] naming the file, field and problem.
pub fn load_config(value: &str) -> Result<(Topology, PathBuf), Error> {
    let origin = match value.strip_prefix("sample:").and_then(samples::by_name) {
        Some(sample) => sample.origin(),
        None => PathBuf::from(value),
    };
    Ok((samples::load_file_or_sample(value)?, origin))
}

/// What `dcmi_init` does: read `DCMI_SIM_CONFIG` (and `DCMI_SIM_OVERLAY`), build a fresh instance
/// and make it current, replacing any previous one. When both variables and the topology file are
/// unchanged since the running instance was built, that instance stays (a consumer that calls
/// `dcmi_init` again, as the Go stack's retry loop does, keeps the timeline and injected state). On
/// failure the message goes to stderr (one line) and to [`last_error`], and the previous instance is
/// removed.
///
/// # Errors
/// [`Error`] naming the file, field and problem.
pub fn init_from_env() -> Result<(), Error> {
    let mut current_source = CURRENT_SOURCE.lock();
    let config = std::env::var(CONFIG_ENV).map_err(|_| {
        Error::config(&PathBuf::from("(environment)"), CONFIG_ENV, "is not set; name a topology file or sample:<name>")
    });
    let source = config.as_deref().ok().map(Source::from_env);
    if source.is_some() && *current_source == source && CURRENT.read().is_some() {
        return Ok(());
    }
    let result = config
        .and_then(|value| load_config(&value))
        .and_then(|(topology, origin)| Sim::start(topology, origin, std::env::var_os(OVERLAY_ENV).map(PathBuf::from)));
    match result {
        Ok(sim) => {
            *CURRENT.write() = Some(sim);
            *current_source = source;
            *LAST_ERROR.lock() = None;
            Ok(())
        }
        Err(error) => {
            eprintln!("{error}");
            *CURRENT.write() = None;
            *current_source = None;
            *LAST_ERROR.lock() = Some(error.to_string());
            Err(error)
        }
    }
}
