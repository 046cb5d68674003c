//! The document: the ConfigMap's name, label and keys, the device list by chip family, the fault entries, Go's JSON
//! and the check code.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use serde::{Deserialize, Serialize};

/// The namespace of every device-info ConfigMap.
pub const DEVICE_INFO_NAMESPACE: &str = "kube-system";
/// The name prefix; the node name follows.
pub const DEVICE_INFO_NAME_PREFIX: &str = "mindx-dl-deviceinfo-";
/// The label Volcano's informer selects device-info ConfigMaps by (value [`CONSUMER_LABEL_VALUE`]).
pub const CONSUMER_LABEL: &str = "mx-consumer-cim";
/// The value of [`CONSUMER_LABEL`].
pub const CONSUMER_LABEL_VALUE: &str = "true";
/// The data key of the device list JSON.
pub const DEVICE_INFO_KEY: &str = "DeviceInfoCfg";
/// The data key an operator lists chips in to take them out of service (`Ascend910-3,Ascend910-5`).
pub const MANUALLY_SEPARATE_NPU_KEY: &str = "ManuallySeparateNPU";
/// `SuperPodID` and `ServerIndex` of a node outside a super-pod.
pub const NOT_IN_SUPER_POD: i32 = -1;

/// Suffix of the key listing unhealthy chips.
pub const UNHEALTHY_SUFFIX: &str = "-Unhealthy";
/// Suffix of the key listing chips whose network (RoCE/HCCS links) is unhealthy.
pub const NETWORK_UNHEALTHY_SUFFIX: &str = "-NetworkUnhealthy";
/// Suffix of the key listing chips in a hot reset.
pub const RECOVERING_SUFFIX: &str = "-Recovering";
/// Suffix of the key holding the fault list (JSON).
pub const FAULT_SUFFIX: &str = "-Fault";

/// `fault_type` of a chip fault.
pub const CARD_UNHEALTHY: &str = "CardUnhealthy";
/// `fault_type` of a network fault.
pub const CARD_NETWORK_UNHEALTHY: &str = "CardNetworkUnhealthy";

/// The name of a node's device-info ConfigMap.
pub fn config_map_name(node: &str) -> String {
    format!("{DEVICE_INFO_NAME_PREFIX}{node}")
}

/// Which keys a chip family writes: Huawei's plugin writes all five for the 910 family (and for the Ascend 950's
/// `npu`), three for the 310P and two for the 310.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeySet {
    /// Free, `-Unhealthy`, `-NetworkUnhealthy`, `-Recovering`, `-Fault`.
    Training,
    /// Free, `-Unhealthy`, `-Fault` (Ascend 310P).
    Inference,
    /// Free, `-Unhealthy` (Ascend 310).
    Edge,
}

/// One code's entry in [`DeviceFault::fault_time_and_level_map`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultTimeAndLevel {
    /// When the fault was first seen, Unix milliseconds.
    pub fault_time: i64,
    /// The level of this code alone (`SeparateNPU` ...).
    pub fault_level: String,
}

/// One entry of the `-Fault` list: a chip's faults of one kind, with the level they grade to.
///
/// Field order and names are Huawei's (`json` tags of `DeviceFault`); the three level fields carry the same value,
/// as Huawei's plugin writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFault {
    /// [`CARD_UNHEALTHY`] or [`CARD_NETWORK_UNHEALTHY`].
    pub fault_type: String,
    /// The chip, `Ascend910-3`.
    pub npu_name: String,
    /// The level (`SeparateNPU` ...).
    pub large_model_fault_level: String,
    /// The level.
    pub fault_level: String,
    /// The level.
    pub fault_handling: String,
    /// The active codes, upper-case hex without `0x` or padding, comma-separated (`80E01801,40F84E00`).
    pub fault_code: String,
    /// Per code (upper-case hex): when it was first seen and its own level.
    pub fault_time_and_level_map: BTreeMap<String, FaultTimeAndLevel>,
}

impl DeviceFault {
    /// A chip fault of `chip` at `level` (Huawei's level name) with its codes and their first-seen times.
    pub fn chip(chip: &str, level: &str, codes: &[(u64, i64, String)]) -> DeviceFault {
        let hex = |code: u64| format!("{code:X}");
        DeviceFault {
            fault_type: CARD_UNHEALTHY.to_owned(),
            npu_name: chip.to_owned(),
            large_model_fault_level: level.to_owned(),
            fault_level: level.to_owned(),
            fault_handling: level.to_owned(),
            fault_code: codes.iter().map(|(code, _, _)| hex(*code)).collect::<Vec<_>>().join(","),
            fault_time_and_level_map: codes
                .iter()
                .map(|(code, time, level)| {
                    (hex(*code), FaultTimeAndLevel { fault_time: *time, fault_level: level.clone() })
                })
                .collect(),
        }
    }
}

/// The chips of one resource family by state: what becomes its keys of `DeviceList`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyDevices {
    /// Healthy chips no running pod holds.
    pub free: BTreeSet<String>,
    /// Chips that must not be scheduled.
    pub unhealthy: BTreeSet<String>,
    /// Chips whose network is unhealthy.
    pub network_unhealthy: BTreeSet<String>,
    /// Chips in a hot reset.
    pub recovering: BTreeSet<String>,
    /// The fault entries, in chip order.
    pub faults: Vec<DeviceFault>,
}

/// The `DeviceList` map: resource key (`huawei.com/Ascend910`, `huawei.com/Ascend910-Unhealthy` ...) to value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceList(BTreeMap<String, String>);

impl DeviceList {
    /// An empty list (a node whose chips are not known yet).
    pub fn new() -> DeviceList {
        DeviceList::default()
    }

    /// Adds the keys of one family under `resource` (`huawei.com/Ascend910`).
    pub fn add_family(&mut self, resource: &str, keys: KeySet, devices: &FamilyDevices) {
        let joined = |set: &BTreeSet<String>| set.iter().map(String::as_str).collect::<Vec<_>>().join(",");
        self.0.insert(resource.to_owned(), joined(&devices.free));
        self.0.insert(format!("{resource}{UNHEALTHY_SUFFIX}"), joined(&devices.unhealthy));
        if keys == KeySet::Training {
            self.0.insert(format!("{resource}{NETWORK_UNHEALTHY_SUFFIX}"), joined(&devices.network_unhealthy));
            self.0.insert(format!("{resource}{RECOVERING_SUFFIX}"), joined(&devices.recovering));
        }
        if keys != KeySet::Edge {
            self.0.insert(format!("{resource}{FAULT_SUFFIX}"), go_json(&devices.faults));
        }
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Every key and value, keys sorted.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// The chip names listed under `key` (`Ascend910-0,Ascend910-1`), blanks skipped; none when the key is absent.
    pub fn chips(&self, key: &str) -> impl Iterator<Item = &str> {
        self.get(key).unwrap_or_default().split(',').map(str::trim).filter(|chip| !chip.is_empty())
    }

    /// The fault entries of `resource` (its `-Fault` key); empty when the family writes none.
    ///
    /// # Errors
    /// The JSON error when the key holds something other than a list of [`DeviceFault`].
    pub fn faults(&self, resource: &str) -> Result<Vec<DeviceFault>, serde_json::Error> {
        match self.get(&format!("{resource}{FAULT_SUFFIX}")) {
            Some(text) if !text.trim().is_empty() => serde_json::from_str(text),
            _ => Ok(Vec::new()),
        }
    }

    /// The resource names (`huawei.com/Ascend910`): the keys without a state suffix.
    pub fn resources(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str).filter(|key| {
            ![UNHEALTHY_SUFFIX, NETWORK_UNHEALTHY_SUFFIX, RECOVERING_SUFFIX, FAULT_SUFFIX]
                .iter()
                .any(|suffix| key.ends_with(suffix))
        })
    }
}

/// A `DeviceInfoCfg` document as a reader sees it: the device list and when the plugin wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfoDocument {
    /// The chips by state.
    pub device_list: DeviceList,
    /// `UpdateTime`, Unix seconds.
    pub update_time: i64,
}

#[derive(Deserialize)]
#[allow(non_snake_case)] // Go's field names, which are the JSON keys
struct ReadNodeDeviceInfo {
    #[serde(default)]
    DeviceList: BTreeMap<String, String>,
    #[serde(default)]
    UpdateTime: i64,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct ReadNodeDeviceInfoCache {
    DeviceInfo: ReadNodeDeviceInfo,
}

/// Reads a `DeviceInfoCfg` value, ours or Huawei's plugin's ([`device_info_cfg`] writes it). The `CheckCode` is
/// not verified: a reader that only reports wants the map even when an older writer computed the code otherwise.
///
/// # Errors
/// The JSON error when the text is not such a document.
pub fn parse_device_info_cfg(text: &str) -> Result<DeviceInfoDocument, serde_json::Error> {
    let document: ReadNodeDeviceInfoCache = serde_json::from_str(text)?;
    Ok(DeviceInfoDocument {
        device_list: DeviceList(document.DeviceInfo.DeviceList),
        update_time: document.DeviceInfo.UpdateTime,
    })
}

/// Where a node sits in a super-pod; both `-1` outside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// `SuperPodID`.
    pub super_pod_id: i32,
    /// `ServerIndex`.
    pub server_index: i32,
    /// `RackID`, written only when set.
    pub rack_id: Option<i32>,
}

impl Default for Placement {
    fn default() -> Self {
        Placement { super_pod_id: NOT_IN_SUPER_POD, server_index: NOT_IN_SUPER_POD, rack_id: None }
    }
}

#[derive(Serialize)]
#[allow(non_snake_case)] // Go's field names, which are the JSON keys
struct NodeDeviceInfo<'a> {
    DeviceList: &'a BTreeMap<String, String>,
    UpdateTime: i64,
}

#[derive(Serialize)]
#[allow(non_snake_case)]
struct NodeDeviceInfoCache<'a> {
    DeviceInfo: NodeDeviceInfo<'a>,
    SuperPodID: i32,
    ServerIndex: i32,
    CheckCode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    RackID: Option<i32>,
}

/// `CheckCode`: the lower-case hex SHA-256 of the Go JSON of `{"DeviceList":...,"UpdateTime":...}`.
pub fn check_code(list: &DeviceList, update_time: i64) -> String {
    let json = go_json(&NodeDeviceInfo { DeviceList: &list.0, UpdateTime: update_time });
    let digest = ring::digest::digest(&ring::digest::SHA256, json.as_bytes());
    digest.as_ref().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The `DeviceInfoCfg` value: the whole document, `CheckCode` included.
pub fn device_info_cfg(list: &DeviceList, update_time: i64, placement: Placement) -> String {
    go_json(&NodeDeviceInfoCache {
        DeviceInfo: NodeDeviceInfo { DeviceList: &list.0, UpdateTime: update_time },
        SuperPodID: placement.super_pod_id,
        ServerIndex: placement.server_index,
        CheckCode: check_code(list, update_time),
        RackID: placement.rack_id,
    })
}

/// Parses `ManuallySeparateNPU`: chip names separated by commas, blanks ignored. Names that do not look like
/// `<Type>-<phy>` are returned apart so the caller can say which entry it ignores (Huawei's plugin also skips them).
pub fn parse_manually_separated(text: &str) -> (BTreeSet<String>, Vec<String>) {
    let mut chips = BTreeSet::new();
    let mut invalid = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
        let valid = entry
            .rsplit_once('-')
            .is_some_and(|(kind, id)| !kind.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        if valid {
            chips.insert(entry.to_owned());
        } else {
            invalid.push(entry.to_owned());
        }
    }
    (chips, invalid)
}

/// Serialises like Go's `json.Marshal`: compact, and `<`, `>`, `&`, U+2028, U+2029 escaped as `\u003c` ...
///
/// serde_json already matches Go for everything else that can occur here (struct fields in declaration order,
/// `BTreeMap` keys in byte order, `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f` and `\u00XX` in lower-case hex for the
/// other control characters).
pub fn go_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, GoFormatter);
    // Serialising our own types into memory cannot fail: they hold only strings, integers, lists and string maps.
    if value.serialize(&mut serializer).is_err() {
        return String::new();
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// serde_json's compact formatter plus Go's HTML-safe escapes.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let mut start = 0;
        for (index, character) in fragment.char_indices() {
            let escape = match character {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..index])?;
            writer.write_all(escape.as_bytes())?;
            start = index + character.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_document_reads_back_with_its_chips_and_faults() {
        let fault =
            DeviceFault::chip("Ascend910-3", "SeparateNPU", &[(0x80E0_1801, 1_700_000_000_000, "SeparateNPU".into())]);
        let devices = FamilyDevices {
            free: ["Ascend910-0".to_owned(), "Ascend910-1".to_owned()].into(),
            unhealthy: ["Ascend910-3".to_owned()].into(),
            faults: vec![fault.clone()],
            ..FamilyDevices::default()
        };
        let mut list = DeviceList::new();
        list.add_family("huawei.com/Ascend910", KeySet::Training, &devices);
        let read = parse_device_info_cfg(&device_info_cfg(&list, 1_700_000_123, Placement::default())).unwrap();
        assert_eq!(read, DeviceInfoDocument { device_list: list.clone(), update_time: 1_700_000_123 });
        assert_eq!(read.device_list.chips("huawei.com/Ascend910").collect::<Vec<_>>(), ["Ascend910-0", "Ascend910-1"]);
        assert_eq!(read.device_list.chips("huawei.com/Ascend910-Recovering").count(), 0);
        assert_eq!(read.device_list.faults("huawei.com/Ascend910").unwrap(), [fault]);
        assert_eq!(read.device_list.resources().collect::<Vec<_>>(), ["huawei.com/Ascend910"]);
        assert!(parse_device_info_cfg("{\"DeviceInfo\":3}").is_err());
    }

    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        // Go: json.Marshal("a<b>&\u2028\"\\\n\x01") == "\"a\\u003cb\\u003e\\u0026\\u2028\\\"\\\\\\n\\u0001\""
        assert_eq!(go_json("a<b>&\u{2028}\"\\\n\u{1}é"), "\"a\\u003cb\\u003e\\u0026\\u2028\\\"\\\\\\n\\u0001é\"");
    }

    #[test]
    fn the_check_code_covers_the_device_info_only() {
        let mut list = DeviceList::new();
        list.add_family("huawei.com/Ascend910", KeySet::Training, &FamilyDevices::default());
        let code = check_code(&list, 100);
        assert_eq!(code.len(), 64);
        assert!(code.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(code, check_code(&list, 101), "UpdateTime is covered");
        let placed = Placement { super_pod_id: 3, server_index: 1, rack_id: Some(2) };
        let document = device_info_cfg(&list, 100, placed);
        assert!(document.contains(&format!("\"CheckCode\":\"{code}\"")), "{document}");
        assert!(document.ends_with(",\"RackID\":2}"), "{document}");
        assert!(!device_info_cfg(&list, 100, Placement::default()).contains("RackID"));
    }

    #[test]
    fn families_write_huaweis_keys() {
        let mut list = DeviceList::new();
        list.add_family("huawei.com/Ascend310P", KeySet::Inference, &FamilyDevices::default());
        list.add_family("huawei.com/Ascend310", KeySet::Edge, &FamilyDevices::default());
        let keys: Vec<&String> = list.entries().keys().collect();
        assert_eq!(
            keys,
            [
                "huawei.com/Ascend310",
                "huawei.com/Ascend310-Unhealthy",
                "huawei.com/Ascend310P",
                "huawei.com/Ascend310P-Fault",
                "huawei.com/Ascend310P-Unhealthy"
            ]
        );
        assert_eq!(list.get("huawei.com/Ascend310P-Fault"), Some("[]"));
    }

    #[test]
    fn manually_separated_chips_are_parsed_and_bad_entries_named() {
        let (chips, invalid) = parse_manually_separated(" Ascend910-3,,Ascend910-10 ,bogus,npu-x");
        assert_eq!(chips.into_iter().collect::<Vec<_>>(), ["Ascend910-10", "Ascend910-3"]);
        assert_eq!(invalid, ["bogus", "npu-x"]);
        assert!(parse_manually_separated("").0.is_empty());
    }
}
