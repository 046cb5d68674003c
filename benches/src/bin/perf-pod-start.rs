//! `perf-pod-start`: the device plugin against the DRA driver on the real-cluster test bed (issue 28's figures, in
//! the DRA section of `benches/run.sh`).
//!
//! On the one-node Kubernetes of `scripts/cluster/up.sh` (real API server, scheduler, controller manager, kubelet
//! and containerd, on a host simulated by dcmi-sim), deploys our stack from `deploy/` as the cluster tests do, then
//! times pods of one chip each, created one after another, from the create request to the watch's report that the
//! pod is Running:
//!
//! - device plugin (the 910B pool's overlay): the pod asks for `huawei.com/Ascend910: 1`; the time holds the
//!   scheduler's fit on the node's allocatable, the kubelet's admission and the plugin's `Allocate` (CDI device
//!   names), containerd's sandbox and container start with the devices injected from the host's CDI spec, and the
//!   kubelet's status update;
//! - no chip, alternating with the device plugin's pods (issue 33): the same pod without the resource, so that the
//!   difference is the cost of the chip (the plugin's `Allocate` and the CDI injection) in the same conditions;
//! - DRA (the DRA overlay): the pod names a ResourceClaimTemplate; the time also holds the controller manager's
//!   creation of the pod's claim, the scheduler's structured-parameters allocation and the reservation, and the
//!   driver's `NodePrepareResources` (the claim's CDI spec written), which replace the plugin's part.
//!
//! Each pod is deleted, and gone, before the next is created; the first pods of each kind warm the caches and are
//! not counted. Writes the figures as JSON to `--out`; the node is left on the device plugin's pool.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use ascend_benches::figures_file::{measure_into, summary};
use ascend_benches::pod_start::{claim_pod, claim_template, replace_template, time_to_running};
use ascend_cluster_tests::stack::{
    delete_pod, deploy_910b_pool, deploy_dra, npu_pod, remove_dra, test_namespace, wait_claims_gone, DRA_CLASS_910B,
    NAMESPACE,
};
use ascend_cluster_tests::{Cluster, Timer};
use clap::Parser;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
use kube::api::Api;
use serde_json::json;

/// The name of the ResourceClaimTemplate the DRA pods use.
const TEMPLATE: &str = "one-npu-for-the-bench";

/// Pod start with the device plugin and with the DRA driver, on the test bed.
#[derive(Debug, Parser)]
struct Args {
    /// Timed pods of each kind.
    #[arg(long, default_value_t = 20)]
    pods: usize,
    /// Pods of each kind started first and not counted.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
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
    let mut timer = Timer::start("pod start");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    let no_chip = |name: &str| -> Pod {
        let mut pod = npu_pod(name, 1);
        if let Some(container) = pod.spec.as_mut().and_then(|spec| spec.containers.first_mut()) {
            container.resources = None;
        }
        pod
    };
    let chip = |name: &str| npu_pod(name, 1);
    let mut alternating = starts(&cluster, &args, &[("start-plain", &no_chip), ("start-dp", &chip)]).await?;
    let (device_plugin, plain) = (alternating.pop().unwrap_or_default(), alternating.pop().unwrap_or_default());
    timer.mark("device-plugin and chip-less pods, alternating");

    deploy_dra(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    replace_template(&cluster, &claim_template(TEMPLATE, DRA_CLASS_910B, 1)?).await?;
    let claim_pod = |name: &str| claim_pod(name, TEMPLATE);
    let dra = starts(&cluster, &args, &[("start-dra", &claim_pod)]).await?.pop().unwrap_or_default();
    timer.mark("DRA pods");
    let templates: Api<ResourceClaimTemplate> = Api::namespaced(cluster.client(), NAMESPACE);
    templates.delete(TEMPLATE, &Default::default()).await.context("delete the claim template")?;
    wait_claims_gone(&cluster).await;
    remove_dra(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;

    Ok(json!({
        "kubernetes": version,
        "pods": args.pods,
        "warmup": args.warmup,
        "device_plugin": summary(device_plugin, "device-plugin pod starts")?,
        "no_chip": summary(plain, "pod starts without a chip")?,
        "dra": summary(dra, "DRA pod starts")?,
    }))
}

/// A pod of the given name.
type PodBuilder<'a> = &'a dyn Fn(&str) -> Pod;

/// Creates `warmup + pods` pods of each kind (a name prefix and a builder), the kinds alternating, one after another,
/// each timed from the create request until the watch reports it Running, then deleted and gone before the next;
/// returns the timed ones of each kind, in the kinds' order.
async fn starts(cluster: &Cluster, args: &Args, kinds: &[(&str, PodBuilder<'_>)]) -> Result<Vec<Vec<Duration>>> {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let mut times = vec![Vec::with_capacity(args.pods); kinds.len()];
    for index in 0..args.warmup + args.pods {
        for ((prefix, pod), times) in kinds.iter().zip(&mut times) {
            let name = format!("{prefix}-{index}");
            delete_pod(cluster, &name).await;
            let elapsed = time_to_running(&pods, &name, &pod(&name)).await?;
            if index >= args.warmup {
                times.push(elapsed);
            }
            delete_pod(cluster, &name).await;
        }
    }
    Ok(times)
}
