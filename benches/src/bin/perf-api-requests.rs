//! `perf-api-requests`: what our node daemons ask of the real API server of the test bed, counted by the API server
//! itself (issue 35's figures, section 9 of `benches/run.sh`).
//!
//! The test bed's kube-apiserver writes an audit log with every request's user agent, verb and resource
//! (`scripts/cluster/config/audit-policy.yaml`); each of our daemons sends `User-Agent: <daemon>/<version>`. On the
//! one-node Kubernetes of `scripts/cluster/up.sh`, with our stack deployed from `deploy/`:
//!
//! 1. **Volcano node, idle**: the device plugin in Volcano mode with `--node-events` and its node-labeller sidecar
//!    (the costliest family of DaemonSets, docs/scale.md), after a settling period, for `--idle-seconds` (longer than
//!    the watches' 290-s server timeout, so their re-opening is counted);
//! 2. **Volcano node, churn**: a pod of one chip created every 10 s and deleted, for `--churn-seconds` (annotated as
//!    Volcano's scheduler would: the test bed runs none);
//! 3. **API server restart**: `control_plane.sh restart-apiserver 6` (stopped for 6 s), a chip fault raised while it
//!    is down; the daemons' requests from the outage to a minute after the server is ready, and the time from ready
//!    until the fault is in the device-info ConfigMap;
//! 4. **DRA node, idle**: the DRA driver alone, for `--dra-idle-seconds`.
//!
//! Requests are counted as `ascend_benches::audit_log` says. Writes the figures as JSON to `--out`; the node is left on
//! the device plugin's pool.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ascend_benches::audit_log::{window, AuditLog};
use ascend_benches::figures_file::measure_into;
use ascend_cluster_tests::stack::{
    chip_fault, delete_pod, deploy_910b_pool, deploy_dra, device_list, npu_pod, remove_dra, test_namespace, NAMESPACE,
    RESOURCE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use ascend_kube::pod_assignment::PREDICATE_TIME_ANNOTATION;
use clap::Parser;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, PostParams};
use serde_json::json;

/// How long the API server stays stopped in the restart scenario.
const OUTAGE_SECONDS: u64 = 6;

/// Our daemons' requests to the real API server, counted from its audit log.
#[derive(Debug, Parser)]
struct Args {
    /// The API server's audit log (scripts/cluster/lib.sh's `CLUSTER_LOGS`).
    #[arg(long, default_value = "/var/log/ascend-cluster/audit.log")]
    audit_log: PathBuf,
    /// Seconds after a deploy before counting (start-up: the first LIST, WATCH and writes).
    #[arg(long, default_value_t = 30)]
    settle_seconds: u64,
    /// The Volcano node's idle window.
    #[arg(long, default_value_t = 300)]
    idle_seconds: u64,
    /// The churn window (a pod every 10 s).
    #[arg(long, default_value_t = 120)]
    churn_seconds: u64,
    /// The DRA node's idle window.
    #[arg(long, default_value_t = 120)]
    dra_idle_seconds: u64,
    /// Where the figures go.
    #[arg(long)]
    out: PathBuf,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone();
    measure_into(&out, measure(args)).await
}

async fn measure(args: Args) -> Result<serde_json::Value> {
    let cluster = Cluster::connect().await;
    let version = cluster.client().apiserver_version().await?.git_version;
    let audit = AuditLog { path: args.audit_log.clone() };
    let mut timer = Timer::start("api requests");
    cluster.set_overlay(vec![chip_fault(2, false)]);

    // 1. The Volcano node: start-up, then idle.
    let start = audit.mark()?;
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/volcano-910b.yaml");
    // A start counted even when an earlier run left the node in Volcano mode.
    cluster.kubectl(&["-n", SYSTEM, "rollout", "restart", "daemonset/ascend-device-plugin"]);
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    test_namespace(&cluster).await;
    tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;
    let startup = audit.counted_since(&start)?;
    timer.mark("Volcano node deployed and settled");
    let idle = window(&audit, Duration::from_secs(args.idle_seconds), async {}).await?;
    timer.mark("Volcano node idle");

    // 2. Churn: a pod of one chip every 10 s.
    let churn_seconds = args.churn_seconds;
    let churn = window(&audit, Duration::from_secs(churn_seconds), async {
        let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
        for index in 0..churn_seconds / 10 {
            let started = Instant::now();
            let name = format!("churn-{index}");
            pods.create(&PostParams::default(), &volcano_pod(&name)).await.expect("create pod");
            cluster.wait_running(NAMESPACE, &name, Duration::from_secs(60)).await;
            delete_pod(&cluster, &name).await;
            tokio::time::sleep(Duration::from_secs(10).saturating_sub(started.elapsed())).await;
        }
    })
    .await?;
    timer.mark("churn");

    // 3. The API server stops for a few seconds; a chip faults meanwhile. Once it is back, the daemons reconnect and
    // the fault must reach the device-info ConfigMap.
    let outage = audit.mark()?;
    let scripts = cluster.repository().join("scripts/cluster/control_plane.sh");
    let restart = tokio::task::spawn_blocking(move || {
        std::process::Command::new("bash")
            .arg(scripts)
            .args(["restart-apiserver", &OUTAGE_SECONDS.to_string()])
            .output()
    });
    let fault = async {
        tokio::time::sleep(Duration::from_secs(OUTAGE_SECONDS / 2)).await;
        cluster.set_overlay(vec![chip_fault(2, true)]);
    };
    let (restarted, ()) = tokio::join!(restart, fault);
    let restarted = restarted?.context("control_plane.sh restart-apiserver")?;
    anyhow::ensure!(restarted.status.success(), "restart-apiserver: {}", String::from_utf8_lossy(&restarted.stderr));
    let ready_at = Instant::now();
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = format!("mindx-dl-deviceinfo-{NODE_NAME}");
    wait_until("the fault in the device-info ConfigMap after the restart", Duration::from_secs(120), || async {
        let map = config_maps.get(&name).await.map_err(|error| error.to_string())?;
        let unhealthy = device_list(&map, &format!("{RESOURCE}-Unhealthy"))?;
        if unhealthy.is_empty() {
            Err("no chip listed unhealthy".to_owned())
        } else {
            Ok(())
        }
    })
    .await;
    let current_after = ready_at.elapsed();
    tokio::time::sleep(Duration::from_secs(60).saturating_sub(ready_at.elapsed())).await;
    let restart = audit.counted_since(&outage)?;
    cluster.set_overlay(vec![chip_fault(2, false)]);
    timer.mark("API server restart");

    // Back to the plain pool; Volcano's ConfigMap goes with the mode (cluster-tests/tests/volcano.rs).
    cluster.apply("deploy/kubernetes/training-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    config_maps.delete(&name, &Default::default()).await.context("delete the device-info ConfigMap")?;

    // 4. The DRA node, idle.
    deploy_dra(&cluster, &mut timer).await;
    tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;
    let dra_idle = window(&audit, Duration::from_secs(args.dra_idle_seconds), async {}).await?;
    timer.mark("DRA node idle");
    remove_dra(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;

    Ok(json!({
        "kubernetes": version,
        "settle_seconds": args.settle_seconds,
        "volcano_startup": startup.to_json(None),
        "volcano_idle": idle.to_json(Some(args.idle_seconds)),
        "volcano_churn": churn.to_json(Some(args.churn_seconds)),
        "apiserver_restart": json!({
            "outage_seconds": OUTAGE_SECONDS,
            "first_minute": restart.to_json(Some(60)),
            "fault_current_after_ms": current_after.as_millis(),
        }),
        "dra_idle": dra_idle.to_json(Some(args.dra_idle_seconds)),
    }))
}

/// A pod of one chip as Volcano's scheduler leaves it for the device plugin in Volcano mode: the chip it chose in
/// the annotation named like the resource, and when (`predicate-time`, Unix nanoseconds; ascend_kube::pod_assignment).
/// The test bed runs no Volcano, so the benchmark writes what its Ascend plugin would.
fn volcano_pod(name: &str) -> Pod {
    let mut pod = npu_pod(name, 1);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    pod.metadata.annotations = Some(
        [(RESOURCE.to_owned(), "Ascend910-0".to_owned()), (PREDICATE_TIME_ANNOTATION.to_owned(), now.to_string())]
            .into(),
    );
    pod
}
