//! What a container asks for: which chips, which runtime options, which mount lists.
//!
//! The grammar of `ASCEND_VISIBLE_DEVICES` is a superset of Huawei's Ascend Docker Runtime:
//!
//! ```text
//! value     = "" | "void" | "none" | "all" | token ("," token)*     (whitespace around tokens ignored)
//! token     = id | id "-" id | "npu-" id | "Ascend" model "-" id
//! id        = decimal digits, 0 ..= 128 (MAX_PHY_ID)
//! model     = a digit followed by letters, digits or "_"   (910, 910B, 310P, 310B, 310 ...)
//! ```
//!
//! `""`, `void` and `none` ask for nothing; `all` asks for every chip of the host and cannot be
//! combined with other tokens. Ids are the `N` of `/dev/davinciN`: the physical id, on Ascend950 the logic id, as Huawei's
//! device plugin writes them (`ascend_dcmi::ChipIds::device_node_number`); the result is
//! deduplicated and sorted. Any other token is refused with a message that quotes it.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The largest chip id (the `N` of `/dev/davinciN`) accepted in a request (the bound of Huawei's parser).
pub const MAX_PHY_ID: u32 = 128;

/// Environment variable naming the requested chips.
pub const VISIBLE_DEVICES_ENV: &str = "ASCEND_VISIBLE_DEVICES";
/// Environment variable with runtime options (`NODRV`, `VIRTUAL`).
pub const RUNTIME_OPTIONS_ENV: &str = "ASCEND_RUNTIME_OPTIONS";
/// Environment variable naming the mount lists to apply.
pub const RUNTIME_MOUNTS_ENV: &str = "ASCEND_RUNTIME_MOUNTS";
/// Environment variable allowing symlinks in mount sources.
pub const ALLOW_LINK_ENV: &str = "ASCEND_ALLOW_LINK";

/// The longest option or mount-list value accepted (Huawei's limit).
const MAX_LIST_VALUE_LEN: usize = 128;

/// Which chips a container asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum DeviceSelection {
    /// No chip (`""`, `void`, `none`, or the variable unset): behave like plain runc.
    #[default]
    Nothing,
    /// Every chip of the host.
    All,
    /// These physical ids, sorted and deduplicated; never empty (see [`DeviceSelection::chips`]).
    Chips(BTreeSet<u32>),
}

impl DeviceSelection {
    /// Builds a selection from ids; an empty set becomes [`DeviceSelection::Nothing`].
    pub fn chips(ids: impl IntoIterator<Item = u32>) -> Self {
        let ids: BTreeSet<u32> = ids.into_iter().collect();
        if ids.is_empty() {
            DeviceSelection::Nothing
        } else {
            DeviceSelection::Chips(ids)
        }
    }

    /// Whether nothing is asked for.
    pub fn is_nothing(&self) -> bool {
        match self {
            DeviceSelection::Nothing => true,
            DeviceSelection::All => false,
            DeviceSelection::Chips(ids) => ids.is_empty(),
        }
    }

    /// Parses a value in the grammar of the module documentation, reporting errors against
    /// `variable`.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] quoting the first token outside the grammar.
    pub fn parse_for(variable: &'static str, value: &str) -> Result<Self> {
        let value = value.trim();
        match value {
            "" | "void" | "none" => return Ok(DeviceSelection::Nothing),
            "all" => return Ok(DeviceSelection::All),
            _ => {}
        }
        let mut ids = BTreeSet::new();
        for raw in value.split(',') {
            let token = raw.trim();
            let invalid =
                |reason: &str| Error::InvalidRequest { variable, token: token.to_owned(), reason: reason.to_owned() };
            match token {
                "" => return Err(invalid("empty token (stray comma?)")),
                "all" | "void" | "none" => return Err(invalid("keywords cannot be combined with other tokens")),
                _ => {}
            }
            if let Some((low, high)) = parse_range(token) {
                let low = parse_id(low).map_err(|reason| invalid(&reason))?;
                let high = parse_id(high).map_err(|reason| invalid(&reason))?;
                if low > high {
                    return Err(invalid("range start is greater than its end"));
                }
                ids.extend(low..=high);
            } else if let Some(id) = parse_chip_name(token) {
                ids.insert(parse_id(id).map_err(|reason| invalid(&reason))?);
            } else if token.bytes().all(|b| b.is_ascii_digit()) {
                ids.insert(parse_id(token).map_err(|reason| invalid(&reason))?);
            } else {
                return Err(invalid("expected an id, a range a-b, npu-<id>, Ascend<model>-<id>, all, void or none"));
            }
        }
        Ok(DeviceSelection::chips(ids))
    }
}

/// `a-b` where both sides start with a digit; names like `npu-3` are not ranges.
fn parse_range(token: &str) -> Option<(&str, &str)> {
    let (low, high) = token.split_once('-')?;
    let (low, high) = (low.trim(), high.trim());
    let starts_with_digit = |s: &str| s.bytes().next().is_some_and(|b| b.is_ascii_digit());
    (starts_with_digit(low) && starts_with_digit(high)).then_some((low, high))
}

/// The id part of `npu-<id>` or `Ascend<model>-<id>`.
fn parse_chip_name(token: &str) -> Option<&str> {
    if let Some(id) = token.strip_prefix("npu-") {
        return Some(id);
    }
    let rest = token.strip_prefix("Ascend")?;
    let (model, id) = rest.rsplit_once('-')?;
    let mut model_chars = model.chars();
    let model_ok = model_chars.next().is_some_and(|c| c.is_ascii_digit())
        && model_chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    model_ok.then_some(id)
}

fn parse_id(text: &str) -> std::result::Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not a decimal chip id"));
    }
    match text.parse::<u32>() {
        Ok(id) if id <= MAX_PHY_ID => Ok(id),
        _ => Err(format!("chip id {text} is larger than {MAX_PHY_ID}")),
    }
}

impl FromStr for DeviceSelection {
    type Err = Error;

    fn from_str(value: &str) -> Result<Self> {
        Self::parse_for(VISIBLE_DEVICES_ENV, value)
    }
}

/// Formats in canonical form: `void`, `all`, or sorted ids with runs of three or more written as
/// ranges (`0-3,5,7-9`). Parsing the output gives back an equal value.
impl fmt::Display for DeviceSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelection::Nothing => f.write_str("void"),
            DeviceSelection::All => f.write_str("all"),
            DeviceSelection::Chips(ids) if ids.is_empty() => f.write_str("void"),
            DeviceSelection::Chips(ids) => f.write_str(&format_id_runs(ids)),
        }
    }
}

/// `0,1,2,3,5` → `0-3,5`.
pub(crate) fn format_id_runs(ids: &BTreeSet<u32>) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(id) => *end = id,
            _ => runs.push((id, id)),
        }
    }
    let parts: Vec<String> = runs
        .into_iter()
        .flat_map(|(start, end)| match end - start {
            0 => vec![start.to_string()],
            1 => vec![start.to_string(), end.to_string()],
            _ => vec![format!("{start}-{end}")],
        })
        .collect();
    parts.join(",")
}

bitflags::bitflags! {
    /// The runtime options of `ASCEND_RUNTIME_OPTIONS`, a set of flags (`Copy`, one byte).
    ///
    /// The flags are named exactly as the variable spells them (`NODRV`, `VIRTUAL`), so parsing and printing use
    /// bitflags' own name table ([`RuntimeOptions::from_name`], [`RuntimeOptions::iter_names`]) and a new option is
    /// one line here.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RuntimeOptions: u8 {
        /// Do not mount driver files (device nodes only).
        const NODRV = 1 << 0;
        /// The ids are vNPU ids; the host's `/dev/vdavinciN` appears as `/dev/davinciN`.
        const VIRTUAL = 1 << 1;
    }
}

impl FromStr for RuntimeOptions {
    type Err = Error;

    /// Parses a comma list of `NODRV` and `VIRTUAL` (case-sensitive, whitespace trimmed).
    fn from_str(value: &str) -> Result<Self> {
        check_list_length(RUNTIME_OPTIONS_ENV, value)?;
        if value.trim().is_empty() {
            return Ok(RuntimeOptions::empty());
        }
        value.split(',').map(str::trim).try_fold(RuntimeOptions::empty(), |options, name| {
            RuntimeOptions::from_name(name).map(|option| options | option).ok_or_else(|| Error::InvalidRequest {
                variable: RUNTIME_OPTIONS_ENV,
                token: name.to_owned(),
                reason: format!("expected one of {}", RuntimeOptions::all()),
            })
        })
    }
}

/// The comma list [`RuntimeOptions::from_str`] reads (`NODRV,VIRTUAL`); empty for no option.
impl fmt::Display for RuntimeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, (name, _)) in self.iter_names().enumerate() {
            if position > 0 {
                f.write_str(",")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

fn check_list_length(variable: &'static str, value: &str) -> Result<()> {
    if value.len() > MAX_LIST_VALUE_LEN {
        return Err(Error::InvalidRequest {
            variable,
            token: value.to_owned(),
            reason: format!("longer than {MAX_LIST_VALUE_LEN} characters"),
        });
    }
    Ok(())
}

/// Parses `ASCEND_RUNTIME_MOUNTS`: a comma list of mount-list names, lower-cased; empty means
/// `base`. Names are plain file stems (`[a-z0-9_-]`), so a value cannot point outside the
/// mount-list directory.
///
/// # Errors
/// [`Error::InvalidRequest`] quoting a name with other characters, or a value over 128 characters.
pub fn parse_mount_list_names(value: &str) -> Result<Vec<String>> {
    check_list_length(RUNTIME_MOUNTS_ENV, value)?;
    if value.trim().is_empty() {
        return Ok(vec!["base".to_owned()]);
    }
    let mut names: Vec<String> = Vec::new();
    for raw in value.split(',') {
        let name = raw.trim().to_ascii_lowercase();
        let valid = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !valid {
            return Err(Error::InvalidRequest {
                variable: RUNTIME_MOUNTS_ENV,
                token: raw.trim().to_owned(),
                reason: "mount-list names are letters, digits, '_' and '-'".to_owned(),
            });
        }
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Parses `ASCEND_ALLOW_LINK`: `True`/`False` in any case, empty meaning `False`.
///
/// # Errors
/// [`Error::InvalidRequest`] for any other value.
pub fn parse_allow_link(value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "false" => Ok(false),
        "true" => Ok(true),
        _ => Err(Error::InvalidRequest {
            variable: ALLOW_LINK_ENV,
            token: value.to_owned(),
            reason: "expected True or False".to_owned(),
        }),
    }
}

/// A complete request: the chips plus how to inject them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceRequest {
    /// The chips.
    pub devices: DeviceSelection,
    /// `ASCEND_RUNTIME_OPTIONS`.
    pub options: RuntimeOptions,
    /// `ASCEND_RUNTIME_MOUNTS` (default `["base"]`).
    pub mount_lists: Vec<String>,
    /// `ASCEND_ALLOW_LINK`.
    pub allow_link: bool,
}

impl DeviceRequest {
    /// Reads the request from a container's environment (`KEY=VALUE` strings, as in an OCI
    /// spec's `process.env`). The last occurrence of a variable wins, as in a shell.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] from any of the four parsers.
    pub fn from_env<'a>(env: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        let mut visible = None;
        let mut options = None;
        let mut mounts = None;
        let mut allow_link = None;
        for entry in env {
            let Some((key, value)) = entry.split_once('=') else {
                continue;
            };
            match key {
                VISIBLE_DEVICES_ENV => visible = Some(value),
                RUNTIME_OPTIONS_ENV => options = Some(value),
                RUNTIME_MOUNTS_ENV => mounts = Some(value),
                ALLOW_LINK_ENV => allow_link = Some(value),
                _ => {}
            }
        }
        Ok(DeviceRequest {
            devices: DeviceSelection::parse_for(VISIBLE_DEVICES_ENV, visible.unwrap_or(""))?,
            options: options.unwrap_or("").parse()?,
            mount_lists: parse_mount_list_names(mounts.unwrap_or(""))?,
            allow_link: parse_allow_link(allow_link.unwrap_or(""))?,
        })
    }

    /// Merges chips asked for by CDI names (`huawei.com/npu=3`, `huawei.com/npu=all`) of `kind`
    /// into this request; names of other kinds are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidRequest`] quoting a name of our kind whose device part is not an id or `all`.
    pub fn add_cdi_names<'a>(&mut self, kind: &str, names: impl IntoIterator<Item = &'a str>) -> Result<()> {
        for name in names {
            let Some((name_kind, device)) = name.trim().split_once('=') else {
                continue;
            };
            if name_kind != kind {
                continue;
            }
            let asked = if device == "all" {
                DeviceSelection::All
            } else {
                let id = parse_id(device).map_err(|reason| Error::InvalidRequest {
                    variable: "CDI device name",
                    token: name.to_owned(),
                    reason,
                })?;
                DeviceSelection::chips([id])
            };
            self.devices = merge(std::mem::take(&mut self.devices), asked);
        }
        Ok(())
    }
}

fn merge(left: DeviceSelection, right: DeviceSelection) -> DeviceSelection {
    match (left, right) {
        (DeviceSelection::All, _) | (_, DeviceSelection::All) => DeviceSelection::All,
        (DeviceSelection::Nothing, other) | (other, DeviceSelection::Nothing) => other,
        (DeviceSelection::Chips(mut a), DeviceSelection::Chips(b)) => {
            a.extend(b);
            DeviceSelection::Chips(a)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(value: &str) -> Vec<u32> {
        match value.parse::<DeviceSelection>() {
            Ok(DeviceSelection::Chips(set)) => set.into_iter().collect(),
            other => panic!("{value:?} parsed to {other:?}"),
        }
    }

    #[test]
    fn integers_ranges_and_names_are_merged_sorted_and_deduplicated() {
        assert_eq!(ids("3,1,3,2"), [1, 2, 3]);
        assert_eq!(ids(" 5 - 7 , 0"), [0, 5, 6, 7]);
        assert_eq!(ids("Ascend310P-3,npu-1,Ascend910B-3,1-2"), [1, 2, 3]);
        // Huawei's comparator only removed adjacent duplicates; ours removes all of them.
        assert_eq!(ids("1,0,1,0"), [0, 1]);
    }

    #[test]
    fn keywords() {
        for nothing in ["", "  ", "void", "none"] {
            assert_eq!(nothing.parse::<DeviceSelection>().ok(), Some(DeviceSelection::Nothing));
        }
        assert_eq!("all".parse::<DeviceSelection>().ok(), Some(DeviceSelection::All));
    }

    #[test]
    fn bad_tokens_are_quoted() {
        for (value, token) in [
            ("0,x", "x"),
            ("1,,2", ""),
            ("3-1", "3-1"),
            ("129", "129"),
            ("all,1", "all"),
            ("Ascend-1", "Ascend-1"),
            ("npu-", "npu-"),
            ("-1", "-1"),
            ("+1", "+1"),
        ] {
            let err = value.parse::<DeviceSelection>().err().map(|e| e.to_string());
            let expected = format!("invalid token {token:?}");
            assert!(err.as_deref().is_some_and(|e| e.contains(&expected)), "{value:?} gave {err:?}");
        }
    }

    #[test]
    fn formatting_uses_ranges() {
        assert_eq!(DeviceSelection::chips([0, 1, 2, 3, 5, 7, 8]).to_string(), "0-3,5,7,8");
        assert_eq!(DeviceSelection::Nothing.to_string(), "void");
    }

    #[test]
    fn options_and_mount_lists() -> Result<()> {
        let options: RuntimeOptions = "VIRTUAL, NODRV".parse()?;
        assert_eq!(options, RuntimeOptions::NODRV | RuntimeOptions::VIRTUAL);
        assert_eq!(options.to_string(), "NODRV,VIRTUAL");
        assert_eq!(options.to_string().parse::<RuntimeOptions>()?, options);
        assert_eq!("".parse::<RuntimeOptions>()?, RuntimeOptions::default());
        let err = "NODRV,FAST".parse::<RuntimeOptions>().err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("\"FAST\"")));
        assert_eq!(parse_mount_list_names("")?, ["base"]);
        assert_eq!(parse_mount_list_names("Base,extra,base")?, ["base", "extra"]);
        assert!(parse_mount_list_names("../etc/shadow").is_err());
        assert!(parse_allow_link("True")? && !parse_allow_link("")?);
        assert!(parse_allow_link("yes").is_err());
        Ok(())
    }

    #[test]
    fn env_last_occurrence_wins_and_cdi_names_merge() -> Result<()> {
        let mut request = DeviceRequest::from_env([
            "PATH=/bin",
            "ASCEND_VISIBLE_DEVICES=0",
            "ASCEND_VISIBLE_DEVICES=2",
            "ASCEND_RUNTIME_OPTIONS=NODRV",
        ])?;
        assert_eq!(request.devices, DeviceSelection::chips([2]));
        assert!(request.options.contains(RuntimeOptions::NODRV));
        request.add_cdi_names("huawei.com/npu", ["huawei.com/npu=5", "nvidia.com/gpu=0"])?;
        assert_eq!(request.devices, DeviceSelection::chips([2, 5]));
        assert!(request.add_cdi_names("huawei.com/npu", ["huawei.com/npu=x"]).is_err());
        Ok(())
    }
}
