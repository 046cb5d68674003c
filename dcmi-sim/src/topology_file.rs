//! Reading a topology file: its TOML into a [`Topology`], then the semantic checks of [`crate::validation`]. Apart
//! from the schema, so that the schema and its checks depend on each other one way only.

use std::path::Path;

use crate::error::Error;
use crate::topology::Topology;

impl Topology {
    /// Reads and validates the topology file `path`.
    ///
    /// # Errors
    /// [`Error`] naming `path`, the field and the problem (also for unreadable files).
    pub fn load(path: impl AsRef<Path>) -> Result<Topology, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| Error::config(path, "(file)", format!("cannot read: {error}")))?;
        Topology::from_toml_str(&text, path)
    }

    /// Parses and validates topology text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error`] naming `origin`, the field and the problem.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Topology, Error> {
        let topology = crate::toml_fields::parse::<Topology>(text, origin)?;
        crate::validation::validate(&topology, origin)?;
        Ok(topology)
    }
}
