//! Compile-time proof that every export has exactly the signature of the bindgen function pointer
//! in `dcmi_sys::DcmiLib`, so the simulator cannot drift from the header.
//!
//! `same` takes the `DcmiLib` field (a `Result<fn pointer, _>`) and the export: the export only
//! coerces to the field's pointer type when parameter and return types are identical. The test
//! `header_functions_are_all_exported` checks the other direction (every header prototype has an
//! export).

use super::{cluster, device_info, enumeration, health, identity, init, reset, telemetry, v2, vnpu};

#[allow(dead_code)] // never called: it only has to type-check
fn exports_match_bindings(library: &dcmi_sys::DcmiLib) {
    fn same<F, E>(_field: &Result<F, E>, _export: F) {}
    same(&library.dcmi_create_vdevice, vnpu::dcmi_create_vdevice);
    same(&library.dcmi_get_affinity_cpu_info_by_device_id, identity::dcmi_get_affinity_cpu_info_by_device_id);
    same(&library.dcmi_get_card_elabel_v2, identity::dcmi_get_card_elabel_v2);
    same(&library.dcmi_get_card_id_device_id_from_logicid, enumeration::dcmi_get_card_id_device_id_from_logicid);
    same(&library.dcmi_get_card_id_device_id_from_phyid, enumeration::dcmi_get_card_id_device_id_from_phyid);
    same(&library.dcmi_get_card_list, enumeration::dcmi_get_card_list);
    same(&library.dcmi_get_card_num_list, enumeration::dcmi_get_card_num_list);
    same(&library.dcmi_get_dcmi_version, init::dcmi_get_dcmi_version);
    same(&library.dcmi_get_device_board_info, identity::dcmi_get_device_board_info);
    same(&library.dcmi_get_device_boot_status, reset::dcmi_get_device_boot_status);
    same(&library.dcmi_get_device_chip_info, identity::dcmi_get_device_chip_info);
    same(&library.dcmi_get_device_chip_info_v2, identity::dcmi_get_device_chip_info_v2);
    same(&library.dcmi_get_device_die_v2, identity::dcmi_get_device_die_v2);
    same(&library.dcmi_get_device_ecc_info, telemetry::dcmi_get_device_ecc_info);
    same(&library.dcmi_get_device_errorcode, health::dcmi_get_device_errorcode);
    same(&library.dcmi_get_device_errorcode_v2, health::dcmi_get_device_errorcode_v2);
    same(&library.dcmi_get_device_frequency, telemetry::dcmi_get_device_frequency);
    same(&library.dcmi_get_device_hbm_info, telemetry::dcmi_get_device_hbm_info);
    same(&library.dcmi_get_device_health, health::dcmi_get_device_health);
    same(&library.dcmi_get_device_id_in_card, enumeration::dcmi_get_device_id_in_card);
    same(&library.dcmi_get_device_info, device_info::dcmi_get_device_info);
    same(&library.dcmi_get_device_ip, health::dcmi_get_device_ip);
    same(&library.dcmi_get_device_logic_id, enumeration::dcmi_get_device_logic_id);
    same(&library.dcmi_get_device_logicid_from_phyid, enumeration::dcmi_get_device_logicid_from_phyid);
    same(&library.dcmi_get_device_memory_info_v3, telemetry::dcmi_get_device_memory_info_v3);
    same(&library.dcmi_get_device_multi_utilization_rate, telemetry::dcmi_get_device_multi_utilization_rate);
    same(
        &library.dcmi_get_device_multi_utilization_rate_period,
        telemetry::dcmi_get_device_multi_utilization_rate_period,
    );
    same(&library.dcmi_get_device_network_health, health::dcmi_get_device_network_health);
    same(&library.dcmi_get_device_num_in_card, enumeration::dcmi_get_device_num_in_card);
    same(&library.dcmi_get_device_outband_channel_state, reset::dcmi_get_device_outband_channel_state);
    same(&library.dcmi_get_device_pcie_info_v2, identity::dcmi_get_device_pcie_info_v2);
    same(&library.dcmi_get_device_phyid_from_logicid, enumeration::dcmi_get_device_phyid_from_logicid);
    same(&library.dcmi_get_device_power_info, telemetry::dcmi_get_device_power_info);
    same(&library.dcmi_get_device_resource_info, telemetry::dcmi_get_device_resource_info);
    same(&library.dcmi_get_device_temperature, telemetry::dcmi_get_device_temperature);
    same(&library.dcmi_get_device_type, enumeration::dcmi_get_device_type);
    same(&library.dcmi_get_device_utilization_rate, telemetry::dcmi_get_device_utilization_rate);
    same(&library.dcmi_get_device_voltage, telemetry::dcmi_get_device_voltage);
    same(&library.dcmi_get_eid_list_by_urma_dev_index, cluster::dcmi_get_eid_list_by_urma_dev_index);
    same(&library.dcmi_get_hccs_link_bandwidth_info, telemetry::dcmi_get_hccs_link_bandwidth_info);
    same(&library.dcmi_get_hccsping_mesh_info, cluster::dcmi_get_hccsping_mesh_info);
    same(&library.dcmi_get_hccsping_mesh_state, cluster::dcmi_get_hccsping_mesh_state);
    same(&library.dcmi_get_mainboard_id, identity::dcmi_get_mainboard_id);
    same(&library.dcmi_get_memory_info, telemetry::dcmi_get_memory_info);
    same(&library.dcmi_get_multi_die_policy, cluster::dcmi_get_multi_die_policy);
    same(&library.dcmi_get_netdev_brother_device, reset::dcmi_get_netdev_brother_device);
    same(&library.dcmi_get_npu_work_mode, identity::dcmi_get_npu_work_mode);
    same(&library.dcmi_get_pcie_link_bandwidth_info, telemetry::dcmi_get_pcie_link_bandwidth_info);
    same(&library.dcmi_get_product_type, identity::dcmi_get_product_type);
    same(&library.dcmi_get_version, identity::dcmi_get_version);
    same(&library.dcmi_get_spod_node_status, cluster::dcmi_get_spod_node_status);
    same(&library.dcmi_get_ub_ping_mesh_info, cluster::dcmi_get_ub_ping_mesh_info);
    same(&library.dcmi_get_ub_ping_mesh_state, cluster::dcmi_get_ub_ping_mesh_state);
    same(&library.dcmi_get_urma_device_cnt, cluster::dcmi_get_urma_device_cnt);
    same(&library.dcmi_init, init::dcmi_init);
    same(&library.dcmi_mcu_get_power_info, telemetry::dcmi_mcu_get_power_info);
    same(&library.dcmi_pre_reset_soc, reset::dcmi_pre_reset_soc);
    same(&library.dcmi_rescan_soc, reset::dcmi_rescan_soc);
    same(&library.dcmi_set_destroy_vdevice, vnpu::dcmi_set_destroy_vdevice);
    same(&library.dcmi_set_device_reset, reset::dcmi_set_device_reset);
    same(&library.dcmi_set_multi_die_policy, cluster::dcmi_set_multi_die_policy);
    same(&library.dcmi_set_spod_node_status, cluster::dcmi_set_spod_node_status);
    same(&library.dcmi_start_hccsping_mesh, cluster::dcmi_start_hccsping_mesh);
    same(&library.dcmi_start_ub_ping_mesh, cluster::dcmi_start_ub_ping_mesh);
    same(&library.dcmi_stop_hccsping_mesh, cluster::dcmi_stop_hccsping_mesh);
    same(&library.dcmi_stop_ub_ping_mesh, cluster::dcmi_stop_ub_ping_mesh);
    same(&library.dcmi_subscribe_fault_event, health::dcmi_subscribe_fault_event);
    same(&library.dcmiv2_init, v2::dcmiv2_init);
    same(&library.dcmiv2_get_device_list, v2::dcmiv2_get_device_list);
    same(&library.dcmiv2_get_all_device_count, v2::dcmiv2_get_all_device_count);
    same(&library.dcmiv2_get_device_type, v2::dcmiv2_get_device_type);
    same(&library.dcmiv2_get_device_pcie_info, v2::dcmiv2_get_device_pcie_info);
    same(&library.dcmiv2_get_device_chip_info, v2::dcmiv2_get_device_chip_info);
    same(&library.dcmiv2_get_device_power_info, v2::dcmiv2_get_device_power_info);
    same(&library.dcmiv2_get_device_health, v2::dcmiv2_get_device_health);
    same(&library.dcmiv2_get_device_error_code_list, v2::dcmiv2_get_device_error_code_list);
    same(&library.dcmiv2_get_device_temperature, v2::dcmiv2_get_device_temperature);
    same(&library.dcmiv2_get_device_voltage, v2::dcmiv2_get_device_voltage);
    same(&library.dcmiv2_get_device_ecc_info, v2::dcmiv2_get_device_ecc_info);
    same(&library.dcmiv2_get_device_frequency, v2::dcmiv2_get_device_frequency);
    same(&library.dcmiv2_get_device_hbm_info, v2::dcmiv2_get_device_hbm_info);
    same(&library.dcmiv2_get_device_utilization_rate, v2::dcmiv2_get_device_utilization_rate);
    same(&library.dcmiv2_get_device_multi_utilization_rate, v2::dcmiv2_get_device_multi_utilization_rate);
    same(&library.dcmiv2_get_device_multi_utilization_rate_period, v2::dcmiv2_get_device_multi_utilization_rate_period);
    same(&library.dcmiv2_get_device_info, v2::dcmiv2_get_device_info);
    same(&library.dcmiv2_get_device_network_health, v2::dcmiv2_get_device_network_health);
    same(&library.dcmiv2_get_chip_phy_id_by_dev_id, v2::dcmiv2_get_chip_phy_id_by_dev_id);
    same(&library.dcmiv2_get_dev_id_by_chip_phy_id, v2::dcmiv2_get_dev_id_by_chip_phy_id);
    same(&library.dcmiv2_reset_device, v2::dcmiv2_reset_device);
    same(&library.dcmiv2_get_device_outband_channel_state, v2::dcmiv2_get_device_outband_channel_state);
    same(&library.dcmiv2_pre_reset_device, v2::dcmiv2_pre_reset_device);
    same(&library.dcmiv2_rescan_device, v2::dcmiv2_rescan_device);
    same(&library.dcmiv2_get_device_boot_status, v2::dcmiv2_get_device_boot_status);
    same(&library.dcmiv2_subscribe_fault_event, v2::dcmiv2_subscribe_fault_event);
    same(&library.dcmiv2_get_device_die_id, v2::dcmiv2_get_device_die_id);
    same(&library.dcmiv2_get_device_proc_mem_info, v2::dcmiv2_get_device_proc_mem_info);
    same(&library.dcmiv2_get_device_board_info, v2::dcmiv2_get_device_board_info);
    same(&library.dcmiv2_get_pcie_link_bandwidth_info, v2::dcmiv2_get_pcie_link_bandwidth_info);
    same(&library.dcmiv2_get_dcmi_version, v2::dcmiv2_get_dcmi_version);
    same(&library.dcmiv2_get_mainboard_id, v2::dcmiv2_get_mainboard_id);
    same(&library.dcmiv2_get_affinity_cpu_info_by_dev_id, v2::dcmiv2_get_affinity_cpu_info_by_dev_id);
    same(&library.dcmiv2_start_ub_ping_mesh, v2::dcmiv2_start_ub_ping_mesh);
    same(&library.dcmiv2_stop_ub_ping_mesh, v2::dcmiv2_stop_ub_ping_mesh);
    same(&library.dcmiv2_get_ub_ping_mesh_info, v2::dcmiv2_get_ub_ping_mesh_info);
    same(&library.dcmiv2_get_ub_ping_mesh_state, v2::dcmiv2_get_ub_ping_mesh_state);
    same(&library.dcmiv2_get_urma_device_cnt, v2::dcmiv2_get_urma_device_cnt);
    same(&library.dcmiv2_get_eid_list_by_urma_dev_index, v2::dcmiv2_get_eid_list_by_urma_dev_index);
    same(&library.dcmiv2_get_device_elabel_info, v2::dcmiv2_get_device_elabel_info);
    same(&library.dcmiv2_get_port_pkt_stats_info, v2::dcmiv2_get_port_pkt_stats_info);
}
