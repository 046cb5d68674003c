//! Allocate latency over the plugin's gRPC socket, as the kubelet calls it: one container asking for one chip,
//! cycling through the advertised chips, one call after the other.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ascend_deviceplugin::api::v1beta1::device_plugin_client::DevicePluginClient;
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use tonic::transport::Channel;

/// Calls made before timing starts (connection set-up, first-call allocations).
const WARM_UP_CALLS: usize = 50;

/// One Allocate request for the chip `id`.
pub fn request_for(id: &str) -> AllocateRequest {
    AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: vec![id.to_owned()] }] }
}

/// Times `count` Allocate calls after a warm-up.
///
/// # Errors
/// The first failed call, with the chip it asked for.
pub async fn measure(client: &mut DevicePluginClient<Channel>, ids: &[String], count: usize) -> Result<Vec<Duration>> {
    let mut latencies = Vec::with_capacity(count);
    for call in 0..WARM_UP_CALLS + count {
        let id = &ids[call % ids.len()];
        let started = Instant::now();
        let response = client.allocate(request_for(id)).await.with_context(|| format!("Allocate of {id}"))?;
        let elapsed = started.elapsed();
        if response.into_inner().container_responses.len() != 1 {
            anyhow::bail!("Allocate of {id}: expected one container response");
        }
        if call >= WARM_UP_CALLS {
            latencies.push(elapsed);
        }
    }
    Ok(latencies)
}
