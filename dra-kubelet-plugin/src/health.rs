//! The `v1alpha1.DRAResourceHealth` stream: the driver's complete device list on every change and at least every
//! refresh interval, because the kubelet turns a device it has not heard about for 30 s into `Unknown`.

use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::api::health_v1alpha1::{
    dra_resource_health_server::DraResourceHealth, DeviceHealth as WireHealth, DeviceIdentifier,
    HealthStatus as WireStatus, NodeWatchResourcesRequest, NodeWatchResourcesResponse,
};
use crate::driver::{DeviceHealth, HealthStatus};

/// The kubelet's limit on a health message (1.36).
const MESSAGE_LIMIT: usize = 1024;

pub(crate) struct HealthService {
    pub(crate) health: watch::Receiver<Vec<DeviceHealth>>,
    pub(crate) refresh: Duration,
    /// Ends the streams when the server stops, so that a graceful shutdown does not wait for the kubelet.
    pub(crate) stopping: watch::Receiver<bool>,
}

type HealthStream = Pin<Box<dyn Stream<Item = Result<NodeWatchResourcesResponse, Status>> + Send>>;

#[tonic::async_trait]
impl DraResourceHealth for HealthService {
    type NodeWatchResourcesStream = HealthStream;

    async fn node_watch_resources(
        &self,
        _request: Request<NodeWatchResourcesRequest>,
    ) -> Result<Response<Self::NodeWatchResourcesStream>, Status> {
        let (sender, receiver) = mpsc::channel(2);
        tokio::spawn(feed(self.health.clone(), self.refresh, self.stopping.clone(), sender));
        Ok(Response::new(Box::pin(ReceiverStream::new(receiver))))
    }
}

async fn feed(
    mut health: watch::Receiver<Vec<DeviceHealth>>,
    refresh: Duration,
    mut stopping: watch::Receiver<bool>,
    sender: mpsc::Sender<Result<NodeWatchResourcesResponse, Status>>,
) {
    let mut tick = tokio::time::interval(refresh);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let response = wire_response(&health.borrow_and_update());
        if sender.send(Ok(response)).await.is_err() {
            return;
        }
        tokio::select! {
            _ = tick.tick() => {}
            changed = health.changed() => if changed.is_err() { return },
            _ = stopping.wait_for(|stop| *stop) => return,
            () = sender.closed() => return,
        }
    }
}

fn wire_response(devices: &[DeviceHealth]) -> NodeWatchResourcesResponse {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let now = i64::try_from(now).unwrap_or(i64::MAX);
    let devices = devices
        .iter()
        .map(|device| WireHealth {
            device: Some(DeviceIdentifier { pool_name: device.pool.clone(), device_name: device.device.clone() }),
            health: wire_status(device.status) as i32,
            last_updated_time: now,
            health_check_timeout_seconds: device
                .timeout
                .map_or(0, |timeout| i64::try_from(timeout.as_secs().max(1)).unwrap_or(i64::MAX)),
            message: truncated(&device.message),
        })
        .collect();
    NodeWatchResourcesResponse { devices }
}

fn wire_status(status: HealthStatus) -> WireStatus {
    match status {
        HealthStatus::Unknown => WireStatus::Unknown,
        HealthStatus::Healthy => WireStatus::Healthy,
        HealthStatus::Unhealthy => WireStatus::Unhealthy,
    }
}

fn truncated(message: &str) -> String {
    if message.len() <= MESSAGE_LIMIT {
        return message.to_owned();
    }
    let mut end = MESSAGE_LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let message = "é".repeat(600);
        let cut = truncated(&message);
        assert!(cut.len() <= MESSAGE_LIMIT && cut.len() >= MESSAGE_LIMIT - 1);
        assert!(message.starts_with(&cut));
    }
}
