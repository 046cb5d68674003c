//! Timing a pod's start on the real-cluster test bed, for `perf-pod-start` and `perf-dra-beside-huawei`: from the
//! create request until the API server's watch reports the pod Running; and the DRA pods' claim templates.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ascend_cluster_tests::stack::{sleeping_pod_spec, NAMESPACE};
use ascend_cluster_tests::Cluster;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions::is_pod_running};
use serde_json::json;

/// The longest a timed pod may take to run.
const LIMIT: Duration = Duration::from_secs(120);

/// Creates `pod` (named `name`) in the namespace of `pods` and returns the time from the create request until the
/// watch reports it Running; an error naming the pod when it is not Running within two minutes.
pub async fn time_to_running(pods: &Api<Pod>, name: &str, pod: &Pod) -> Result<Duration> {
    let started = Instant::now();
    pods.create(&PostParams::default(), pod).await.with_context(|| format!("create pod {name}"))?;
    tokio::time::timeout(LIMIT, await_condition(pods.clone(), name, is_pod_running()))
        .await
        .with_context(|| format!("pod {name} not Running within {} s", LIMIT.as_secs()))?
        .with_context(|| format!("watching pod {name}"))?;
    let elapsed = started.elapsed();
    println!("{name}: Running after {:.1} ms", elapsed.as_secs_f64() * 1e3);
    Ok(elapsed)
}

/// A ResourceClaimTemplate `name` of the test namespace asking for `count` devices of DeviceClass `class`.
pub fn claim_template(name: &str, class: &str, count: u32) -> Result<ResourceClaimTemplate> {
    let request =
        json!({"name": "npu", "exactly": {"deviceClassName": class, "allocationMode": "ExactCount", "count": count}});
    let template = json!({"metadata": {"name": name}, "spec": {"spec": {"devices": {"requests": [request]}}}});
    serde_json::from_value(template).context("a claim template")
}

/// Replaces the test namespace's ResourceClaimTemplate of the same name by `template`.
pub async fn replace_template(cluster: &Cluster, template: &ResourceClaimTemplate) -> Result<()> {
    let templates: Api<ResourceClaimTemplate> = Api::namespaced(cluster.client(), NAMESPACE);
    let name = template.metadata.name.as_deref().context("a template without a name")?;
    let _ = templates.delete(name, &Default::default()).await;
    templates
        .create(&PostParams::default(), template)
        .await
        .with_context(|| format!("create claim template {name}"))?;
    Ok(())
}

/// A sleeping pod `name` of the test namespace whose claim comes from the ResourceClaimTemplate `template`.
pub fn claim_pod(name: &str, template: &str) -> Pod {
    let pod = json!({
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": sleeping_pod_spec(json!({"name": "npu", "resourceClaimTemplateName": template})),
    });
    serde_json::from_value(pod).expect("a pod")
}
