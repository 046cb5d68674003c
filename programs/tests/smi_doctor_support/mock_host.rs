//! A `MockDeviceManager` playing a small host with fixed readings, so rendered output is exact.

use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{
    BoardInfo, CallContext, CardId, Celsius, ChipIdentity, ChipIds, ChipInfo, ChipLocator, ChipProcess, ChipType,
    DcmiHealth, DdrMemory, DeviceId, DeviceManager, DieId, Elabel, Error, FaultCode, FaultCodes, FaultLevel, HbmMemory,
    HealthReport, LogicId, MegaHertz, MockDeviceManager, PcieAddress, Percent, PhyId, Power, ProcessList, Volts, Watts,
};

/// What one simulated chip answers.
#[derive(Clone)]
pub struct MockChip {
    pub ids: ChipIds,
    pub chip_type: ChipType,
    pub chip_name: &'static str,
    pub health: HealthReport,
    pub temperature: i32,
    pub watts: f64,
    pub aicore: u32,
    pub memory_used_mb: u64,
    pub memory_total_mb: u64,
    pub processes: Vec<ChipProcess>,
    /// When set, the health call sleeps this long (a hung chip).
    pub health_delay: Option<Duration>,
    /// When set, the temperature call fails with this DCMI code.
    pub temperature_error: Option<i32>,
}

pub fn ids(logic: u32, phy: u32, card: i32, device: i32) -> ChipIds {
    ChipIds {
        logic: LogicId(logic),
        phy: PhyId(phy),
        locator: Some(ChipLocator { card: CardId(card), device: DeviceId(device) }),
    }
}

/// A healthy 910B3 at logic 0 / phy 4 with two processes.
pub fn healthy_910b() -> MockChip {
    MockChip {
        ids: ids(0, 4, 0, 0),
        chip_type: ChipType::Ascend910B,
        chip_name: "910B3",
        health: HealthReport::healthy(),
        temperature: 45,
        watts: 93.5,
        aicore: 37,
        memory_used_mb: 3_072,
        memory_total_mb: 65_536,
        processes: vec![
            ChipProcess { pid: 4242, memory_bytes: 2_048 * 1_048_576 },
            ChipProcess { pid: 4243, memory_bytes: 1_024 * 1_048_576 },
        ],
        health_delay: None,
        temperature_error: None,
    }
}

/// A 310P3 at logic 1 / phy 0 on card 3 with a major alarm and two fault codes.
pub fn faulty_310p() -> MockChip {
    let faults = FaultCodes::from_codes([FaultCode(0x80E0_1801), FaultCode(0x80E3_A201)]);
    MockChip {
        ids: ids(1, 0, 3, 1),
        chip_type: ChipType::Ascend310P,
        chip_name: "310P3",
        health: HealthReport {
            dcmi: Some(DcmiHealth::Major),
            faults,
            level: FaultLevel::SeparateNpu,
            card_dropped: false,
        },
        temperature: 71,
        watts: 88.0,
        aicore: 0,
        memory_used_mb: 512,
        memory_total_mb: 49_152,
        processes: Vec::new(),
        health_delay: None,
        temperature_error: None,
    }
}

fn identity(chip: &MockChip) -> ChipIdentity {
    let phy = chip.ids.phy.get();
    ChipIdentity {
        ids: chip.ids,
        chip_type: Some(chip.chip_type),
        info: ChipInfo {
            chip_type: "Ascend".into(),
            chip_name: chip.chip_name.into(),
            chip_version: "V1".into(),
            aicore_count: if chip.chip_type.has_hbm() { 20 } else { 8 },
            npu_name: None,
        },
        product_type: Some(if chip.chip_type.has_hbm() { "Atlas 800T A2".into() } else { "Atlas 300I Duo".into() }),
        board: Some(BoardInfo { board_id: Some(0x64), pcb_id: Some(1), bom_id: Some(1), slot_id: Some(phy) }),
        mainboard_id: None,
        pcie_address: Some(PcieAddress { domain: 0, bus: 0xc1 + phy as u8, device: 0, function: 0 }),
        numa_node: Some(phy / 4),
        affinity_cpus: Some(if phy < 4 { "0-23".into() } else { "24-47".into() }),
        die_id: Some(DieId([0x1C01_4000 + phy, 1, 2, 3, 4])),
        elabel: Some(Elabel { serial_number: format!("1024A0D0000{phy}"), ..Elabel::default() }),
    }
}

fn find(chips: &[MockChip], logic: LogicId) -> Result<MockChip, Error> {
    chips
        .iter()
        .find(|chip| chip.ids.logic == logic)
        .cloned()
        .ok_or_else(|| Error::NoSuchChip(format!("logic id {logic}")))
}

fn unsupported(call: &'static str) -> Error {
    Error::from_code(-8255, CallContext::global(call))
}

/// A manager over `chips` that answers every call the tools make.
pub fn manager(chips: Vec<MockChip>) -> Arc<dyn DeviceManager> {
    let mut mock = MockDeviceManager::new();
    let all: Arc<Vec<MockChip>> = Arc::new(chips);
    let list = Arc::clone(&all);
    mock.expect_chips().returning(move || Ok(list.iter().map(|chip| chip.ids).collect()));
    mock.expect_driver_version().returning(|| Ok("24.1.rc2".to_owned()));
    // The mocked chips are all V1 chips (up to the 910 A3).
    mock.expect_api_family().return_const(ascend_dcmi::ApiFamily::V1);
    let c = Arc::clone(&all);
    mock.expect_identity().returning(move |logic| find(&c, logic).map(|chip| identity(&chip)));
    // One expectation per chip: mockall serialises the calls of one expectation, so with a single shared one a
    // chip whose health call hangs would also block every other chip's health call.
    for chip in all.iter() {
        let (logic, health, delay) = (chip.ids.logic, chip.health, chip.health_delay);
        mock.expect_health().withf(move |asked| *asked == logic).returning(move |_| {
            if let Some(delay) = delay {
                std::thread::sleep(delay);
            }
            Ok(health)
        });
    }
    let c = Arc::clone(&all);
    mock.expect_health().returning(move |logic| find(&c, logic).map(|chip| chip.health));
    let c = Arc::clone(&all);
    mock.expect_temperature().returning(move |logic| {
        let chip = find(&c, logic)?;
        match chip.temperature_error {
            Some(code) => Err(Error::from_code(
                code,
                CallContext::chip("dcmi_get_device_temperature", chip.ids.locator, Some(chip.ids.logic)),
            )),
            None => Ok(Celsius(chip.temperature)),
        }
    });
    let c = Arc::clone(&all);
    mock.expect_power().returning(move |logic| {
        let chip = find(&c, logic)?;
        let watts = Watts(chip.watts);
        Ok(if chip.chip_type.has_card_level_power() { Power::Card(watts) } else { Power::Chip(watts) })
    });
    let c = Arc::clone(&all);
    mock.expect_utilization().returning(move |logic, _| {
        let chip = find(&c, logic)?;
        Percent::new(chip.aicore).ok_or_else(|| unsupported("dcmi_get_device_utilization_rate"))
    });
    let c = Arc::clone(&all);
    mock.expect_hbm_memory().returning(move |logic| {
        let chip = find(&c, logic)?;
        if !chip.chip_type.has_hbm() {
            return Err(unsupported("dcmi_get_device_hbm_info"));
        }
        Ok(HbmMemory {
            total_bytes: chip.memory_total_mb * 1_048_576,
            used_bytes: chip.memory_used_mb * 1_048_576,
            ..HbmMemory::default()
        })
    });
    let c = Arc::clone(&all);
    mock.expect_ddr_memory().returning(move |logic| {
        let chip = find(&c, logic)?;
        Ok(DdrMemory {
            total_bytes: chip.memory_total_mb * 1_048_576,
            available_bytes: (chip.memory_total_mb - chip.memory_used_mb) * 1_048_576,
            ..DdrMemory::default()
        })
    });
    let c = Arc::clone(&all);
    mock.expect_processes().returning(move |logic| Ok(ProcessList::from_slice(&find(&c, logic)?.processes)));
    mock.expect_voltage().returning(|_| Ok(Volts(0.85)));
    mock.expect_frequency().returning(|_, _| Ok(MegaHertz(1_800)));
    // Every mocked chip runs the firmware a default fake host installs.
    mock.expect_firmware_version().returning(|_| Ok(dcmi_sim::fake_host::DEFAULT_FIRMWARE_VERSION.to_owned()));
    Arc::new(mock)
}
