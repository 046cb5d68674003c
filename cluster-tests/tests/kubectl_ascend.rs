//! `kubectl ascend` on the real cluster: each report shows the truth after a pod takes chips and a chip faults and
//! recovers, read from what our daemons published on the real API server (the plain device plugin of the 910B pool).
//! The reference for these scenarios; ascend-cluster/tests/cluster_reports.rs covers every source (DRA, Volcano) and
//! the command line against the fake API server.

mod support;

use std::time::Duration;

use ascend_cluster::{capacity_report, nodes_report, pods_report, CapacityQuery, NodeNpus, Scope};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use support::{chip_fault, delete_pod, deploy_910b_pool, start_pod, test_namespace, NAMESPACE};

async fn our_node(cluster: &Cluster) -> Result<NodeNpus, String> {
    let report = nodes_report(&cluster.client()).await.map_err(|error| error.to_string())?;
    report.nodes.into_iter().find(|node| node.node == NODE_NAME).ok_or_else(|| "node not in the report".to_owned())
}

/// How many nodes `kubectl ascend capacity --chips N` lists.
async fn fits(cluster: &Cluster, chips: u32) -> usize {
    let query = CapacityQuery { chips, same_hccs: false, chip_type: None };
    capacity_report(&cluster.client(), &query).await.expect("capacity report").fits.len()
}

#[tokio::test]
async fn kubectl_ascend_shows_allocation_faults_and_room_on_the_real_cluster() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("kubectl ascend");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    start_pod(&cluster, "two-for-the-report", 2).await;
    timer.mark("a pod holds 2 chips");

    // A DRA driver that ran before leaves slices for 30 s; the report follows the node back to the device plugin.
    let node = wait_until("the node reported as a device-plugin node", Duration::from_secs(90), || async {
        let node = our_node(&cluster).await?;
        if node.modes == [ascend_cluster::Mode::DevicePlugin] {
            Ok(node)
        } else {
            Err(format!("{:?}", node.modes))
        }
    })
    .await;
    assert_eq!((node.total, node.allocated), (8, 2), "{node:?}");
    let pods = pods_report(&cluster.client(), &Scope::Namespace(NAMESPACE.to_owned())).await.expect("pods report");
    let held = pods.pods.iter().find(|pod| pod.pod == "two-for-the-report").expect("the pod in the report");
    assert_eq!((held.count, held.node.as_deref()), (2, Some(NODE_NAME)), "{held:?}");
    assert_eq!(fits(&cluster, 6).await, 1, "six chips fit beside the pod");
    assert_eq!(fits(&cluster, 7).await, 0, "seven do not");
    timer.mark("nodes, pods and capacity reports");

    cluster.set_overlay(vec![chip_fault(6, true)]);
    let faulty = wait_until("the report shows the unhealthy chip", Duration::from_secs(30), || async {
        let node = our_node(&cluster).await?;
        if node.unhealthy == 1 {
            Ok(node)
        } else {
            Err(format!("{node:?}"))
        }
    })
    .await;
    assert_eq!(faulty.healthy, 7, "{faulty:?}");
    assert_eq!(fits(&cluster, 6).await, 0, "a faulty chip leaves only five");
    timer.mark("fault in the reports");
    cluster.set_overlay(vec![chip_fault(6, false)]);
    wait_until("the chip healthy again in the report", Duration::from_secs(30), || async {
        let node = our_node(&cluster).await?;
        if node.unhealthy == 0 && node.healthy == 8 {
            Ok(())
        } else {
            Err(format!("{node:?}"))
        }
    })
    .await;
    timer.mark("recovery in the reports");
    delete_pod(&cluster, "two-for-the-report").await;
}
