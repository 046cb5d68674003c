//! The sample topologies (`topologies/*.toml`), embedded in the library and usable as files.

use std::path::{Path, PathBuf};

use crate::chip_type::Api;
use crate::error::Error;
use crate::topology::Topology;

/// One sample topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Short name, also the file stem (`atlas-800t-a2`).
    pub name: &'static str,
    /// What it models.
    pub description: &'static str,
    /// The TOML text.
    pub toml: &'static str,
    /// The DCMI API family its chips serve.
    pub api: Api,
}

/// Every sample topology.
pub const SAMPLES: &[Sample] = &[
    Sample {
        name: "atlas-300i-duo",
        description: "Atlas 300I Duo: 4 cards x 2 Ascend 310P3, phy ids differ from logic ids",
        toml: include_str!("../topologies/atlas-300i-duo.toml"),
        api: Api::V1,
    },
    Sample {
        name: "atlas-300i-pro",
        description: "Atlas 300I Pro: 2 cards x 1 Ascend 310P3",
        toml: include_str!("../topologies/atlas-300i-pro.toml"),
        api: Api::V1,
    },
    Sample {
        name: "atlas-800t-a2",
        description: "Atlas 800T A2: 8 Ascend 910B3, phy ids differ from logic ids",
        toml: include_str!("../topologies/atlas-800t-a2.toml"),
        api: Api::V1,
    },
    Sample {
        name: "atlas-800i-a3",
        description: "Atlas 800I A3: 8 cards x 2 dies (Ascend910A3)",
        toml: include_str!("../topologies/atlas-800i-a3.toml"),
        api: Api::V1,
    },
    Sample {
        name: "atlas-950-8",
        description:
            "Atlas 950 SuperPoD node: 8 Ascend950DT on DCMI V2 (dcmi_init fails), phy ids differ from logic ids",
        toml: include_str!("../topologies/atlas-950-8.toml"),
        api: Api::V2,
    },
    Sample {
        name: "atlas-950-16",
        description: "16-NPU Ascend950 board (board id 0x44): 16 Ascend950PR on DCMI V2",
        toml: include_str!("../topologies/atlas-950-16.toml"),
        api: Api::V2,
    },
    Sample {
        name: "edge-310",
        description: "edge box: 1 card x 1 Ascend 310",
        toml: include_str!("../topologies/edge-310.toml"),
        api: Api::V1,
    },
];

/// The sample called `name`.
pub fn by_name(name: &str) -> Option<&'static Sample> {
    SAMPLES.iter().find(|sample| sample.name == name)
}

/// Loads `value` as a topology: an existing file path, else `sample:<name>` or a bare sample name.
///
/// # Errors
/// [`Error`] naming the file (or sample), the field and the problem.
pub fn load_file_or_sample(value: &str) -> Result<Topology, Error> {
    let name = value.strip_prefix("sample:").unwrap_or(value);
    if value.starts_with("sample:") || !Path::new(value).exists() {
        if let Some(sample) = by_name(name) {
            return sample.topology();
        }
        if value.starts_with("sample:") {
            let names: Vec<&str> = SAMPLES.iter().map(|sample| sample.name).collect();
            return Err(Error::config(
                Path::new(value),
                "(sample)",
                format!("no sample called `{name}` (samples: {})", names.join(", ")),
            ));
        }
    }
    Topology::load(value)
}

impl Sample {
    /// The name used in error messages: `sample:<name>`.
    pub fn origin(&self) -> PathBuf {
        PathBuf::from(format!("sample:{}", self.name))
    }

    /// Parses and validates the embedded text.
    ///
    /// # Errors
    /// [`Error`] (only if the embedded file is broken; the tests load every sample).
    pub fn topology(&self) -> Result<Topology, Error> {
        Topology::from_toml_str(self.toml, &self.origin())
    }

    /// The file in this crate's source tree (valid on the machine that built the crate).
    pub fn source_path(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies").join(format!("{}.toml", self.name))
    }

    /// Writes the sample to `<dir>/<name>.toml` and returns that path (for `DCMI_SIM_CONFIG`).
    ///
    /// # Errors
    /// The I/O error, with the path.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(format!("{}.toml", self.name));
        std::fs::write(&path, self.toml)
            .map_err(|error| std::io::Error::new(error.kind(), format!("{}: {error}", path.display())))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_loads_and_its_file_matches() {
        for sample in SAMPLES {
            let topology = sample.topology();
            assert!(topology.is_ok(), "{}: {:?}", sample.name, topology.err());
            assert_eq!(topology.map(|topology| topology.api()).ok(), Some(sample.api), "{}", sample.name);
            let on_disk = std::fs::read_to_string(sample.source_path()).unwrap_or_default();
            assert_eq!(on_disk, sample.toml, "{} differs from its file", sample.name);
        }
    }

    #[test]
    fn topologies_survive_a_toml_round_trip() {
        for sample in SAMPLES {
            let topology = sample.topology().unwrap_or_default();
            let text = topology.to_toml_string().unwrap_or_default();
            let again = Topology::from_toml_str(&text, &sample.origin());
            assert_eq!(again.as_ref().ok(), Some(&topology), "{}: {:?}", sample.name, again.as_ref().err());
        }
    }
}
