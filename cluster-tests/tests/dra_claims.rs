//! How the real control plane hands out the DRA driver's chips beyond the examples: a ResourceClaimTemplate in a
//! Deployment (the controller manager makes a claim per pod; more replicas than chips leave the rest Pending), one
//! ResourceClaim shared by two pods (both see the same chip), and a constraint no device set meets (the scheduler
//! leaves the pod Pending and says why). programs/tests/dra_driver_e2e.rs covers the driver's side of the same
//! claims against the in-repo stand-ins; this is the reference for the control plane's.

use std::collections::BTreeSet;
use std::time::Duration;

use ascend_cluster_tests::stack::{
    davinci_nodes, deploy_dra, remove_dra, sleeping_pod_spec, test_namespace, unschedulable_reason, wait_claims_gone,
    DRA_CLASS_910B, NAMESPACE,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceClaimTemplate};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

/// A claim spec for `count` whole 910B chips, with optional constraints.
fn chips_spec(count: u32, constraints: serde_json::Value) -> serde_json::Value {
    json!({
        "devices": {
            "requests": [{"name": "npus", "exactly": {"deviceClassName": DRA_CLASS_910B, "count": count}}],
            "constraints": constraints,
        }
    })
}

/// The `/dev/davinci<N>` nodes a running pod's container sees.
fn chips_seen(cluster: &Cluster, pod: &str) -> Vec<String> {
    davinci_nodes(&cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout)
}

#[tokio::test]
async fn templates_shared_claims_and_unmeetable_constraints_on_the_real_control_plane() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra claims");
    deploy_dra(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    remove_leftovers(&cluster).await;
    template_in_a_deployment(&cluster, &mut timer).await;
    shared_claim(&cluster, &mut timer).await;
    unmeetable_constraint(&cluster, &mut timer).await;
    remove_dra(&cluster).await;
}

/// What an interrupted earlier run left in the test namespace.
async fn remove_leftovers(cluster: &Cluster) {
    let _ = cluster.try_kubectl(&[
        "delete",
        "deployments,pods,resourceclaims,resourceclaimtemplates",
        "--all",
        "-n",
        NAMESPACE,
        "--wait=true",
    ]);
    wait_claims_gone(cluster).await;
}

async fn template_in_a_deployment(cluster: &Cluster, timer: &mut Timer) {
    let templates: Api<ResourceClaimTemplate> = Api::namespaced(cluster.client(), NAMESPACE);
    let template = json!({"metadata": {"name": "one-npu"}, "spec": {"spec": chips_spec(1, json!([]))}});
    templates
        .create(&PostParams::default(), &serde_json::from_value(template).expect("template"))
        .await
        .expect("create");
    let deployments: Api<Deployment> = Api::namespaced(cluster.client(), NAMESPACE);
    let deployment = json!({
        "metadata": {"name": "npu-workers"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "npu-workers"}},
            "template": {
                "metadata": {"labels": {"app": "npu-workers"}},
                "spec": sleeping_pod_spec(json!({"name": "npus", "resourceClaimTemplateName": "one-npu"})),
            },
        },
    });
    deployments
        .create(&PostParams::default(), &serde_json::from_value(deployment).expect("deployment"))
        .await
        .expect("create deployment");
    let running = cluster.wait_pods_running(NAMESPACE, "app=npu-workers", 2, Duration::from_secs(90)).await;
    timer.mark("a Deployment of 2 replicas with a claim template running");
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let made = claims.list(&ListParams::default()).await.expect("claims").items;
    assert_eq!(made.len(), 2, "the controller manager makes one claim per pod: {made:?}");
    let mut seen = BTreeSet::new();
    for pod in &running {
        let chips = chips_seen(cluster, pod.metadata.name.as_deref().expect("name"));
        assert_eq!(chips.len(), 1, "one chip per replica: {chips:?}");
        seen.extend(chips);
    }
    assert_eq!(seen.len(), 2, "the replicas hold distinct chips: {seen:?}");

    // Nine replicas, eight chips: eight run, the ninth stays Pending with the scheduler's reason.
    cluster.kubectl(&["scale", "-n", NAMESPACE, "deployment/npu-workers", "--replicas=9"]);
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let replicas_by_phase = || async {
        let list = pods.list(&ListParams::default().labels("app=npu-workers")).await.map_err(|e| e.to_string())?;
        let in_phase = |phase: &str| -> Vec<String> {
            list.items
                .iter()
                .filter(|pod| pod.status.as_ref().and_then(|status| status.phase.as_deref()) == Some(phase))
                .filter_map(|pod| pod.metadata.name.clone())
                .collect()
        };
        let (running, pending) = (in_phase("Running"), in_phase("Pending"));
        if running.len() == 8 && pending.len() == 1 && list.items.len() == 9 {
            Ok((running, pending))
        } else {
            Err(format!("running {running:?}, pending {pending:?}"))
        }
    };
    let (running, pending) =
        wait_until("8 replicas running, 1 Pending", Duration::from_secs(120), replicas_by_phase).await;
    let reason = unschedulable_reason(cluster, &pending[0]).await;
    timer.mark("scaled to 9: 8 running, 1 Pending");
    println!("scheduler: {reason}");
    assert!(reason.contains("cannot allocate all claims"), "the scheduler's reason: {reason}");
    let mut chips = BTreeSet::new();
    for pod in &running {
        chips.extend(chips_seen(cluster, pod));
    }
    assert_eq!(chips.len(), 8, "the eight running replicas hold the eight chips, one each: {chips:?}");
    // A while later the same: the ninth replica took no chip from another.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = wait_until("still 8 running, 1 Pending", Duration::from_secs(5), replicas_by_phase).await;
    assert_eq!(later, (running, pending.clone()));

    cluster.kubectl(&["delete", "-n", NAMESPACE, "deployment/npu-workers", "--wait=true"]);
    cluster.kubectl(&["delete", "-n", NAMESPACE, "pods", "-l", "app=npu-workers", "--wait=true"]);
    wait_claims_gone(cluster).await;
    timer.mark("Deployment deleted, its claims gone");
    templates.delete("one-npu", &Default::default()).await.expect("delete template");
}

async fn shared_claim(cluster: &Cluster, timer: &mut Timer) {
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let claim = json!({"metadata": {"name": "shared-npu"}, "spec": chips_spec(1, json!([]))});
    claims.create(&PostParams::default(), &serde_json::from_value(claim).expect("claim")).await.expect("create claim");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    for name in ["sharer-a", "sharer-b"] {
        let pod = json!({
            "metadata": {"name": name, "labels": {"app": "sharers"}},
            "spec": sleeping_pod_spec(json!({"name": "npus", "resourceClaimName": "shared-npu"})),
        });
        pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
    }
    cluster.wait_pods_running(NAMESPACE, "app=sharers", 2, Duration::from_secs(90)).await;
    timer.mark("two pods sharing one claim running");
    let (a, b) = (chips_seen(cluster, "sharer-a"), chips_seen(cluster, "sharer-b"));
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a, b, "both pods of the shared claim see its one chip");
    let claim = claims.get("shared-npu").await.expect("claim");
    let reserved = claim.status.and_then(|status| status.reserved_for).unwrap_or_default();
    assert_eq!(reserved.len(), 2, "the claim is reserved for both pods: {reserved:?}");

    cluster.kubectl(&["delete", "-n", NAMESPACE, "pods", "-l", "app=sharers", "--wait=true"]);
    claims.delete("shared-npu", &Default::default()).await.expect("delete claim");
    wait_claims_gone(cluster).await;
}

async fn unmeetable_constraint(cluster: &Cluster, timer: &mut Timer) {
    // Two chips with the same physical id: no two devices share one, so no node can satisfy the claim.
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let constraint = json!([{"requests": ["npus"], "matchAttribute": "npu.huawei.com/physicalId"}]);
    let claim = json!({"metadata": {"name": "impossible"}, "spec": chips_spec(2, constraint)});
    claims.create(&PostParams::default(), &serde_json::from_value(claim).expect("claim")).await.expect("create claim");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let pod = json!({
        "metadata": {"name": "impossible"},
        "spec": sleeping_pod_spec(json!({"name": "npus", "resourceClaimName": "impossible"})),
    });
    pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
    let reason = unschedulable_reason(cluster, "impossible").await;
    timer.mark("a claim no node can meet: Pending");
    println!("scheduler: {reason}");
    assert!(reason.contains("cannot allocate all claims"), "the scheduler's reason: {reason}");
    let claim = claims.get("impossible").await.expect("claim");
    assert!(claim.status.and_then(|status| status.allocation).is_none(), "nothing allocated");

    pods.delete("impossible", &Default::default()).await.expect("delete pod");
    claims.delete("impossible", &Default::default()).await.expect("delete claim");
    wait_claims_gone(cluster).await;
}
