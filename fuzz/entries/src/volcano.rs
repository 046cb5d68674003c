//! Volcano's side of the device-info contract: the `ManuallySeparateNPU` entry of the device-info ConfigMap (which an
//! operator edits by hand) and the pod annotations `huawei.com/<Type>` and `huawei.com/AscendReal` (which anyone who
//! may create pods can set).

use ascend_kube::device_info::parse_manually_separated;
use ascend_kube::pod_assignment::{chips_in_use, oldest_waiting, served_for, PodView};
use k8s_openapi::api::core::v1::Pod;

/// `ManuallySeparateNPU` as the device plugin reads it from its ConfigMap.
///
/// # Panics
/// When an entry comes back untrimmed, empty or with a comma, a chip name is not `<Type>-<digits>`, or the accepted
/// chips written back as the plugin writes them do not parse to the same set.
pub fn manually_separated(data: &[u8]) {
    let Some(text) = crate::text(data) else { return };
    let (chips, invalid) = parse_manually_separated(text);
    for entry in chips.iter().chain(&invalid) {
        assert!(!entry.is_empty() && entry.trim() == entry && !entry.contains(','), "entry {entry:?}");
    }
    for chip in &chips {
        let (kind, id) = chip.rsplit_once('-').unwrap_or_else(|| panic!("chip {chip:?} has no '-'"));
        assert!(!kind.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()), "chip {chip:?}");
    }
    let written = chips.iter().map(String::as_str).collect::<Vec<_>>().join(",");
    let (again, rejected) = parse_manually_separated(&written);
    assert_eq!(again, chips, "written back as {written:?}");
    assert!(rejected.is_empty(), "written back as {written:?}, rejected {rejected:?}");
}

/// A pod as the API server sends it (JSON), through everything the allocation flow reads from it.
///
/// # Panics
/// When a chip read from an annotation is empty, untrimmed or holds a comma.
pub fn pod_annotations(data: &[u8]) {
    let Ok(pod) = serde_json::from_slice::<Pod>(data) else { return };
    let view = PodView::of(&pod);
    let resources: Vec<String> = view.annotations.keys().chain(view.requests.keys()).cloned().collect();
    let mut read = view.real_chips();
    for resource in &resources {
        read.extend(view.chosen_chips(resource));
    }
    for chip in &read {
        assert!(!chip.is_empty() && chip.trim() == chip && !chip.contains(','), "chip {chip:?}");
    }
    let pods = [view];
    for resource in &resources {
        for count in [1, 2, 8] {
            let _ = oldest_waiting(&pods, resource, count);
        }
    }
    let _ = served_for(&pods, &read);
    let _ = chips_in_use(&pods, None);
    let _ = pods[0].key();
}
