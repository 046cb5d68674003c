//! Checks the generated types against the documented DCMI ABI (LP64 Linux).
//!
//! Every number here is typed in from sizes, alignments and offsets measured by compiling the
//! vendor header (`dcmi_interface_api.h`, as Huawei's `Ascend/mind-cluster` ships it in
//! `component/ascend-common/devmanager/dcmi/`) with gcc on x86_64, not derived from the
//! bindings, so a wrong field type, order or array length in our header fails a test.
//! The bindings target LP64 Linux only; on any other data model these tests fail.

use std::mem::{align_of, offset_of, size_of};
use std::os::raw::{c_char, c_int, c_long, c_uchar, c_uint, c_ulong, c_ulonglong, c_ushort};

use dcmi_sys::*;

/// Asserts size and alignment of a struct, and the offset and type of the listed fields.
///
/// The type is checked at compile time by a function that borrows the field as `&Type`.
macro_rules! assert_layout {
    ($name:ty, size $size:expr, align $align:expr $(, $field:ident @ $offset:expr => $field_type:ty)* $(,)?) => {{
        assert_eq!(size_of::<$name>(), $size, "size of {}", stringify!($name));
        assert_eq!(align_of::<$name>(), $align, "alignment of {}", stringify!($name));
        $(
            assert_eq!(
                offset_of!($name, $field),
                $offset,
                "offset of {}::{}",
                stringify!($name),
                stringify!($field)
            );
            {
                #[allow(dead_code)]
                fn field_has_declared_type(value: &$name) -> &$field_type {
                    &value.$field
                }
            }
        )*
    }};
}

/// Like `assert_layout!` for unions, whose fields cannot be borrowed without `unsafe`.
macro_rules! assert_union_layout {
    ($name:ty, size $size:expr, align $align:expr $(, $field:ident)* $(,)?) => {{
        assert_eq!(size_of::<$name>(), $size, "size of {}", stringify!($name));
        assert_eq!(align_of::<$name>(), $align, "alignment of {}", stringify!($name));
        $(
            assert_eq!(offset_of!($name, $field), 0, "offset of {}::{}", stringify!($name), stringify!($field));
        )*
    }};
}

#[test]
fn chip_info() {
    assert_layout!(dcmi_chip_info, size 100, align 4,
        chip_type @ 0 => [c_uchar; 32],
        chip_name @ 32 => [c_uchar; 32],
        chip_ver @ 64 => [c_uchar; 32],
        aicore_cnt @ 96 => c_uint);
    assert_layout!(dcmi_chip_info_v2, size 132, align 4,
        chip_type @ 0 => [c_uchar; 32],
        chip_name @ 32 => [c_uchar; 32],
        chip_ver @ 64 => [c_uchar; 32],
        aicore_cnt @ 96 => c_uint,
        npu_name @ 100 => [c_uchar; 32]);
}

#[test]
fn pcie_info_all() {
    assert_layout!(dcmi_pcie_info_all, size 64, align 4,
        venderid @ 0 => c_uint,
        subvenderid @ 4 => c_uint,
        deviceid @ 8 => c_uint,
        subdeviceid @ 12 => c_uint,
        domain @ 16 => c_int,
        bdf_busid @ 20 => c_uint,
        bdf_deviceid @ 24 => c_uint,
        bdf_funcid @ 28 => c_uint,
        reserve @ 32 => [c_uchar; 32]);
}

#[test]
fn die_id_and_ecc_info() {
    assert_layout!(dcmi_die_id, size 20, align 4, soc_die @ 0 => [c_uint; 5]);
    assert_layout!(dcmi_ecc_info, size 36, align 4,
        enable_flag @ 0 => c_int,
        single_bit_error_cnt @ 4 => c_uint,
        double_bit_error_cnt @ 8 => c_uint,
        total_single_bit_error_cnt @ 12 => c_uint,
        total_double_bit_error_cnt @ 16 => c_uint,
        single_bit_isolated_pages_cnt @ 20 => c_uint,
        double_bit_isolated_pages_cnt @ 24 => c_uint,
        single_bit_next_isolated_pages_cnt @ 28 => c_uint,
        double_bit_next_isolated_pages_cnt @ 32 => c_uint);
}

#[test]
fn hbm_info() {
    assert_layout!(dcmi_hbm_info, size 32, align 8,
        memory_size @ 0 => c_ulonglong,
        freq @ 8 => c_uint,
        memory_usage @ 16 => c_ulonglong,
        temp @ 24 => c_int,
        bandwith_util_rate @ 28 => c_uint);
}

/// The vendor header's comment claims 96 bytes; LP64 padding and `unsigned long` make it 112.
#[test]
fn memory_info_is_112_bytes_not_96() {
    assert_layout!(dcmi_get_memory_info_stru, size 112, align 8,
        memory_size @ 0 => c_ulonglong,
        memory_available @ 8 => c_ulonglong,
        freq @ 16 => c_uint,
        hugepagesize @ 24 => c_ulong,
        hugepages_total @ 32 => c_ulong,
        hugepages_free @ 40 => c_ulong,
        utiliza @ 48 => c_uint,
        reserve @ 52 => [c_uchar; 60]);
    assert_layout!(dcmi_memory_info_stru, size 16, align 8,
        memory_size @ 0 => c_ulonglong,
        freq @ 8 => c_uint,
        utiliza @ 12 => c_uint);
}

#[test]
fn ip_addr() {
    assert_union_layout!(dcmi_ip_addr_u_addr, size 16, align 1, ip6, ip4);
    assert_layout!(dcmi_ip_addr, size 20, align 4,
        u_addr @ 0 => dcmi_ip_addr_u_addr,
        ip_type @ 16 => dcmi_ip_addr_type);
}

#[test]
fn vnpu_resources() {
    assert_layout!(dcmi_base_resource, size 64, align 8,
        token @ 0 => c_ulonglong,
        token_max @ 8 => c_ulonglong,
        task_timeout @ 16 => c_ulonglong,
        vfg_id @ 24 => c_uint,
        vip_mode @ 28 => c_uchar,
        reserved @ 29 => [c_uchar; 31]);
    assert_layout!(dcmi_computing_resource, size 96, align 8,
        aic @ 0 => f32,
        aiv @ 4 => f32,
        dsa @ 8 => c_ushort,
        rtsq @ 10 => c_ushort,
        acsq @ 12 => c_ushort,
        cdqm @ 14 => c_ushort,
        c_core @ 16 => c_ushort,
        ffts @ 18 => c_ushort,
        sdma @ 20 => c_ushort,
        pcie_dma @ 22 => c_ushort,
        memory_size @ 24 => c_ulonglong,
        event_id @ 32 => c_uint,
        notify_id @ 36 => c_uint,
        stream_id @ 40 => c_uint,
        model_id @ 44 => c_uint,
        topic_schedule_aicpu @ 48 => c_ushort,
        host_ctrl_cpu @ 50 => c_ushort,
        host_aicpu @ 52 => c_ushort,
        device_aicpu @ 54 => c_ushort,
        topic_ctrl_cpu_slot @ 56 => c_ushort,
        vdev_aicore_utilization @ 60 => c_uint,
        vdev_memory_total @ 64 => c_ulonglong,
        vdev_memory_free @ 72 => c_ulonglong,
        reserved @ 80 => [c_uchar; 12]);
    assert_layout!(dcmi_media_resource, size 56, align 4,
        jpegd @ 0 => f32,
        jpege @ 4 => f32,
        vpc @ 8 => f32,
        vdec @ 12 => f32,
        pngd @ 16 => f32,
        venc @ 20 => f32,
        reserved @ 24 => [c_uchar; 32]);
}

#[test]
fn vnpu_create() {
    assert_layout!(dcmi_create_vdev_out, size 52, align 4,
        vdev_id @ 0 => c_uint,
        pcie_bus @ 4 => c_uint,
        pcie_device @ 8 => c_uint,
        pcie_func @ 12 => c_uint,
        vfg_id @ 16 => c_uint,
        reserved @ 20 => [c_uchar; 32]);
    assert_layout!(dcmi_create_vdev_res_stru, size 104, align 4,
        vdev_id @ 0 => c_uint,
        vfg_id @ 4 => c_uint,
        template_name @ 8 => [c_char; 32],
        reserved @ 40 => [c_uchar; 64]);
}

#[test]
fn vnpu_queries() {
    assert_layout!(dcmi_vdev_query_info, size 256, align 8,
        name @ 0 => [c_char; 16],
        status @ 16 => c_uint,
        is_container_used @ 20 => c_uint,
        vfid @ 24 => c_uint,
        vfg_id @ 28 => c_uint,
        container_id @ 32 => c_ulonglong,
        base @ 40 => dcmi_base_resource,
        computing @ 104 => dcmi_computing_resource,
        media @ 200 => dcmi_media_resource);
    assert_layout!(dcmi_vdev_query_stru, size 264, align 8,
        vdev_id @ 0 => c_uint,
        query_info @ 8 => dcmi_vdev_query_info);
    assert_layout!(dcmi_soc_free_resource, size 224, align 8,
        vfg_num @ 0 => c_uint,
        vfg_bitmap @ 4 => c_uint,
        base @ 8 => dcmi_base_resource,
        computing @ 72 => dcmi_computing_resource,
        media @ 168 => dcmi_media_resource);
    assert_layout!(dcmi_soc_total_resource, size 360, align 8,
        vdev_num @ 0 => c_uint,
        vdev_id @ 4 => [c_uint; 32],
        vfg_num @ 132 => c_uint,
        vfg_bitmap @ 136 => c_uint,
        base @ 144 => dcmi_base_resource,
        computing @ 208 => dcmi_computing_resource,
        media @ 304 => dcmi_media_resource);
}

#[test]
fn spod_info() {
    assert_layout!(dcmi_spod_info, size 48, align 4,
        sdid @ 0 => c_uint,
        scale_type @ 4 => c_uint,
        super_pod_id @ 8 => c_uint,
        server_id @ 12 => c_uint,
        chassis_id @ 16 => c_uint,
        super_pod_type @ 20 => c_uint,
        reserve @ 24 => [c_uint; 6]);
}

#[test]
fn fault_events() {
    assert_layout!(dcmi_dms_fault_event, size 352, align 8,
        event_id @ 0 => c_uint,
        deviceid @ 4 => c_ushort,
        node_type @ 6 => c_uchar,
        node_id @ 7 => c_uchar,
        sub_node_type @ 8 => c_uchar,
        sub_node_id @ 9 => c_uchar,
        severity @ 10 => c_uchar,
        assertion @ 11 => c_uchar,
        event_serial_num @ 12 => c_int,
        notify_serial_num @ 16 => c_int,
        alarm_raised_time @ 24 => c_ulonglong,
        event_name @ 32 => [c_char; 256],
        additional_info @ 288 => [c_char; 32],
        resv @ 320 => [c_uchar; 32]);
    assert_union_layout!(dcmi_event_event_t, size 352, align 8, dms_event);
    assert_layout!(dcmi_event, size 360, align 8,
        type_ @ 0 => dcmi_event_type,
        event_t @ 8 => dcmi_event_event_t);
    assert_layout!(dcmi_event_filter, size 48, align 8,
        filter_flag @ 0 => c_ulonglong,
        event_id @ 8 => c_uint,
        severity @ 12 => c_uchar,
        node_type @ 13 => c_uchar,
        resv @ 14 => [c_uchar; 32]);
}

#[test]
fn process_memory_and_board_info() {
    assert_layout!(dcmi_proc_mem_info, size 16, align 8,
        proc_id @ 0 => c_int,
        proc_mem_usage @ 8 => c_ulong);
    assert_layout!(dcmi_board_info, size 16, align 4,
        board_id @ 0 => c_uint,
        pcb_id @ 4 => c_uint,
        bom_id @ 8 => c_uint,
        slot_id @ 12 => c_uint);
}

#[test]
fn pcie_link_bandwidth_info() {
    assert_layout!(dcmi_pcie_link_bandwidth_info, size 88, align 4,
        profiling_time @ 0 => c_int,
        tx_p_bw @ 4 => [c_uint; 3],
        tx_np_bw @ 16 => [c_uint; 3],
        tx_cpl_bw @ 28 => [c_uint; 3],
        tx_np_lantency @ 40 => [c_uint; 3],
        rx_p_bw @ 52 => [c_uint; 3],
        rx_np_bw @ 64 => [c_uint; 3],
        rx_cpl_bw @ 76 => [c_uint; 3]);
}

#[test]
fn hccs_statistics_and_bandwidth() {
    assert_layout!(dcmi_hccs_statistic_info, size 512, align 4,
        tx_cnt @ 0 => [c_uint; 16],
        rx_cnt @ 64 => [c_uint; 16],
        crc_err_cnt @ 128 => [c_uint; 16],
        retry_cnt @ 192 => [c_uint; 16],
        reserved_field_cnt @ 256 => [c_uint; 64]);
    assert_layout!(dcmi_hccs_statistic_info_u64, size 1024, align 8,
        tx_cnt @ 0 => [c_ulonglong; 16],
        rx_cnt @ 128 => [c_ulonglong; 16],
        crc_err_cnt @ 256 => [c_ulonglong; 16],
        retry_cnt @ 384 => [c_ulonglong; 16],
        reserved @ 512 => [c_ulonglong; 64]);
    assert_layout!(dcmi_hccs_bandwidth_info, size 280, align 8,
        profiling_time @ 0 => c_int,
        total_txbw @ 8 => f64,
        total_rxbw @ 16 => f64,
        tx_bandwidth @ 24 => [f64; 16],
        rx_bandwidth @ 152 => [f64; 16]);
}

#[test]
fn sio_crc_errors_and_elabel() {
    assert_layout!(dcmi_sio_crc_err_statistic_info, size 12, align 2,
        tx_error_count @ 0 => c_ushort,
        rx_error_count @ 2 => c_ushort,
        reserved @ 4 => [c_uchar; 8]);
    assert_layout!(dcmi_elabel_info, size 1280, align 1,
        product_name @ 0 => [c_char; 256],
        model @ 256 => [c_char; 256],
        manufacturer @ 512 => [c_char; 256],
        manufacturer_date @ 768 => [c_char; 256],
        serial_number @ 1024 => [c_char; 256]);
}

#[test]
fn hccs_ping_mesh() {
    assert_layout!(dcmi_hccsping_mesh_operate, size 1048, align 4,
        dst_addr_list @ 0 => [c_char; 1024],
        pkt_size @ 1024 => c_int,
        pkt_send_num @ 1028 => c_int,
        pkt_interval @ 1032 => c_int,
        timeout @ 1036 => c_int,
        task_interval @ 1040 => c_int,
        task_id @ 1044 => c_int);
    assert_layout!(dcmi_hccsping_mesh_info, size 3272, align 8,
        dst_addr @ 0 => [[c_char; 16]; 48],
        suc_pkt_num @ 768 => [c_uint; 48],
        fail_pkt_num @ 960 => [c_uint; 48],
        max_time @ 1152 => [c_long; 48],
        min_time @ 1536 => [c_long; 48],
        avg_time @ 1920 => [c_long; 48],
        tp95_time @ 2304 => [c_long; 48],
        reply_stat_num @ 2688 => [c_int; 48],
        ping_total_num @ 2880 => [c_ulonglong; 48],
        dest_num @ 3264 => c_int);
}

#[test]
fn ub_ping_mesh() {
    assert_layout!(dcmi_ub_ping_mesh_operate, size 1068, align 4,
        src_eid @ 0 => [c_char; 16],
        dst_eid_list @ 16 => [[c_char; 16]; 64],
        dst_num @ 1040 => c_int,
        pkt_size @ 1044 => c_int,
        pkt_send_num @ 1048 => c_int,
        pkt_interval @ 1052 => c_int,
        timeout @ 1056 => c_int,
        task_interval @ 1060 => c_int,
        task_id @ 1064 => c_int);
    assert_layout!(dcmi_ub_ping_mesh_info, size 3552, align 8,
        src_eid @ 0 => [c_char; 16],
        dst_eid_list @ 16 => [[c_char; 16]; 64],
        suc_pkt_num @ 1040 => [c_uint; 48],
        max_time @ 1424 => [c_long; 48],
        tp95_time @ 2576 => [c_long; 48],
        ping_total_num @ 3152 => [c_ulonglong; 48],
        dest_num @ 3536 => c_int,
        occur_time @ 3544 => c_ulong);
}

#[test]
fn multi_utilization_info() {
    assert_layout!(dcmi_multi_utilization_info, size 48, align 4,
        aic_util @ 0 => c_uint,
        aiv_util @ 4 => c_uint,
        aicore_util @ 8 => c_uint,
        npu_util @ 12 => c_uint,
        reserved @ 16 => [c_uint; 8]);
}

#[test]
fn urma_eids() {
    assert_union_layout!(dcmi_urma_eid_t, size 16, align 8, raw, in4, in6);
    assert_layout!(dcmi_urma_eid_in4, size 16, align 8,
        reserved @ 0 => c_ulong,
        prefix @ 8 => c_uint,
        addr @ 12 => c_uint);
    assert_layout!(dcmi_urma_eid_in6, size 16, align 8,
        subnet_prefix @ 0 => c_ulong,
        interface_id @ 8 => c_ulong);
    assert_layout!(dcmi_urma_eid_info_t, size 24, align 8,
        eid @ 0 => dcmi_urma_eid_t,
        eid_index @ 16 => c_uint);
}

#[test]
fn ub_port_statistics() {
    assert_layout!(dcmi_ub_port_info, size 8, align 4,
        udie_id @ 0 => c_int,
        port_id @ 4 => c_int);
    // port_mode, then 48 consecutive u64 counters from offset 8, then reserved[16] at 392.
    assert_layout!(dcmi_port_pkt_stats_info, size 520, align 8,
        port_mode @ 0 => c_int,
        ub_glb_ipv4_pkt_cnt_rx @ 8 => c_ulonglong,
        rx_send_ack_flit @ 8 + 20 * 8 => c_ulonglong,
        ub_glb_ipv4_pkt_cnt_tx @ 8 + 21 * 8 => c_ulonglong,
        crc_error_sum @ 8 + 39 * 8 => c_ulonglong,
        core_mib_rxpausepkts @ 8 + 40 * 8 => c_ulonglong,
        core_mib_txbadoctets @ 8 + 47 * 8 => c_ulonglong,
        reserved @ 392 => [c_ulonglong; 16]);
}

/// C enums are int-sized newtypes that accept any value the driver returns.
#[test]
fn enums_are_int_sized_and_accept_undeclared_values() {
    assert_eq!(size_of::<dcmi_boot_status>(), size_of::<c_int>());
    assert_eq!(size_of::<dcmi_main_cmd>(), size_of::<c_int>());
    // The driver reports 16 when a chip has finished booting after a hot reset.
    let finished_after_reset = dcmi_boot_status(16);
    assert_ne!(finished_after_reset, dcmi_boot_status::DCMI_BOOT_STATUS_FINISH);
    assert_eq!(finished_after_reset.0, 16);
}

#[test]
fn enum_values() {
    assert_eq!(dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V4.0, 0);
    assert_eq!(dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V6.0, 1);
    assert_eq!(dcmi_ip_addr_type::DCMI_IPADDR_TYPE_ANY.0, 2);

    assert_eq!(dcmi_unit_type::NPU_TYPE.0, 0);
    assert_eq!(dcmi_unit_type::MCU_TYPE.0, 1);
    assert_eq!(dcmi_unit_type::CPU_TYPE.0, 2);
    assert_eq!(dcmi_unit_type::INVALID_TYPE.0, 0xFF);

    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_OK.0, 0);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_SOCK_FAIL.0, 1);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_RECV_TIMEOUT.0, 2);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_UNREACH.0, 3);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_TIME_EXCEEDED.0, 4);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_FAULT.0, 5);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_INIT.0, 6);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_THREAD_ERR.0, 7);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_IP_SET.0, 8);
    assert_eq!(dcmi_rdfx_detect_result::DCMI_RDFX_DETECT_MAX.0, 0xFF);

    assert_eq!(dcmi_port_type::DCMI_VNIC_PORT.0, 0);
    assert_eq!(dcmi_port_type::DCMI_ROCE_PORT.0, 1);
    assert_eq!(dcmi_port_type::DCMI_INVALID_PORT.0, 2);

    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_DVPP.0, 0);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_ISP.0, 1);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_TS_GROUP_NUM.0, 2);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_CAN.0, 3);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_UART.0, 4);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_UPGRADE.0, 5);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_HCCS.0, 16);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_TEMP.0, 50);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_SVM.0, 51);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG.0, 52);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_SIO.0, 56);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_DEVICE_SHARE.0, 0x8001);
    assert_eq!(dcmi_main_cmd::DCMI_MAIN_CMD_MAX.0, 0x8002);

    assert_eq!(dcmi_freq_type::DCMI_FREQ_DDR.0, 1);
    assert_eq!(dcmi_freq_type::DCMI_FREQ_CTRLCPU.0, 2);
    assert_eq!(dcmi_freq_type::DCMI_FREQ_HBM.0, 6);
    assert_eq!(dcmi_freq_type::DCMI_FREQ_AICORE_CURRENT_.0, 7);
    assert_eq!(dcmi_freq_type::DCMI_FREQ_AICORE_MAX.0, 9);
    assert_eq!(dcmi_freq_type::DCMI_FREQ_VECTORCORE_CURRENT.0, 12);

    assert_eq!(dcmi_reset_channel::OUTBAND_CHANNEL.0, 0);
    assert_eq!(dcmi_reset_channel::INBAND_CHANNEL.0, 1);

    assert_eq!(dcmi_boot_status::DCMI_BOOT_STATUS_UNINIT.0, 0);
    assert_eq!(dcmi_boot_status::DCMI_BOOT_STATUS_BIOS.0, 1);
    assert_eq!(dcmi_boot_status::DCMI_BOOT_STATUS_OS.0, 2);
    assert_eq!(dcmi_boot_status::DCMI_BOOT_STATUS_FINISH.0, 3);

    assert_eq!(dcmi_device_type::DCMI_DEVICE_TYPE_DDR.0, 0);
    assert_eq!(dcmi_device_type::DCMI_DEVICE_TYPE_SRAM.0, 1);
    assert_eq!(dcmi_device_type::DCMI_DEVICE_TYPE_HBM.0, 2);
    assert_eq!(dcmi_device_type::DCMI_DEVICE_TYPE_NPU.0, 3);
    assert_eq!(dcmi_device_type::DCMI_DEVICE_TYPE_NONE.0, 0xFF);

    assert_eq!(dcmi_event_type::DCMI_DMS_FAULT_EVENT.0, 0);

    assert_eq!(dcmi_die_type::NDIE.0, 0);
    assert_eq!(dcmi_die_type::VDIE.0, 1);
    assert_eq!(dcmi_die_type::DDIE.0, 2);

    assert_eq!(dcmi_multi_die_policy::DCMI_MULTI_DIE_UNION_POLICY.0, 0);
    assert_eq!(dcmi_multi_die_policy::DCMI_MULTI_DIE_INDEP_POLICY.0, 1);
    assert_eq!(dcmi_multi_die_policy::DCMI_MULTI_DIE_POLICY_MAX.0, 2);
}

#[test]
fn define_values() {
    assert_eq!(MAX_CHIP_NAME_LEN, 32);
    assert_eq!(TEMPLATE_NAME_LEN, 32);
    assert_eq!(DIE_ID_COUNT, 5);
    assert_eq!(AGENTDRV_PROF_DATA_NUM, 3);
    assert_eq!(MAX_LENGTH, 256);
    assert_eq!(DCMI_UTIL_RESERVED_LEN, 8);
    assert_eq!(DCMI_VDEV_RES_NAME_LEN, 16);
    assert_eq!(DCMI_VDEV_SIZE, 20);
    assert_eq!(DCMI_VDEV_FOR_RESERVE, 32);
    assert_eq!(DCMI_SOC_SPLIT_MAX, 32);
    assert_eq!(DCMI_MAX_EVENT_NAME_LENGTH, 256);
    assert_eq!(DCMI_MAX_EVENT_DATA_LENGTH, 32);
    assert_eq!(DCMI_MAX_EVENT_RESV_LENGTH, 32);
    assert_eq!(HCCS_MAX_PCS_NUM, 16);
    assert_eq!(HCCS_RES_PCS_NUM, 64);
    assert_eq!(IP_ADDR_LIST_LEN, 1024);
    assert_eq!(HCCS_PING_MESH_MAX_NUM, 48);
    assert_eq!(ADDR_MAX_LEN, 16);
    assert_eq!(UB_PING_MESH_MAX_NUM, 48);
    assert_eq!(UB_ADDR_MAX_LEN, 16);
    assert_eq!(UB_DST_EIT_MAX_LEN, 64);
    assert_eq!(DCMI_URMA_EID_MAX_COUNT, 32);
    assert_eq!(DCMI_URMA_EID_SIZE, 16);
}

/// The filter flags are bits of the 64-bit `filter_flag`, so they are `u64` constants.
#[test]
fn event_filter_flags_are_u64_bits() {
    let flags: [u64; 3] =
        [DCMI_EVENT_FILTER_FLAG_EVENT_ID, DCMI_EVENT_FILTER_FLAG_SERVERITY, DCMI_EVENT_FILTER_FLAG_NODE_TYPE];
    assert_eq!(flags, [1 << 0, 1 << 1, 1 << 2]);
    let filter = dcmi_event_filter {
        filter_flag: DCMI_EVENT_FILTER_FLAG_SERVERITY | DCMI_EVENT_FILTER_FLAG_NODE_TYPE,
        ..Default::default()
    };
    assert_eq!(filter.filter_flag, 0b110);
}

/// Consumers zero-initialise output buffers with `Default` and log them with `Debug`.
#[test]
fn every_struct_and_union_is_copy_default_debug() {
    fn plain_data<T: Copy + Default + std::fmt::Debug>() {}
    plain_data::<dcmi_chip_info>();
    plain_data::<dcmi_chip_info_v2>();
    plain_data::<dcmi_pcie_info_all>();
    plain_data::<dcmi_die_id>();
    plain_data::<dcmi_ecc_info>();
    plain_data::<dcmi_hbm_info>();
    plain_data::<dcmi_get_memory_info_stru>();
    plain_data::<dcmi_ip_addr_u_addr>();
    plain_data::<dcmi_ip_addr>();
    plain_data::<dcmi_base_resource>();
    plain_data::<dcmi_computing_resource>();
    plain_data::<dcmi_media_resource>();
    plain_data::<dcmi_create_vdev_out>();
    plain_data::<dcmi_create_vdev_res_stru>();
    plain_data::<dcmi_vdev_query_info>();
    plain_data::<dcmi_vdev_query_stru>();
    plain_data::<dcmi_soc_free_resource>();
    plain_data::<dcmi_soc_total_resource>();
    plain_data::<dcmi_spod_info>();
    plain_data::<dcmi_dms_fault_event>();
    plain_data::<dcmi_event_event_t>();
    plain_data::<dcmi_event>();
    plain_data::<dcmi_event_filter>();
    plain_data::<dcmi_proc_mem_info>();
    plain_data::<dcmi_board_info>();
    plain_data::<dcmi_pcie_link_bandwidth_info>();
    plain_data::<dcmi_hccs_statistic_info>();
    plain_data::<dcmi_hccs_statistic_info_u64>();
    plain_data::<dcmi_hccs_bandwidth_info>();
    plain_data::<dcmi_sio_crc_err_statistic_info>();
    plain_data::<dcmi_elabel_info>();
    plain_data::<dcmi_hccsping_mesh_operate>();
    plain_data::<dcmi_hccsping_mesh_info>();
    plain_data::<dcmi_ub_ping_mesh_operate>();
    plain_data::<dcmi_ub_ping_mesh_info>();
    plain_data::<dcmi_multi_utilization_info>();
    plain_data::<dcmi_urma_eid_in4>();
    plain_data::<dcmi_urma_eid_in6>();
    plain_data::<dcmi_urma_eid_t>();
    plain_data::<dcmi_urma_eid_info_t>();
    plain_data::<dcmi_ub_port_info>();
    plain_data::<dcmi_port_pkt_stats_info>();
    plain_data::<dcmi_memory_info_stru>();

    // `Default` is all zero bytes, as C callers get from `memset(&buf, 0, sizeof buf)`.
    let event = dcmi_event::default();
    assert_eq!(event.type_, dcmi_event_type::DCMI_DMS_FAULT_EVENT);
    let memory = dcmi_get_memory_info_stru::default();
    assert_eq!((memory.hugepagesize, memory.reserve), (0, [0; 60]));
}
