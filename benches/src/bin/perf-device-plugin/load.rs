//! A minute of kubelet-like load on the plugin (Allocate and GetPreferredAllocation back to back), after which the
//! daemon's resident memory is read.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ascend_deviceplugin::api::v1beta1::device_plugin_client::DevicePluginClient;
use ascend_deviceplugin::api::v1beta1::{ContainerPreferredAllocationRequest, PreferredAllocationRequest};
use tonic::transport::Channel;

use crate::allocate_latency::request_for;

/// Runs the load for `duration`; touches `ready_file` (if any) when it starts so that a script can load another
/// component over the same minute. Returns the number of RPCs made.
///
/// # Errors
/// The ready file cannot be written, or an RPC fails.
pub async fn run(
    client: &mut DevicePluginClient<Channel>,
    ids: &[String],
    duration: Duration,
    ready_file: Option<&Path>,
) -> Result<u64> {
    if let Some(path) = ready_file {
        std::fs::write(path, b"load started\n").with_context(|| format!("cannot write {}", path.display()))?;
    }
    let started = Instant::now();
    let mut calls = 0u64;
    while started.elapsed() < duration {
        let id = &ids[(calls as usize / 2) % ids.len()];
        client.allocate(request_for(id)).await.with_context(|| format!("Allocate of {id} under load"))?;
        let preferred = PreferredAllocationRequest {
            container_requests: vec![ContainerPreferredAllocationRequest {
                available_device_i_ds: ids.to_vec(),
                must_include_device_i_ds: vec![id.clone()],
                allocation_size: 2,
            }],
        };
        client.get_preferred_allocation(preferred).await.context("GetPreferredAllocation under load")?;
        calls += 2;
    }
    Ok(calls)
}
