//! Which functions, frequency types and utilization types each chip family answers (the rest: -8255).
//!
//! The tables follow what the real chips do, as Huawei's DCMI API reference states it for each product (the Atlas A2,
//! A3 and Ascend950 volumes are in the CANN driver repository, github.com/verylucky01/driver, under `docs/en/`) and as
//! `Ascend/mind-cluster` calls the driver (`component/ascend-common/devmanager/`): 310P has no chip power but MCU card
//! power (`a310pmgr.go`), 910B and A3 have no DDR memory info, only the 910 family takes fault subscriptions, and
//! so on.
//! A topology can adjust them per chip with `supported` / `unsupported` lists. A family answers only the
//! functions of its API family: V1 up to the 910 A3, V2 (`dcmiv2_*`) on Ascend950.

use crate::chip_type::ChipType;
use crate::function::Function;

/// True when chips of family `chip_type` implement `function` (before per-chip adjustments).
pub fn supports(chip_type: ChipType, function: Function) -> bool {
    use ChipType::*;
    use Function::*;
    if function.api() != chip_type.api() {
        return false;
    }
    match function {
        GetDevicePowerInfo => chip_type != Ascend310P,
        McuGetPowerInfo => chip_type == Ascend310P,
        GetDeviceHbmInfo => chip_type.has_hbm(),
        GetDeviceMemoryInfoV3 | GetMemoryInfo => chip_type.has_ddr(),
        GetDeviceMultiUtilizationRate | GetDeviceMultiUtilizationRatePeriod => {
            matches!(chip_type, Ascend310P | Ascend910B | Ascend910A3)
        }
        GetDeviceIp
        | GetDeviceNetworkHealth
        | SubscribeFaultEvent
        | GetDeviceOutbandChannelState
        | GetNetdevBrotherDevice => chip_type.is_910_family(),
        CreateVdevice | SetDestroyVdevice => {
            matches!(chip_type, Ascend310P | Ascend910 | Ascend910B | Ascend910A3)
        }
        GetNpuWorkMode => chip_type == Ascend910,
        GetPcieLinkBandwidthInfo => chip_type == Ascend910B,
        GetHccsLinkBandwidthInfo
        | StartHccspingMesh
        | StopHccspingMesh
        | GetHccspingMeshInfo
        | GetHccspingMeshState => matches!(chip_type, Ascend910B | Ascend910A3),
        GetSpodNodeStatus | SetSpodNodeStatus | GetMultiDiePolicy | SetMultiDiePolicy => chip_type == Ascend910A3,
        // Unified bus and URMA exist on Ascend950 (A5) only, which the simulator does not model.
        StartUbPingMesh
        | StopUbPingMesh
        | GetUbPingMeshInfo
        | GetUbPingMeshState
        | GetUrmaDeviceCnt
        | GetEidListByUrmaDevIndex => false,
        // The simulated Ascend950 models no UB ping-mesh tasks.
        V2StartUbPingMesh | V2StopUbPingMesh | V2GetUbPingMeshInfo | V2GetUbPingMeshState => false,
        GetProductType => matches!(chip_type, Ascend310 | Ascend310B | Ascend310P),
        _ => true,
    }
}

/// `dcmi_freq_type` values (`enum dcmi_freq_type` of the vendor's `dcmi_interface_api.h`, as `Ascend/mind-cluster`
/// ships it in `component/ascend-common/devmanager/dcmi/`).
pub mod freq_type {
    /// DDR clock.
    pub const DDR: i32 = 1;
    /// Control-CPU clock.
    pub const CTRLCPU: i32 = 2;
    /// HBM clock.
    pub const HBM: i32 = 6;
    /// Current AI-core clock.
    pub const AICORE_CURRENT: i32 = 7;
    /// Rated maximum AI-core clock.
    pub const AICORE_MAX: i32 = 9;
    /// Current vector-core clock.
    pub const VECTORCORE_CURRENT: i32 = 12;
    /// Every defined type.
    pub const ALL: [i32; 6] = [DDR, CTRLCPU, HBM, AICORE_CURRENT, AICORE_MAX, VECTORCORE_CURRENT];
}

/// Frequency types a family answers (`input_type` of `dcmi_get_device_frequency` in Huawei's DCMI API reference for
/// each product; its A2 and A3 volumes, github.com/verylucky01/driver `docs/en/Ascend_910B_DCMI_API/` and
/// `docs/en/Ascend_910_93_DCMI_API/`, allow 2, 6, 7 and 9): 910 family {2,6,7,9}; 310 {1,2,6,7,9}; 310P {1,2,7,9,12}.
pub fn supported_frequency_types(chip_type: ChipType) -> &'static [i32] {
    use freq_type::*;
    match chip_type {
        ChipType::Ascend310 | ChipType::Ascend310B => &[DDR, CTRLCPU, HBM, AICORE_CURRENT, AICORE_MAX],
        ChipType::Ascend310P => &[DDR, CTRLCPU, AICORE_CURRENT, AICORE_MAX, VECTORCORE_CURRENT],
        ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950 => {
            &[CTRLCPU, HBM, AICORE_CURRENT, AICORE_MAX]
        }
    }
}

/// Utilization input types of `dcmi_get_device_utilization_rate` (`input_type` in Huawei's DCMI API reference, e.g.
/// its A2 volume in github.com/verylucky01/driver,
/// `docs/en/Ascend_910B_DCMI_API/Ascend_910B_DCMI_API/dcmi_get_device_utilization_rate.md`; AI Cube, 14, as `AICube`
/// in `Ascend/mind-cluster`, `component/ascend-common/devmanager/common/constants.go`).
pub mod util_type {
    /// Memory.
    pub const MEMORY: i32 = 1;
    /// AI Core.
    pub const AICORE: i32 = 2;
    /// AI CPU.
    pub const AICPU: i32 = 3;
    /// Control CPU.
    pub const CTRLCPU: i32 = 4;
    /// Memory bandwidth.
    pub const MEMORY_BANDWIDTH: i32 = 5;
    /// On-chip memory (HBM).
    pub const HBM: i32 = 6;
    /// DDR.
    pub const DDR: i32 = 8;
    /// HBM bandwidth.
    pub const HBM_BANDWIDTH: i32 = 10;
    /// Vector core.
    pub const VECTORCORE: i32 = 12;
    /// NPU overall.
    pub const NPU: i32 = 13;
    /// AI Cube.
    pub const AICUBE: i32 = 14;
    /// Every defined type.
    pub const ALL: [i32; 11] =
        [MEMORY, AICORE, AICPU, CTRLCPU, MEMORY_BANDWIDTH, HBM, DDR, HBM_BANDWIDTH, VECTORCORE, NPU, AICUBE];
}

/// True when `input_type` is a defined utilization type that family `chip_type` answers.
pub fn supports_utilization(chip_type: ChipType, input_type: i32) -> bool {
    use util_type::*;
    match input_type {
        MEMORY | AICORE | AICPU | CTRLCPU | MEMORY_BANDWIDTH => true,
        HBM | HBM_BANDWIDTH => chip_type.has_hbm(),
        DDR => chip_type.has_ddr(),
        VECTORCORE | NPU => matches!(
            chip_type,
            ChipType::Ascend310P | ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950
        ),
        AICUBE => matches!(chip_type, ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950),
        _ => false,
    }
}

/// `dcmi_device_type` values of `dcmi_get_device_ecc_info` a family answers: DDR (0) where the chip
/// has DDR, HBM (2) on the 910 family.
pub fn supports_ecc_type(chip_type: ChipType, input_type: i32) -> bool {
    match input_type {
        0 => chip_type.has_ddr(),
        2 => chip_type.has_hbm(),
        _ => false,
    }
}
