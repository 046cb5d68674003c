//! Checks `DcmiLib`: one field per DCMI function of both API families, the signatures that
//! differ from the obvious `(card_id, device_id, *out)` / `(dev_id, *out)` shapes, and per-symbol
//! resolution.
// Calls the raw bindings, which are `unsafe` by nature.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int, c_uchar, c_uint};

use dcmi_sys::*;

/// Lists every function once; each entry reads its `DcmiLib` field, so removing a
/// field (or misspelling a name) fails to compile.
macro_rules! every_function {
    ($($function:ident),* $(,)?) => {
        const FUNCTION_NAMES: &[&str] = &[$(stringify!($function)),*];

        /// The resolution result of every function field, by symbol name.
        fn resolutions(library: &DcmiLib) -> Vec<(&'static str, Result<(), String>)> {
            vec![$((
                stringify!($function),
                library.$function.as_ref().map(|_| ()).map_err(|error| error_chain(error)),
            )),*]
        }
    };
}

every_function!(
    dcmi_init,
    dcmi_get_card_list,
    dcmi_get_card_num_list,
    dcmi_get_device_num_in_card,
    dcmi_get_device_id_in_card,
    dcmi_get_device_type,
    dcmi_get_device_pcie_info_v2,
    dcmi_get_device_chip_info,
    dcmi_get_device_chip_info_v2,
    dcmi_get_device_power_info,
    dcmi_get_device_health,
    dcmi_get_device_errorcode_v2,
    dcmi_get_device_temperature,
    dcmi_get_device_voltage,
    dcmi_get_device_ecc_info,
    dcmi_get_device_frequency,
    dcmi_get_device_hbm_info,
    dcmi_get_device_memory_info_v3,
    dcmi_get_device_utilization_rate,
    dcmi_get_device_multi_utilization_rate,
    dcmi_get_device_multi_utilization_rate_period,
    dcmi_get_device_info,
    dcmi_get_device_ip,
    dcmi_get_device_network_health,
    dcmi_get_device_logic_id,
    dcmi_create_vdevice,
    dcmi_set_destroy_vdevice,
    dcmi_get_device_phyid_from_logicid,
    dcmi_get_device_logicid_from_phyid,
    dcmi_get_card_id_device_id_from_logicid,
    dcmi_get_card_id_device_id_from_phyid,
    dcmi_get_product_type,
    dcmi_set_device_reset,
    dcmi_get_device_outband_channel_state,
    dcmi_pre_reset_soc,
    dcmi_rescan_soc,
    dcmi_get_netdev_brother_device,
    dcmi_get_device_boot_status,
    dcmi_subscribe_fault_event,
    dcmi_get_npu_work_mode,
    dcmi_get_device_die_v2,
    dcmi_get_device_resource_info,
    dcmi_get_device_board_info,
    dcmi_get_pcie_link_bandwidth_info,
    dcmi_get_dcmi_version,
    dcmi_get_version,
    dcmi_get_mainboard_id,
    dcmi_get_affinity_cpu_info_by_device_id,
    dcmi_get_hccs_link_bandwidth_info,
    dcmi_start_hccsping_mesh,
    dcmi_stop_hccsping_mesh,
    dcmi_get_hccsping_mesh_info,
    dcmi_get_hccsping_mesh_state,
    dcmi_get_spod_node_status,
    dcmi_set_spod_node_status,
    dcmi_get_multi_die_policy,
    dcmi_set_multi_die_policy,
    dcmi_start_ub_ping_mesh,
    dcmi_stop_ub_ping_mesh,
    dcmi_get_ub_ping_mesh_info,
    dcmi_get_ub_ping_mesh_state,
    dcmi_get_urma_device_cnt,
    dcmi_get_eid_list_by_urma_dev_index,
    dcmi_get_memory_info,
    dcmi_get_device_errorcode,
    dcmi_mcu_get_power_info,
    dcmi_get_card_elabel_v2,
    dcmiv2_init,
    dcmiv2_get_device_list,
    dcmiv2_get_all_device_count,
    dcmiv2_get_device_type,
    dcmiv2_get_device_pcie_info,
    dcmiv2_get_device_chip_info,
    dcmiv2_get_device_power_info,
    dcmiv2_get_device_health,
    dcmiv2_get_device_error_code_list,
    dcmiv2_get_device_temperature,
    dcmiv2_get_device_voltage,
    dcmiv2_get_device_ecc_info,
    dcmiv2_get_device_frequency,
    dcmiv2_get_device_hbm_info,
    dcmiv2_get_device_utilization_rate,
    dcmiv2_get_device_multi_utilization_rate,
    dcmiv2_get_device_multi_utilization_rate_period,
    dcmiv2_get_device_info,
    dcmiv2_get_device_network_health,
    dcmiv2_get_chip_phy_id_by_dev_id,
    dcmiv2_get_dev_id_by_chip_phy_id,
    dcmiv2_reset_device,
    dcmiv2_get_device_outband_channel_state,
    dcmiv2_pre_reset_device,
    dcmiv2_rescan_device,
    dcmiv2_get_device_boot_status,
    dcmiv2_subscribe_fault_event,
    dcmiv2_get_device_die_id,
    dcmiv2_get_device_proc_mem_info,
    dcmiv2_get_device_board_info,
    dcmiv2_get_pcie_link_bandwidth_info,
    dcmiv2_get_dcmi_version,
    dcmiv2_get_mainboard_id,
    dcmiv2_get_affinity_cpu_info_by_dev_id,
    dcmiv2_start_ub_ping_mesh,
    dcmiv2_stop_ub_ping_mesh,
    dcmiv2_get_ub_ping_mesh_info,
    dcmiv2_get_ub_ping_mesh_state,
    dcmiv2_get_urma_device_cnt,
    dcmiv2_get_eid_list_by_urma_dev_index,
    dcmiv2_get_device_elabel_info,
    dcmiv2_get_port_pkt_stats_info,
);

/// `libloading` puts the `dlerror` text (which names the file or symbol) in the source.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The 66 prototypes of the vendor's V1 header we declare plus `dcmi_get_card_num_list`, and
/// the 42 of its V2 header.
const FUNCTION_COUNT: usize = 67 + 42;

const HEADERS: [&str; 2] =
    [include_str!("../include/dcmi_interface_api.h"), include_str!("../include/dcmi_interface_api_v2.h")];

/// Names of all functions the headers declare with `DCMIDLLEXPORT int name(`.
fn header_function_names() -> Vec<&'static str> {
    HEADERS
        .iter()
        .flat_map(|header| header.split("DCMIDLLEXPORT int ").skip(1))
        .filter_map(|declaration| declaration.split_once('(').map(|(name, _)| name.trim()))
        .collect()
}

#[test]
fn every_header_function_has_exactly_one_field() {
    let declared = header_function_names();
    assert_eq!(declared.len(), FUNCTION_COUNT, "prototypes in the header: {declared:?}");
    assert_eq!(FUNCTION_NAMES.len(), FUNCTION_COUNT);

    let declared_set: BTreeSet<&str> = declared.iter().copied().collect();
    let field_set: BTreeSet<&str> = FUNCTION_NAMES.iter().copied().collect();
    assert_eq!(declared_set.len(), FUNCTION_COUNT, "a prototype is declared twice");
    assert_eq!(declared_set, field_set, "header prototypes and DcmiLib fields differ");
}

/// Each function is resolved on its own: a library without DCMI symbols still loads,
/// and every field holds an error naming its symbol.
#[test]
fn missing_symbols_are_errors_in_their_own_fields() {
    // SAFETY: the C library is already loaded into this process, so opening it again
    // runs no initialisers; no resolved pointer is ever called.
    let library = unsafe { DcmiLib::new("libc.so.6") }
        .unwrap_or_else(|error| panic!("opening libc.so.6 through DcmiLib failed: {error}"));
    let resolutions = resolutions(&library);
    assert_eq!(resolutions.len(), FUNCTION_COUNT);
    for (symbol, resolution) in resolutions {
        let error = resolution.expect_err(&format!("libc unexpectedly exports {symbol}"));
        assert!(error.contains(symbol), "the error for {symbol} does not name it: {error}");
    }
}

#[test]
fn opening_a_missing_library_fails() {
    let missing = "/nonexistent/dcmi-sys-test/libdcmi.so";
    // SAFETY: the file does not exist, so nothing is loaded or called.
    let result = unsafe { DcmiLib::new(missing) };
    let error = result.err().map(|error| error_chain(&error));
    assert!(
        error.as_deref().is_some_and(|message| message.contains(missing)),
        "expected an error naming {missing}, got {error:?}"
    );
}

type Status = c_int;
type OutParamsFirstFn = unsafe extern "C" fn(*mut c_int, *mut c_int, c_uint) -> Status;
type LogicIdFn = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> Status;
type SubscribeFn = unsafe extern "C" fn(c_int, c_int, dcmi_event_filter, dcmi_fault_event_callback) -> Status;
type UtilizationPeriodFn = unsafe extern "C" fn(c_int, c_int, *mut dcmi_multi_utilization_info, c_int) -> Status;
type DeviceInfoFn = unsafe extern "C" fn(c_int, c_int, dcmi_main_cmd, c_uint, *mut c_void, *mut c_uint) -> Status;
type CardListFn = unsafe extern "C" fn(*mut c_int, *mut c_int, c_int) -> Status;
type FirmwareVersionFn = unsafe extern "C" fn(c_int, c_int, *mut c_char, c_uint, *mut c_int) -> Status;
type CardPowerFn = unsafe extern "C" fn(c_int, *mut c_int) -> Status;
type WorkModeFn = unsafe extern "C" fn(c_int, *mut c_uchar) -> Status;
type GetDiePolicyFn = unsafe extern "C" fn(*mut dcmi_multi_die_policy) -> Status;
type SetDiePolicyFn = unsafe extern "C" fn(dcmi_multi_die_policy) -> Status;
type SubscribeV2Fn = unsafe extern "C" fn(c_int, dcmi_event_filter, dcmi_fault_event_callback) -> Status;
type IdConversionV2Fn = unsafe extern "C" fn(c_uint, *mut c_uint) -> Status;
type DeviceCountV2Fn = unsafe extern "C" fn(*mut c_int) -> Status;
type PortStatsV2Fn = unsafe extern "C" fn(c_int, *mut dcmi_ub_port_info, *mut dcmi_port_pkt_stats_info) -> Status;
type DeviceInfoV2Fn = unsafe extern "C" fn(c_int, dcmi_main_cmd, c_uint, *mut c_void, *mut c_uint) -> Status;

/// The function pointer of a resolved field.
fn resolved<F: Copy, E>(field: &Result<F, E>) -> Option<F> {
    field.as_ref().ok().copied()
}

/// Compiles only if the accessor returns exactly the function-pointer type `F`.
fn has_signature<F>(_accessor: fn(&DcmiLib) -> Option<F>) {}

/// Signatures that are easy to get wrong, checked against the documented ABI.
#[test]
fn irregular_signatures() {
    // Out-params first.
    has_signature::<LogicIdFn>(|library| resolved(&library.dcmi_get_device_logic_id));
    has_signature::<OutParamsFirstFn>(|library| resolved(&library.dcmi_get_card_id_device_id_from_logicid));
    has_signature::<OutParamsFirstFn>(|library| resolved(&library.dcmi_get_card_id_device_id_from_phyid));
    // The real 4th parameter, and the filter passed by value.
    has_signature::<SubscribeFn>(|library| resolved(&library.dcmi_subscribe_fault_event));
    // Averaging period after the output struct.
    has_signature::<UtilizationPeriodFn>(|library| resolved(&library.dcmi_get_device_multi_utilization_rate_period));
    // Enum main command, raw sub command, untyped buffer, in/out size.
    has_signature::<DeviceInfoFn>(|library| resolved(&library.dcmi_get_device_info));
    // Not in the vendor header; same shape as dcmi_get_card_list.
    has_signature::<CardListFn>(|library| resolved(&library.dcmi_get_card_list));
    has_signature::<CardListFn>(|library| resolved(&library.dcmi_get_card_num_list));
    // Card-level calls without a device id.
    has_signature::<CardPowerFn>(|library| resolved(&library.dcmi_mcu_get_power_info));
    has_signature::<WorkModeFn>(|library| resolved(&library.dcmi_get_npu_work_mode));
    // Process-wide policy, no ids at all.
    has_signature::<GetDiePolicyFn>(|library| resolved(&library.dcmi_get_multi_die_policy));
    has_signature::<SetDiePolicyFn>(|library| resolved(&library.dcmi_set_multi_die_policy));
    // An unsigned buffer size, then the written length through a signed pointer.
    has_signature::<FirmwareVersionFn>(|library| resolved(&library.dcmi_get_version));
}

/// The V2 (Ascend950) signatures: one `dev_id` (the logic id) instead of (card, device).
#[test]
fn v2_signatures() {
    // The real 3rd parameter (the vendor header omits the callback), the filter by value.
    has_signature::<SubscribeV2Fn>(|library| resolved(&library.dcmiv2_subscribe_fault_event));
    // Unsigned ids both ways.
    has_signature::<IdConversionV2Fn>(|library| resolved(&library.dcmiv2_get_chip_phy_id_by_dev_id));
    has_signature::<IdConversionV2Fn>(|library| resolved(&library.dcmiv2_get_dev_id_by_chip_phy_id));
    // Enumeration has the shape of dcmi_get_card_list, with logic ids instead of cards.
    has_signature::<CardListFn>(|library| resolved(&library.dcmiv2_get_device_list));
    has_signature::<DeviceCountV2Fn>(|library| resolved(&library.dcmiv2_get_all_device_count));
    has_signature::<PortStatsV2Fn>(|library| resolved(&library.dcmiv2_get_port_pkt_stats_info));
    has_signature::<DeviceInfoV2Fn>(|library| resolved(&library.dcmiv2_get_device_info));
    has_signature::<CardPowerFn>(|library| resolved(&library.dcmiv2_get_device_power_info));
}

/// A Rust function with the C callback signature fits `dcmi_fault_event_callback`.
#[test]
fn fault_event_callback_type() {
    unsafe extern "C" fn on_fault_event(_event: *mut dcmi_event) {}
    let callback: dcmi_fault_event_callback = Some(on_fault_event);
    assert!(callback.is_some());
    assert_eq!(
        std::mem::size_of::<dcmi_fault_event_callback>(),
        std::mem::size_of::<usize>(),
        "an Option of a function pointer is one nullable pointer"
    );
}
