//! The process-wide simulator instance behind the exported functions, and `dcmi_init`'s loading.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::error::Error;
use crate::library_home;
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
    fn new(config: &str, overlay: Option<std::ffi::OsString>) -> Source {
        let file =
            std::fs::metadata(config).ok().and_then(|metadata| Some((metadata.modified().ok()?, metadata.len())));
        Source { config: config.to_owned(), overlay, file }
    }
}

/// The topology and overlay to load: the environment's, or else the files beside the library
/// ([`crate::library_home`]), which is how a fake host laid out at `/` runs daemons that set no variable.
fn configured_source() -> Result<(String, Option<std::ffi::OsString>), Error> {
    if let Ok(config) = std::env::var(CONFIG_ENV) {
        return Ok((config, std::env::var_os(OVERLAY_ENV)));
    }
    let directory = library_home::library_directory();
    let beside = directory.as_ref().map(|directory| directory.join(library_home::CONFIG_FILE_NAME));
    match beside {
        Some(config) if config.is_file() => {
            let overlay = std::env::var_os(OVERLAY_ENV).or_else(|| {
                directory.map(|directory| directory.join(library_home::OVERLAY_FILE_NAME).into_os_string())
            });
            Ok((config.to_string_lossy().into_owned(), overlay))
        }
        _ => Err(Error::config(
            &PathBuf::from("(environment)"),
            CONFIG_ENV,
            format!(
                "is not set and there is no {} beside the library ({}); name a topology file or sample:<name>",
                library_home::CONFIG_FILE_NAME,
                directory.map_or_else(|| "unknown".to_owned(), |directory| directory.display().to_string())
            ),
        )),
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

/// What `dcmi_init` does: read `DCMI_SIM_CONFIG` (and `DCMI_SIM_OVERLAY`), or without it the files beside the
/// library ([`crate::library_home`]), build a fresh instance
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
    let configured = configured_source();
    let source = configured.as_ref().ok().map(|(config, overlay)| Source::new(config, overlay.clone()));
    if source.is_some() && *current_source == source && CURRENT.read().is_some() {
        return Ok(());
    }
    let result = configured.and_then(|(config, overlay)| {
        let (topology, origin) = load_config(&config)?;
        Sim::start(topology, origin, overlay.map(PathBuf::from))
    });
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
