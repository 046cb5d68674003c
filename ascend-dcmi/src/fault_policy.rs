//! Grading fault codes into fault levels: a built-in default, or a file in the vendor's `faultCode.json` format.
//!
//! The file is a JSON object whose keys name levels and whose values are lists of hex code strings:
//!
//! ```json
//! { "NotHandleFaultCodes": ["80E21007"], "RestartNPUCodes": ["40F84E00"], "SeparateNPUCodes": ["80E3A201"] }
//! ```
//!
//! Known keys: `NotHandleFaultCodes`, `SubHealthFaultCodes`, `RestartRequestCodes`, `RestartBusinessCodes`,
//! `FreeRestartNPUCodes`, `RestartNPUCodes`, `PreSeparateNPUCodes`, `SeparateNPUCodes`. Missing keys are empty lists;
//! other keys (the vendor's network-code lists, for example) are ignored. A code listed under several levels takes
//! the most serious one, as the vendor's tools do. A code in no list is graded by the severity the driver gave it:
//! above minor is `SeparateNPU`, otherwise `NotHandleFault`, and no severity at all (codes found by polling) is
//! `SeparateNPU`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fault_events::event::Severity;
use crate::health::{DcmiHealth, FaultCode, FaultLevel};

/// The `faultCode.json` keys and the level each one grades to.
pub const FAULT_CODE_KEYS: [(&str, FaultLevel); 8] = [
    ("NotHandleFaultCodes", FaultLevel::NotHandleFault),
    ("SubHealthFaultCodes", FaultLevel::SubHealthFault),
    ("RestartRequestCodes", FaultLevel::RestartRequest),
    ("RestartBusinessCodes", FaultLevel::RestartBusiness),
    ("FreeRestartNPUCodes", FaultLevel::FreeRestartNpu),
    ("RestartNPUCodes", FaultLevel::RestartNpu),
    ("PreSeparateNPUCodes", FaultLevel::PreSeparateNpu),
    ("SeparateNPUCodes", FaultLevel::SeparateNpu),
];

/// A representative subset of the vendor's default lists (codes as the vendor's `faultCode.json` spells them).
const DEFAULT_CODES: [(FaultLevel, &[&str]); 8] = [
    (
        FaultLevel::NotHandleFault,
        &["80E21007", "80E38003", "80F78006", "80C98006", "80CB8006", "81318006", "80A18006", "81078603", "80E01805"],
    ),
    (FaultLevel::SubHealthFault, &["81B18605", "81078607", "110000002"]),
    (FaultLevel::RestartRequest, &["80C98008", "80C98002", "80C98003", "80C98009", "80CB8002", "80CB8008"]),
    (FaultLevel::RestartBusiness, &["8C204E00", "A8028802", "A4302003", "A4302004", "80E01801", "81B38009"]),
    (FaultLevel::FreeRestartNpu, &["8C0E4E00", "8C104E00", "8C0C4E00", "8C044E00", "8C064E00", "80E21008"]),
    (
        FaultLevel::RestartNpu,
        &["8C03A000", "8C1FA006", "40F84E00", "80E24E00", "80E21E01", "80E38008", "80E18005", "200001002"],
    ),
    (FaultLevel::PreSeparateNpu, &["110001024", "8F180220"]),
    (
        FaultLevel::SeparateNpu,
        &["80E3A201", "80E18402", "80E0020B", "817F8002", "816F8002", "814F8002", "80DF8402", "020001002"],
    ),
];

/// Grades fault codes into [`FaultLevel`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultPolicy {
    levels: HashMap<FaultCode, FaultLevel>,
    source: Option<PathBuf>,
}

impl Default for FaultPolicy {
    /// The built-in policy: a representative set of the vendor's default codes for every level, including the
    /// synthetic card-drop code (`RestartNPU`) and hang code (`RestartNPU`).
    fn default() -> Self {
        let mut policy = FaultPolicy { levels: HashMap::new(), source: None };
        for (level, codes) in DEFAULT_CODES {
            for text in codes {
                if let Ok(code) = text.parse::<FaultCode>() {
                    policy.insert(code, level);
                }
            }
        }
        policy
    }
}

impl FaultPolicy {
    /// A policy that knows no codes: everything is graded by severity.
    pub fn empty() -> Self {
        FaultPolicy { levels: HashMap::new(), source: None }
    }

    /// Reads a policy from a file in the vendor's `faultCode.json` format (it replaces the default entirely).
    ///
    /// # Errors
    /// [`Error::Config`] naming the file, and the key and entry where the content is wrong.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| Error::Config { path: path.to_path_buf(), detail: format!("cannot read: {error}") })?;
        let mut policy = Self::from_json(&text, path)?;
        policy.source = Some(path.to_path_buf());
        Ok(policy)
    }

    /// Parses `faultCode.json` content; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error::Config`] when the text is not a JSON object, a known key is not a list of strings, or an entry is
    /// not a hex code.
    pub fn from_json(text: &str, origin: &Path) -> Result<Self> {
        let config = |detail: String| Error::Config { path: origin.to_path_buf(), detail };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|error| config(format!("not valid JSON: {error}")))?;
        let object = value.as_object().ok_or_else(|| config("expected a JSON object of code lists".to_owned()))?;
        let mut policy = Self::empty();
        for (key, level) in FAULT_CODE_KEYS {
            let Some(list) = object.get(key) else { continue };
            let entries =
                list.as_array().ok_or_else(|| config(format!("{key}: expected a list of hex code strings")))?;
            for (index, entry) in entries.iter().enumerate() {
                let text = entry
                    .as_str()
                    .ok_or_else(|| config(format!("{key}[{index}]: expected a string, found {entry}")))?;
                let code = text.parse::<FaultCode>().map_err(|error| config(format!("{key}[{index}]: {error}")))?;
                policy.insert(code, level);
            }
        }
        Ok(policy)
    }

    /// Adds a code at a level; a code already graded keeps the more serious level.
    pub fn insert(&mut self, code: FaultCode, level: FaultLevel) {
        let entry = self.levels.entry(code).or_insert(level);
        if level > *entry {
            *entry = level;
        }
    }

    /// The level the policy lists a code under, if it lists it.
    pub fn listed_level(&self, code: FaultCode) -> Option<FaultLevel> {
        self.levels.get(&code).copied()
    }

    /// Grades one code. Unlisted codes are graded by `severity` (see the module documentation).
    pub fn grade(&self, code: FaultCode, severity: Option<Severity>) -> FaultLevel {
        self.listed_level(code).unwrap_or_else(|| grade_unknown(severity))
    }

    /// The most serious level of a set of codes whose severity is unknown (codes found by polling), or
    /// [`FaultLevel::NormalNpu`] for none.
    pub fn grade_all(&self, codes: &[FaultCode]) -> FaultLevel {
        codes.iter().map(|code| self.grade(*code, None)).max().unwrap_or(FaultLevel::NormalNpu)
    }

    /// The level DCMI's health word alone implies, treated like a fault of that severity: a minor alarm needs no
    /// handling, a major or critical alarm without any fault code separates the chip, and so does an absent chip.
    pub fn grade_health_word(&self, health: DcmiHealth) -> FaultLevel {
        match health {
            DcmiHealth::Ok => FaultLevel::NormalNpu,
            DcmiHealth::Minor => grade_unknown(Some(Severity::Minor)),
            DcmiHealth::Major => grade_unknown(Some(Severity::Major)),
            DcmiHealth::Critical => grade_unknown(Some(Severity::Critical)),
            DcmiHealth::Absent | DcmiHealth::Other(_) => FaultLevel::SeparateNpu,
        }
    }

    /// How many codes the policy lists.
    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// Whether the policy lists no code.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }

    /// The file the policy was read from; `None` for the built-in one.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }
}

fn grade_unknown(severity: Option<Severity>) -> FaultLevel {
    match severity {
        Some(Severity::Warning | Severity::Minor) => FaultLevel::NotHandleFault,
        Some(_) | None => FaultLevel::SeparateNpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/fixtures/faultCode.json");

    #[test]
    fn default_policy_covers_every_level_and_the_synthetic_codes() {
        let policy = FaultPolicy::default();
        for (_, level) in FAULT_CODE_KEYS {
            assert!(policy.levels.values().any(|l| *l == level), "no default code for {level}");
        }
        assert_eq!(policy.grade(FaultCode::CARD_DROP, None), FaultLevel::RestartNpu);
        assert_eq!(policy.grade(FaultCode::HANG, None), FaultLevel::RestartNpu);
        assert_eq!(policy.grade(FaultCode(0x80E0_1801), None), FaultLevel::RestartBusiness);
        assert!(policy.source().is_none());
    }

    #[test]
    fn unknown_codes_are_graded_by_severity() {
        let policy = FaultPolicy::empty();
        let unknown = FaultCode(0xDEAD_BEEF);
        assert_eq!(policy.grade(unknown, Some(Severity::Minor)), FaultLevel::NotHandleFault);
        assert_eq!(policy.grade(unknown, Some(Severity::Warning)), FaultLevel::NotHandleFault);
        assert_eq!(policy.grade(unknown, Some(Severity::Major)), FaultLevel::SeparateNpu);
        assert_eq!(policy.grade(unknown, None), FaultLevel::SeparateNpu);
        assert_eq!(policy.grade_all(&[]), FaultLevel::NormalNpu);
    }

    #[test]
    fn vendor_file_format_is_read_and_the_most_serious_listing_wins() {
        let policy = FaultPolicy::from_json(FIXTURE, Path::new("faultCode.json")).expect("fixture parses");
        assert_eq!(policy.grade(FaultCode(0x80E2_1007), None), FaultLevel::NotHandleFault);
        assert_eq!(policy.grade(FaultCode(0x1_1000_1024), None), FaultLevel::PreSeparateNpu);
        assert_eq!(policy.grade(FaultCode(0x80E3_A201), None), FaultLevel::SeparateNpu);
        // Listed under both RestartBusinessCodes and SeparateNPUCodes in the fixture.
        assert_eq!(policy.grade(FaultCode(0xA230_1001), None), FaultLevel::SeparateNpu);
        assert_eq!(policy.grade_all(&[FaultCode(0x80E2_1007), FaultCode(0x8C0E_4E00)]), FaultLevel::FreeRestartNpu);
        // The file replaces the default: a default-only code is unknown now.
        assert_eq!(policy.listed_level(FaultCode(0x80E1_8402)), None);
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let origin = Path::new("/etc/ascend/faultCode.json");
        let error = FaultPolicy::from_json(r#"{"RestartNPUCodes": ["80E1", "zz"]}"#, origin).expect_err("bad code");
        let message = error.to_string();
        assert!(message.contains("/etc/ascend/faultCode.json") && message.contains("RestartNPUCodes[1]"), "{message}");
        let error = FaultPolicy::from_json(r#"{"SeparateNPUCodes": "80E1"}"#, origin).expect_err("not a list");
        assert!(error.to_string().contains("SeparateNPUCodes: expected a list"), "{error}");
        let error = FaultPolicy::from_json(r#"{"SeparateNPUCodes": [1]}"#, origin).expect_err("not a string");
        assert!(error.to_string().contains("SeparateNPUCodes[0]"), "{error}");
        assert!(FaultPolicy::from_json("[", origin).is_err());
        assert!(FaultPolicy::from_file("/nonexistent/faultCode.json").is_err());
    }

    #[test]
    fn health_word_is_graded_like_a_severity() {
        let policy = FaultPolicy::default();
        assert_eq!(policy.grade_health_word(DcmiHealth::Ok), FaultLevel::NormalNpu);
        assert_eq!(policy.grade_health_word(DcmiHealth::Minor), FaultLevel::NotHandleFault);
        assert_eq!(policy.grade_health_word(DcmiHealth::Critical), FaultLevel::SeparateNpu);
        assert_eq!(policy.grade_health_word(DcmiHealth::Absent), FaultLevel::SeparateNpu);
    }
}
