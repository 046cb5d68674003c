//! Chips that heal on the real cluster: the device plugin of deploy/kubernetes/training-910b.yaml with
//! `--recovery-mode=inference` (the chart's `devicePlugin.recovery.mode`) on the simulated Atlas 800T A2, whose eight
//! 910B chips form one HCCS ring a reset takes down together.
//!
//! - A restart fault (`0x80E01801`, `RestartBusiness`) on a chip while no pod and no process holds the ring: the
//!   Node's allocatable drops, recovery resets the chip, and the allocatable comes back; the time is printed.
//! - The same fault while a pod holds another chip of the ring: nothing is reset while the pod runs, and the chip
//!   comes back once the pod is gone.
//! - The DRA driver of deploy/kubernetes/dra.yaml with `--recovery-mode=inference` (`draDriver.recovery.mode`): the
//!   same fault on a free chip taints its device in the ResourceSlice, and the taint goes after the reset; the time is
//!   printed.

use std::time::{Duration, Instant};

use ascend_cluster_tests::stack::{
    chip_fault, delete_pod, deploy_910b_pool, deploy_dra, edit_daemon_args, edit_device_plugin_args, remove_dra,
    start_pod, test_namespace, wait_dra_registered, DRA_DRIVER, DRA_NAMESPACE, RESOURCE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::resource::v1::ResourceSlice;
use kube::api::{Api, ListParams};

/// How long a freed ring must stay free before its reset: short, so that the test is.
const IDLE: &str = "3s";
/// Every chip of the ring without processes (the sample host runs some), and `faulty` with a restart fault.
fn overlay(faulty: u32) -> Vec<dcmi_sim::ChipOverlay> {
    (0..8)
        .map(|logic_id| {
            let chip = if logic_id == faulty {
                chip_fault(logic_id, true)
            } else {
                dcmi_sim::ChipOverlay { logic_id, ..Default::default() }
            };
            dcmi_sim::ChipOverlay { processes: Some(Vec::new()), ..chip }
        })
        .collect()
}

#[tokio::test]
async fn a_restart_fault_on_a_free_ring_is_reset_and_one_on_a_held_ring_waits_for_the_pod() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("recovery");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    // What `--set devicePlugin.recovery.mode=inference` renders.
    edit_device_plugin_args(&cluster, |args| {
        args.retain(|arg| !arg.starts_with("--recovery-"));
        args.extend(["--recovery-mode=inference".to_owned(), format!("--recovery-idle={IDLE}")]);
    });
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("device plugin with --recovery-mode=inference");

    // Free ring: fault, allocatable 7, reset, allocatable 8.
    cluster.set_overlay(overlay(5));
    let raised = Instant::now();
    cluster.wait_allocatable(RESOURCE, "7", Duration::from_secs(10)).await;
    timer.mark("restart fault: allocatable 7");
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    let recovered = raised.elapsed();
    timer.mark("reset: allocatable 8");
    println!("restart fault on a free chip to the chip offered again after its reset: {recovered:?} (idle {IDLE})");

    // Held ring: a pod holds one chip; a fault on another chip (not the one just reset: a fault that returns within
    // ten minutes of its reset holds a chip out) stays until the pod is gone.
    start_pod(&cluster, "holds-the-ring", 1).await;
    cluster.set_overlay(overlay(2));
    cluster.wait_allocatable(RESOURCE, "7", Duration::from_secs(10)).await;
    // Longer than a free ring takes to be reset (the idle time, the runner's 5 s round, the 2 s withdrawal, the boot).
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(cluster.allocatable(RESOURCE).await.as_deref(), Some("7"), "no reset while a pod holds the ring");
    timer.mark("held ring: not reset for 20 s");
    delete_pod(&cluster, "holds-the-ring").await;
    let released = Instant::now();
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    println!("pod gone to the chip offered again after its reset: {:?}", released.elapsed());
    timer.mark("pod gone: reset, allocatable 8");

    cluster.set_overlay(Vec::new());
    cluster.apply("deploy/kubernetes/training-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=120s"]);
}

/// The taints of the published device of the chip with logic id `logic` (`None` while no such device is published).
async fn chip_taints(cluster: &Cluster, logic: u32) -> Result<Vec<String>, String> {
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.map_err(|error| error.to_string())?;
    let device = list
        .items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(NODE_NAME))
        .flat_map(|slice| slice.spec.devices.unwrap_or_default())
        .find(|device| {
            let attributes = device.attributes.as_ref();
            attributes.and_then(|attributes| attributes.get("logicId")?.int) == Some(i64::from(logic))
        })
        .ok_or_else(|| format!("no device of logic id {logic} published"))?;
    let taints = device.taints.unwrap_or_default();
    Ok(taints
        .into_iter()
        .map(|taint| format!("{}={}:{}", taint.key, taint.value.unwrap_or_default(), taint.effect))
        .collect())
}

/// Waits until chip 5's device is published without a taint (`what` names the moment).
async fn wait_untainted(cluster: &Cluster, what: &str) {
    wait_until(what, Duration::from_secs(60), || async {
        let taints = chip_taints(cluster, 5).await?;
        if taints.is_empty() {
            Ok(())
        } else {
            Err(format!("{taints:?}"))
        }
    })
    .await;
}

/// Puts every chip back to health, also when the test fails half-way (a fault an overlay raised stays until an
/// overlay clears it).
struct HealthyAgain(Cluster);

impl Drop for HealthyAgain {
    fn drop(&mut self) {
        self.0.set_overlay((0..8).map(|logic_id| chip_fault(logic_id, false)).collect());
    }
}

#[tokio::test]
async fn the_dra_drivers_taint_goes_after_a_recovery() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("recovery, DRA driver");
    deploy_dra(&cluster, &mut timer).await;
    let healthy_again = HealthyAgain(cluster.clone());
    // What `--set draDriver.recovery.mode=inference` renders, with a short idle time.
    edit_daemon_args(&cluster, DRA_NAMESPACE, "ascend-dra-driver", |args| {
        args.retain(|arg| !arg.starts_with("--recovery-"));
        args.extend(["--recovery-mode=inference".to_owned(), format!("--recovery-idle={IDLE}")]);
    });
    wait_dra_registered(&cluster).await;
    wait_untainted(&cluster, "chip 5's device published without a taint").await;
    timer.mark("DRA driver with --recovery-mode=inference");

    cluster.set_overlay(overlay(5));
    let raised = Instant::now();
    let tainted = wait_until("chip 5's device tainted", Duration::from_secs(10), || async {
        let taints = chip_taints(&cluster, 5).await?;
        if taints.is_empty() {
            Err("no taint".to_owned())
        } else {
            Ok(taints)
        }
    })
    .await;
    println!("restart fault: chip 5's device tainted {tainted:?} after {:?}", raised.elapsed());
    timer.mark("restart fault: the device tainted");
    wait_untainted(&cluster, "chip 5's taint removed after its reset").await;
    let recovered = raised.elapsed();
    timer.mark("reset: the taint removed");
    println!("restart fault on a free chip to its DRA device untainted after its reset: {recovered:?} (idle {IDLE})");

    drop(healthy_again);
    remove_dra(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;
}
