//! The crate's one error type.

use std::path::{Path, PathBuf};

use crate::chip_type::ChipType;
use crate::library_file::{LIBRARY_ENV, LIBRARY_FILE};

/// Everything that can go wrong in the simulator's Rust API: a topology or overlay file that cannot
/// be used, a library that cannot be found, a fake host that cannot be written, a vNPU request the
/// chip refuses. (The exported C functions answer DCMI return codes instead; [`Error::dcmi_code`]
/// gives the code of a vNPU error.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A topology or overlay file that cannot be used. The message names the file, the field (a
    /// dotted path such as `card[1].chip[0].logic_id`, or `(file)` when the problem is the whole
    /// file) and what is wrong, on one line.
    #[error("dcmi-sim: {}: field `{field}`: {problem}", file.display())]
    Config {
        /// The file that was read (or the name of an embedded sample).
        file: PathBuf,
        /// Dotted path of the offending field.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The built `libdcmi_sim.so` was not found.
    #[error(
        "{LIBRARY_FILE} not found (looked in: {}); run `cargo build -p dcmi-sim` or set {LIBRARY_ENV}",
        searched.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    LibraryNotFound {
        /// Every candidate that was checked.
        searched: Vec<PathBuf>,
    },
    /// A file or directory of a fake host could not be written.
    #[error("fake host: cannot write {}: {source}", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The topology could not be serialised into a fake host.
    #[error("fake host: cannot write the topology: {0}")]
    TopologyNotSerialisable(String),
    /// A fake host's option names a chip the topology does not have.
    #[error("fake host: the topology has no chip with physical id {phy_id} (physical ids: {known:?})")]
    NoSuchChip {
        /// The physical id asked for.
        phy_id: u32,
        /// The topology's physical ids.
        known: Vec<u32>,
    },
    /// The chip family has no vNPU support (-8255).
    #[error("{0} chips do not support vNPUs")]
    VnpuUnsupported(ChipType),
    /// The template is not on the family's allow-list (-8001).
    #[error("template `{template}` is not allowed on {chip_type}")]
    VnpuTemplateNotAllowed {
        /// Requested template.
        template: String,
        /// The chip family.
        chip_type: ChipType,
    },
    /// Not enough AI cores, memory or vNPU slots left (-8020).
    #[error("not enough resources for `{template}`: {detail}")]
    VnpuOutOfResources {
        /// Requested template.
        template: String,
        /// What ran out.
        detail: String,
    },
    /// A requested vdev id is out of range (-8001).
    #[error("vNPU id {0} is out of range 100..1123")]
    VnpuIdOutOfRange(u32),
    /// The requested vdev id exists already (-8020).
    #[error("vNPU id {0} is in use")]
    VnpuIdInUse(u32),
    /// No vNPU with this id on the chip (-8001).
    #[error("no vNPU {0} on this chip")]
    VnpuNotFound(u32),
}

impl Error {
    /// A problem with `field` of the configuration file `file`.
    pub fn config(file: &Path, field: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Config { file: file.to_path_buf(), field: field.into(), problem: problem.into() }
    }

    /// The DCMI return code the exported functions answer for this error (vNPU errors), if any.
    pub fn dcmi_code(&self) -> Option<i32> {
        match self {
            Error::VnpuUnsupported(_) => Some(-8255),
            Error::VnpuTemplateNotAllowed { .. } | Error::VnpuIdOutOfRange(_) | Error::VnpuNotFound(_) => Some(-8001),
            Error::VnpuOutOfResources { .. } | Error::VnpuIdInUse(_) => Some(-8020),
            _ => None,
        }
    }
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
