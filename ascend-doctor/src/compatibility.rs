//! A site's own table of driver ↔ firmware ↔ CANN pairings (`--compatibility FILE`, or
//! `/etc/ascend-doctor/compatibility.toml` below the host root), and the version ordering the doctor uses.
//!
//! The doctor's verdicts come from what the installed packages declare
//! ([`package_compatibility`](super::package_compatibility)); there is no built-in table. A site that pins its
//! releases (from the HDK and CANN release notes) can add its pairings, whose verdicts then join the packages' own.
//!
//! The format (version 1):
//!
//! ```toml
//! format = 1
//!
//! [[release]]                       # one row per driver family
//! name     = "HDK 24.1 / CANN 8.0"  # shown in evidence and fixes
//! driver   = ["24.1.rc1", "24.1.99"] # driver versions of this row, both ends inclusive
//! firmware = ["7.3.0", "7.5.99"]    # firmware versions that go with those drivers (optional)
//! cann     = ["7.0.0", "8.0.99"]    # CANN versions those drivers run
//! source   = "CANN 8.0 release notes, version compatibility" # where the pairing comes from (optional)
//! ```
//!
//! Versions compare component by component, split at `.` and `-`: numbers numerically, and a release candidate
//! (`rc2`, `RC2`) sorts before every number in the same place, so 24.1.rc2 < 24.1.0 and 8.0.RC3 < 8.0.0. A MAX also
//! covers every longer version that starts with it: `24.1.rc2` as MAX includes `24.1.rc2.10`. A driver may appear in
//! several rows; a CANN fits when any row that holds the driver holds it.

use std::cmp::Ordering;
use std::fmt;
use std::path::Path;

use serde::Deserialize;

/// Where a host keeps its own table, below the host root.
pub const HOST_TABLE_PATH: &str = "/etc/ascend-doctor/compatibility.toml";

/// One part of a version.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    ReleaseCandidate(u64),
    Number(u64),
}

impl Part {
    fn parse(text: &str) -> Part {
        if let Ok(number) = text.parse() {
            return Part::Number(number);
        }
        let lower = text.to_ascii_lowercase();
        if let Some(number) = lower.strip_prefix("rc").and_then(|rest| rest.parse().ok()) {
            return Part::ReleaseCandidate(number);
        }
        Part::Text(lower)
    }

    fn rank(&self) -> u8 {
        match self {
            Part::Text(_) => 0,
            Part::ReleaseCandidate(_) => 1,
            Part::Number(_) => 2,
        }
    }
}

impl Ord for Part {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Part::Number(a), Part::Number(b)) | (Part::ReleaseCandidate(a), Part::ReleaseCandidate(b)) => a.cmp(b),
            (Part::Text(a), Part::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Part {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A Huawei-style version (`24.1.rc2`, `8.0.RC3`, `7.5.0.1.129`), ordered as the table format describes.
#[derive(Debug, Clone)]
pub struct Version {
    text: String,
    parts: Vec<Part>,
}

impl Version {
    /// Parses a version; `None` for an empty string.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let parts: Vec<Part> = text.split(['.', '-']).filter(|part| !part.is_empty()).map(Part::parse).collect();
        (!parts.is_empty()).then(|| Version { text: text.to_owned(), parts })
    }

    fn part(&self, index: usize) -> Part {
        self.parts.get(index).cloned().unwrap_or(Part::Number(0))
    }

    /// Whether `self` starts with every part of `prefix`.
    pub fn starts_with(&self, prefix: &Version) -> bool {
        prefix.parts.len() <= self.parts.len() && prefix.parts.iter().zip(&self.parts).all(|(a, b)| a == b)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let length = self.parts.len().max(other.parts.len());
        (0..length).map(|index| self.part(index).cmp(&other.part(index))).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// An inclusive version range whose upper end also covers versions it is a prefix of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    /// The lowest version.
    pub min: Version,
    /// The highest version (and every version it is a prefix of).
    pub max: Version,
}

/// Where a version lies relative to a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Below the range.
    Below,
    /// In it.
    Inside,
    /// Above it.
    Above,
}

impl VersionRange {
    /// Where `version` lies.
    pub fn place(&self, version: &Version) -> Placement {
        if version < &self.min {
            Placement::Below
        } else if version <= &self.max || version.starts_with(&self.max) {
            Placement::Inside
        } else {
            Placement::Above
        }
    }

    /// Whether `version` is in the range.
    pub fn contains(&self, version: &Version) -> bool {
        self.place(version) == Placement::Inside
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to {}", self.min, self.max)
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// Its name.
    pub name: String,
    /// The driver versions.
    pub driver: VersionRange,
    /// The firmware versions, when the row says.
    pub firmware: Option<VersionRange>,
    /// The CANN versions.
    pub cann: VersionRange,
    /// Where the pairing comes from, when the row says.
    pub source: Option<String>,
}

impl Release {
    /// The row's name with its source, for evidence: `"HDK 24.1 / CANN 8.0" (source: ...)`.
    pub fn label(&self) -> String {
        match &self.source {
            Some(source) => format!("{:?} (source: {source})", self.name),
            None => format!("{:?}", self.name),
        }
    }
}

/// The table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompatibilityTable {
    /// Where it came from (a path or "built-in").
    pub origin: String,
    /// The rows in file order.
    pub releases: Vec<Release>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    format: u32,
    #[serde(rename = "release", default)]
    releases: Vec<ReleaseRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseRow {
    name: String,
    driver: [String; 2],
    #[serde(default)]
    firmware: Option<[String; 2]>,
    cann: [String; 2],
    #[serde(default)]
    source: Option<String>,
}

/// Why a table could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("compatibility table {origin}: {problem}")]
pub struct TableError {
    /// The file.
    pub origin: String,
    /// What is wrong, naming the row and field.
    pub problem: String,
}

fn range(origin: &str, row: usize, field: &str, bounds: &[String; 2]) -> Result<VersionRange, TableError> {
    let bad = |what: &str| TableError { origin: origin.to_owned(), problem: format!("release[{row}].{field}: {what}") };
    let min = Version::parse(&bounds[0]).ok_or_else(|| bad("the first version is empty"))?;
    let max = Version::parse(&bounds[1]).ok_or_else(|| bad("the second version is empty"))?;
    if max < min {
        return Err(bad(&format!("{max} is below {min}")));
    }
    Ok(VersionRange { min, max })
}

impl CompatibilityTable {
    /// Parses table text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`TableError`] naming the row and field for bad TOML, an unknown field, an unsupported `format`, or a range
    /// whose ends are empty or reversed.
    pub fn parse(text: &str, origin: &str) -> Result<Self, TableError> {
        let file: TableFile = toml::from_str(text)
            .map_err(|error| TableError { origin: origin.to_owned(), problem: error.to_string() })?;
        if file.format != 1 {
            return Err(TableError {
                origin: origin.to_owned(),
                problem: format!("format {} is not supported (1 is)", file.format),
            });
        }
        let mut releases = Vec::with_capacity(file.releases.len());
        for (index, row) in file.releases.iter().enumerate() {
            releases.push(Release {
                name: row.name.clone(),
                driver: range(origin, index, "driver", &row.driver)?,
                firmware: row.firmware.as_ref().map(|bounds| range(origin, index, "firmware", bounds)).transpose()?,
                cann: range(origin, index, "cann", &row.cann)?,
                source: row.source.clone(),
            });
        }
        Ok(Self { origin: origin.to_owned(), releases })
    }

    /// Reads a table file.
    ///
    /// # Errors
    /// [`TableError`] for an unreadable or invalid file.
    pub fn from_file(path: &Path) -> Result<Self, TableError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|error| TableError { origin: origin.clone(), problem: format!("cannot read: {error}") })?;
        Self::parse(&text, &origin)
    }

    /// The rows that hold a driver version.
    pub fn rows_for_driver(&self, driver: &Version) -> Vec<&Release> {
        self.releases.iter().filter(|release| release.driver.contains(driver)).collect()
    }

    /// The rows that hold a CANN version.
    pub fn rows_for_cann(&self, cann: &Version) -> Vec<&Release> {
        self.releases.iter().filter(|release| release.cann.contains(cann)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).expect("non-empty")
    }

    #[test]
    fn release_candidates_come_before_releases() {
        assert!(v("24.1.rc2") < v("24.1.0"));
        assert!(v("24.1.rc2") < v("24.1.RC3"));
        assert!(v("8.0.RC3") < v("8.0.0"));
        assert!(v("8.0.0") < v("8.1.RC1"));
        assert_eq!(v("7.0"), v("7.0.0"));
        assert!(v("23.0.3") < v("24.1.rc1"));
    }

    #[test]
    fn ranges_cover_longer_versions_of_their_upper_end() {
        let range = VersionRange { min: v("24.1.rc1"), max: v("24.1.rc2") };
        assert_eq!(range.place(&v("24.1.rc2.10")), Placement::Inside);
        assert_eq!(range.place(&v("24.1.rc3")), Placement::Above);
        assert_eq!(range.place(&v("23.0.0")), Placement::Below);
    }

    #[test]
    fn a_sites_table_pairs_its_rows() {
        let text = "format = 1\n[[release]]\nname = \"HDK 24.1 / CANN 8.0\"\ndriver = [\"24.1.rc1\", \"24.1.99\"]\n\
                    firmware = [\"7.3.0\", \"7.5.99\"]\ncann = [\"7.0.0\", \"8.0.99\"]\nsource = \"release notes\"\n";
        let table = CompatibilityTable::parse(text, "site.toml").expect("valid");
        let rows = table.rows_for_driver(&v("24.1.rc2"));
        assert_eq!(rows.len(), 1);
        assert!(rows[0].cann.contains(&v("8.0.RC3")));
        assert!(!rows[0].cann.contains(&v("8.1.RC1")));
        assert_eq!(rows[0].label(), "\"HDK 24.1 / CANN 8.0\" (source: release notes)");
        assert!(table.rows_for_driver(&v("25.0.rc1")).is_empty());
    }

    #[test]
    fn an_operators_row_without_a_source_still_loads() {
        let text = "format = 1\n[[release]]\nname = \"mine\"\ndriver = [\"1\", \"2\"]\ncann = [\"1\", \"2\"]\n";
        let table = CompatibilityTable::parse(text, "t.toml").expect("valid");
        assert_eq!(table.releases[0].source, None);
        assert_eq!(table.releases[0].label(), "\"mine\"");
    }

    #[test]
    fn errors_name_the_row_and_field() {
        let text = "format = 1\n[[release]]\nname = \"x\"\ndriver = [\"2\", \"1\"]\ncann = [\"1\", \"2\"]\n";
        let error = CompatibilityTable::parse(text, "t.toml").expect_err("reversed");
        assert!(error.to_string().contains("release[0].driver"), "{error}");
        let error = CompatibilityTable::parse("format = 2\n", "t.toml").expect_err("format");
        assert!(error.to_string().contains("format 2"), "{error}");
        let error = CompatibilityTable::parse("format = 1\nextra = 1\n", "t.toml").expect_err("unknown");
        assert!(error.to_string().contains("extra"), "{error}");
    }
}
