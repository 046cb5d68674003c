//! The exported DCMI functions of both API families, named, so injection rules and support tables can refer
//! to them.

use crate::chip_type::Api;

macro_rules! functions {
    ($($variant:ident => $name:literal,)*) => {
        /// One exported DCMI function: the 67 V1 functions (including `dcmi_get_card_num_list`) in
        /// header order, then the 42 V2 (`dcmiv2_*`) functions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)] // each variant is the C symbol of the same name
        pub enum Function {
            $($variant,)*
        }

        impl Function {
            /// Every exported function, in header order.
            pub const ALL: &'static [Function] = &[$(Function::$variant,)*];

            /// The C symbol name, e.g. `dcmi_get_device_health`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Function::$variant => $name,)*
                }
            }
        }
    };
}

functions! {
    Init => "dcmi_init",
    GetCardList => "dcmi_get_card_list",
    GetCardNumList => "dcmi_get_card_num_list",
    GetDeviceNumInCard => "dcmi_get_device_num_in_card",
    GetDeviceIdInCard => "dcmi_get_device_id_in_card",
    GetDeviceType => "dcmi_get_device_type",
    GetDevicePcieInfoV2 => "dcmi_get_device_pcie_info_v2",
    GetDeviceChipInfo => "dcmi_get_device_chip_info",
    GetDeviceChipInfoV2 => "dcmi_get_device_chip_info_v2",
    GetDevicePowerInfo => "dcmi_get_device_power_info",
    GetDeviceHealth => "dcmi_get_device_health",
    GetDeviceErrorcodeV2 => "dcmi_get_device_errorcode_v2",
    GetDeviceTemperature => "dcmi_get_device_temperature",
    GetDeviceVoltage => "dcmi_get_device_voltage",
    GetDeviceEccInfo => "dcmi_get_device_ecc_info",
    GetDeviceFrequency => "dcmi_get_device_frequency",
    GetDeviceHbmInfo => "dcmi_get_device_hbm_info",
    GetDeviceMemoryInfoV3 => "dcmi_get_device_memory_info_v3",
    GetDeviceUtilizationRate => "dcmi_get_device_utilization_rate",
    GetDeviceMultiUtilizationRate => "dcmi_get_device_multi_utilization_rate",
    GetDeviceMultiUtilizationRatePeriod => "dcmi_get_device_multi_utilization_rate_period",
    GetDeviceInfo => "dcmi_get_device_info",
    GetDeviceIp => "dcmi_get_device_ip",
    GetDeviceNetworkHealth => "dcmi_get_device_network_health",
    GetDeviceLogicId => "dcmi_get_device_logic_id",
    CreateVdevice => "dcmi_create_vdevice",
    SetDestroyVdevice => "dcmi_set_destroy_vdevice",
    GetDevicePhyidFromLogicid => "dcmi_get_device_phyid_from_logicid",
    GetDeviceLogicidFromPhyid => "dcmi_get_device_logicid_from_phyid",
    GetCardIdDeviceIdFromLogicid => "dcmi_get_card_id_device_id_from_logicid",
    GetCardIdDeviceIdFromPhyid => "dcmi_get_card_id_device_id_from_phyid",
    GetProductType => "dcmi_get_product_type",
    SetDeviceReset => "dcmi_set_device_reset",
    GetDeviceOutbandChannelState => "dcmi_get_device_outband_channel_state",
    PreResetSoc => "dcmi_pre_reset_soc",
    RescanSoc => "dcmi_rescan_soc",
    GetNetdevBrotherDevice => "dcmi_get_netdev_brother_device",
    GetDeviceBootStatus => "dcmi_get_device_boot_status",
    SubscribeFaultEvent => "dcmi_subscribe_fault_event",
    GetNpuWorkMode => "dcmi_get_npu_work_mode",
    GetDeviceDieV2 => "dcmi_get_device_die_v2",
    GetDeviceResourceInfo => "dcmi_get_device_resource_info",
    GetDeviceBoardInfo => "dcmi_get_device_board_info",
    GetPcieLinkBandwidthInfo => "dcmi_get_pcie_link_bandwidth_info",
    GetDcmiVersion => "dcmi_get_dcmi_version",
    GetVersion => "dcmi_get_version",
    GetMainboardId => "dcmi_get_mainboard_id",
    GetAffinityCpuInfoByDeviceId => "dcmi_get_affinity_cpu_info_by_device_id",
    GetHccsLinkBandwidthInfo => "dcmi_get_hccs_link_bandwidth_info",
    StartHccspingMesh => "dcmi_start_hccsping_mesh",
    StopHccspingMesh => "dcmi_stop_hccsping_mesh",
    GetHccspingMeshInfo => "dcmi_get_hccsping_mesh_info",
    GetHccspingMeshState => "dcmi_get_hccsping_mesh_state",
    GetSpodNodeStatus => "dcmi_get_spod_node_status",
    SetSpodNodeStatus => "dcmi_set_spod_node_status",
    GetMultiDiePolicy => "dcmi_get_multi_die_policy",
    SetMultiDiePolicy => "dcmi_set_multi_die_policy",
    StartUbPingMesh => "dcmi_start_ub_ping_mesh",
    StopUbPingMesh => "dcmi_stop_ub_ping_mesh",
    GetUbPingMeshInfo => "dcmi_get_ub_ping_mesh_info",
    GetUbPingMeshState => "dcmi_get_ub_ping_mesh_state",
    GetUrmaDeviceCnt => "dcmi_get_urma_device_cnt",
    GetEidListByUrmaDevIndex => "dcmi_get_eid_list_by_urma_dev_index",
    GetMemoryInfo => "dcmi_get_memory_info",
    GetDeviceErrorcode => "dcmi_get_device_errorcode",
    McuGetPowerInfo => "dcmi_mcu_get_power_info",
    GetCardElabelV2 => "dcmi_get_card_elabel_v2",
    V2Init => "dcmiv2_init",
    V2GetDeviceList => "dcmiv2_get_device_list",
    V2GetAllDeviceCount => "dcmiv2_get_all_device_count",
    V2GetDeviceType => "dcmiv2_get_device_type",
    V2GetDevicePcieInfo => "dcmiv2_get_device_pcie_info",
    V2GetDeviceChipInfo => "dcmiv2_get_device_chip_info",
    V2GetDevicePowerInfo => "dcmiv2_get_device_power_info",
    V2GetDeviceHealth => "dcmiv2_get_device_health",
    V2GetDeviceErrorCodeList => "dcmiv2_get_device_error_code_list",
    V2GetDeviceTemperature => "dcmiv2_get_device_temperature",
    V2GetDeviceVoltage => "dcmiv2_get_device_voltage",
    V2GetDeviceEccInfo => "dcmiv2_get_device_ecc_info",
    V2GetDeviceFrequency => "dcmiv2_get_device_frequency",
    V2GetDeviceHbmInfo => "dcmiv2_get_device_hbm_info",
    V2GetDeviceUtilizationRate => "dcmiv2_get_device_utilization_rate",
    V2GetDeviceMultiUtilizationRate => "dcmiv2_get_device_multi_utilization_rate",
    V2GetDeviceMultiUtilizationRatePeriod => "dcmiv2_get_device_multi_utilization_rate_period",
    V2GetDeviceInfo => "dcmiv2_get_device_info",
    V2GetDeviceNetworkHealth => "dcmiv2_get_device_network_health",
    V2GetChipPhyIdByDevId => "dcmiv2_get_chip_phy_id_by_dev_id",
    V2GetDevIdByChipPhyId => "dcmiv2_get_dev_id_by_chip_phy_id",
    V2ResetDevice => "dcmiv2_reset_device",
    V2GetDeviceOutbandChannelState => "dcmiv2_get_device_outband_channel_state",
    V2PreResetDevice => "dcmiv2_pre_reset_device",
    V2RescanDevice => "dcmiv2_rescan_device",
    V2GetDeviceBootStatus => "dcmiv2_get_device_boot_status",
    V2SubscribeFaultEvent => "dcmiv2_subscribe_fault_event",
    V2GetDeviceDieId => "dcmiv2_get_device_die_id",
    V2GetDeviceProcMemInfo => "dcmiv2_get_device_proc_mem_info",
    V2GetDeviceBoardInfo => "dcmiv2_get_device_board_info",
    V2GetPcieLinkBandwidthInfo => "dcmiv2_get_pcie_link_bandwidth_info",
    V2GetDcmiVersion => "dcmiv2_get_dcmi_version",
    V2GetMainboardId => "dcmiv2_get_mainboard_id",
    V2GetAffinityCpuInfoByDevId => "dcmiv2_get_affinity_cpu_info_by_dev_id",
    V2StartUbPingMesh => "dcmiv2_start_ub_ping_mesh",
    V2StopUbPingMesh => "dcmiv2_stop_ub_ping_mesh",
    V2GetUbPingMeshInfo => "dcmiv2_get_ub_ping_mesh_info",
    V2GetUbPingMeshState => "dcmiv2_get_ub_ping_mesh_state",
    V2GetUrmaDeviceCnt => "dcmiv2_get_urma_device_cnt",
    V2GetEidListByUrmaDevIndex => "dcmiv2_get_eid_list_by_urma_dev_index",
    V2GetDeviceElabelInfo => "dcmiv2_get_device_elabel_info",
    V2GetPortPktStatsInfo => "dcmiv2_get_port_pkt_stats_info",
}

impl Function {
    /// Number of exported functions.
    pub const COUNT: usize = Function::ALL.len();

    /// The function whose C symbol is `name`.
    pub fn from_name(name: &str) -> Option<Function> {
        Function::ALL.iter().copied().find(|function| function.name() == name)
    }

    /// Position in [`Function::ALL`], for per-function tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The API family the function belongs to (V2 = the `dcmiv2_*` functions, listed last).
    pub fn api(self) -> Api {
        if self.index() >= Function::V2Init.index() {
            Api::V2
        } else {
            Api::V1
        }
    }
}

impl std::fmt::Display for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
