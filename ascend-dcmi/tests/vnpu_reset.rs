//! vNPU templates, creation, query and destruction with typed errors; chip reset in-band, out-of-band as the
//! fallback, and the wait for boot status "finished".

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use ascend_dcmi::{BootStatus, ChipType, Error, LogicId, VnpuTemplate};

#[test]
fn vnpus_are_created_queried_and_destroyed() {
    let (dcmi, _sim) = support::start("atlas-300i-duo");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let topology =
        dcmi_sim::Topology::from_toml_str(support::sample_toml("atlas-300i-duo"), Path::new("duo")).expect("topology");
    let cores = topology.chip_by_logic_id(0).expect("chip 0").chip.aicore_count;
    let before = chip.vnpus().expect("inventory");
    assert_eq!(before.total_aicore, cores as f32);
    assert_eq!(before.free_aicore, cores as f32);
    assert!(before.vnpus.is_empty());

    let id = chip.create_vnpu("vir02").expect("vir02 is allowed on 310P");
    assert!((100..1124).contains(&id.0), "{id}");
    let after = chip.vnpus().expect("inventory");
    assert_eq!(after.vnpus.len(), 1);
    assert_eq!(after.vnpus[0].id, id);
    assert_eq!(after.vnpus[0].aicore, 2.0);
    assert_eq!(after.free_aicore, cores as f32 - 2.0);

    let error = chip.create_vnpu("vir08").expect_err("a 910 template");
    match &error {
        Error::VnpuTemplateNotAllowed { template, chip_type, allowed } => {
            assert_eq!(template, "vir08");
            assert_eq!(chip_type, "Ascend310P");
            let expected: Vec<&str> = VnpuTemplate::for_chip_type(ChipType::Ascend310P).map(|t| t.name).collect();
            assert_eq!(allowed, &expected);
        }
        other => panic!("expected VnpuTemplateNotAllowed, got {other}"),
    }
    assert!(matches!(chip.create_vnpu("vir99"), Err(Error::VnpuTemplateNotAllowed { .. })));

    let mut created = vec![id];
    let exhausted = loop {
        match chip.create_vnpu("vir04") {
            Ok(more) => created.push(more),
            Err(error) => break error,
        }
        assert!(created.len() <= cores as usize, "more vNPUs than AI cores");
    };
    assert!(matches!(exhausted, Error::ResourceOccupied(_)), "{exhausted}");
    for vnpu in created {
        chip.destroy_vnpu(vnpu).expect("destroy");
    }
    assert!(chip.vnpus().expect("inventory").vnpus.is_empty());
    assert!(chip.destroy_vnpu(id).is_err(), "already destroyed");
}

#[test]
fn chips_without_vnpu_support_say_so() {
    let (dcmi, _sim) = support::start("edge-310");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    match chip.create_vnpu("vir01").expect_err("310 has no vNPU") {
        Error::VnpuTemplateNotAllowed { allowed, .. } => assert!(allowed.is_empty()),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn in_band_reset_waits_for_the_boot_to_finish() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let chip = dcmi.chip(LogicId(6)).expect("chip");
    sim.overlay("[[chip]]\nlogic_id = 6\nfaults = [0x80E24E00]\n");
    assert!(!chip.health().expect("health").is_healthy());
    assert_eq!(chip.boot_status().expect("boot status"), BootStatus::Finished);
    let started = Instant::now();
    chip.reset(Duration::from_secs(10)).expect("reset");
    let reset_duration = Duration::from_millis(
        dcmi_sim::Topology::from_toml_str(support::sample_toml("atlas-800t-a2"), Path::new("a2"))
            .expect("topology")
            .simulation
            .reset_duration_ms,
    );
    assert!(started.elapsed() >= reset_duration, "returned before the chip booted");
    assert_eq!(chip.boot_status().expect("boot status"), BootStatus::Finished);
    assert!(chip.health().expect("health").is_healthy(), "the reset cleared the fault");
}

#[test]
fn a_failed_in_band_reset_falls_back_to_out_of_band() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let chip = dcmi.chip(LogicId(1)).expect("chip");
    sim.overlay("[[inject]]\nfunction = \"dcmi_set_device_reset\"\ncode = -8015\nuntil_call = 1\n");
    chip.reset(Duration::from_secs(10)).expect("out-of-band reset succeeds");
    assert_eq!(chip.boot_status().expect("boot status"), BootStatus::Finished);

    // 310P has no out-of-band channel: the in-band error is the answer.
    let (dcmi, sim) = support::start("atlas-300i-pro");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    sim.overlay("[[inject]]\nfunction = \"dcmi_set_device_reset\"\ncode = -8015\n");
    assert!(matches!(chip.reset(Duration::from_secs(1)), Err(Error::ResetFailed(_))));
}

#[test]
fn a_reset_that_outlasts_its_timeout_is_a_timeout_and_can_be_waited_out() {
    let (dcmi, _sim) = support::start("atlas-800i-a3");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let error = chip.reset(Duration::from_millis(50)).expect_err("the simulated boot takes longer");
    assert!(
        matches!(&error, Error::Timeout { context, .. } if context.call == "dcmi_get_device_boot_status"),
        "{error}"
    );
    chip.wait_until_booted(Duration::from_secs(10)).expect("boots eventually");
    assert_eq!(chip.boot_status().expect("boot status"), BootStatus::Finished);
}
