//! ResourceClaims as the scheduler leaves them, prepared and unprepared through the fake kubelet; the published
//! slices as the API server holds them.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::ClaimRef;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::resource::v1::ResourceSlice;
use serde_json::json;

/// The claims side of one node.
pub struct Claims<'a> {
    pub server: &'a FakeApiServer,
    pub kubelet: &'a FakeKubelet,
    pub driver: &'a str,
    pub node: &'a str,
}

impl Claims<'_> {
    /// A claim allocated the first `chips` chips (`npu-0`..), under one of two names per size: the fake server
    /// replaces an object seeded again (with a new UID), so its store stays small however long the load runs.
    fn allocated(&self, chips: usize, serial: usize) -> Result<ClaimRef> {
        let name = format!("perf-{chips}-{}", serial % 2);
        let results: Vec<_> = (0..chips)
            .map(|phy| json!({"request": "npu", "driver": self.driver, "pool": self.node, "device": format!("npu-{phy}")}))
            .collect();
        let stored = self.server.seed(json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": self.driver}}]}},
            "status": {"allocation": {"devices": {"results": results}}},
        }));
        let uid = stored["metadata"]["uid"].as_str().ok_or_else(|| anyhow!("the fake server gave no UID"))?;
        Ok(ClaimRef { namespace: "default".into(), name, uid: uid.to_owned() })
    }

    /// Prepares a fresh claim of `chips` chips and unprepares it: how long each call took, as the kubelet sees it.
    pub async fn prepare_and_unprepare(&self, chips: usize, serial: usize) -> Result<(Duration, Duration)> {
        let claim = self.allocated(chips, serial)?;
        let claims = std::slice::from_ref(&claim);
        let started = Instant::now();
        let prepared = self.kubelet.prepare(self.driver, claims).await?;
        let prepare = started.elapsed();
        if let Some(Err(error)) = prepared.get(&claim.uid) {
            return Err(anyhow!("prepare of {} ({chips} chips) failed: {error}", claim.name));
        }
        let started = Instant::now();
        let unprepared = self.kubelet.unprepare(self.driver, claims).await?;
        let unprepare = started.elapsed();
        if let Some(Err(error)) = unprepared.get(&claim.uid) {
            return Err(anyhow!("unprepare of {} failed: {error}", claim.name));
        }
        Ok((prepare, unprepare))
    }

    fn our_slices(&self) -> impl Iterator<Item = ResourceSlice> + '_ {
        self.server.list::<ResourceSlice>().into_iter().filter(|slice| slice.spec.driver == self.driver)
    }

    /// Devices in the driver's published slices.
    pub fn published_devices(&self) -> usize {
        self.our_slices().map(|slice| slice.spec.devices.map_or(0, |devices| devices.len())).sum()
    }

    /// Whether `device` carries a taint in the published slices.
    pub fn tainted(&self, device: &str) -> bool {
        self.our_slices()
            .flat_map(|slice| slice.spec.devices.unwrap_or_default())
            .any(|d| d.name == device && d.taints.is_some_and(|taints| !taints.is_empty()))
    }
}
