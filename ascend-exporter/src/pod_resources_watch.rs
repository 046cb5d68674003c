//! Keeps the pod attribution current by calling the kubelet's `PodResourcesLister.List`.
//!
//! The kubelet recreates its socket when it restarts, so the exporter mounts the directory
//! (`/var/lib/kubelet/pod-resources`), not the socket, and reconnects by path whenever a call fails, after a wait
//! that grows exponentially with jitter (`ascend_node::Backoff`, the daemons' one retry policy). Without a
//! kubelet the exporter keeps working: pod labels stay empty and `ascend_npu_pod_resources_up` is 0.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_node::pod_resources::api::ListPodResourcesResponse;
use ascend_node::pod_resources::DEFAULT_SOCKET;
use ascend_node::{naming::ResourceNaming, pod_resources::PodResourcesClient, Backoff, BackoffPolicy};

use crate::pod_attribution::{AssignedDevices, ContainerAssignment, ContainerRef, PodAttribution, SharedAttribution};

/// How the watcher talks to the kubelet.
#[derive(Debug, Clone)]
pub struct PodResourcesWatch {
    /// The socket path.
    pub socket: PathBuf,
    /// Time between `List` calls.
    pub refresh: Duration,
    /// Deadline of connecting and of one call.
    pub call_timeout: Duration,
    /// First reconnect delay, before jitter; doubled after each failed connection, and the delay again once a
    /// connection delivered an answer. Each delay is spread at random over `[d, 2d)`, so that the exporters of a
    /// fleet whose kubelets restarted together do not reconnect in step.
    pub min_backoff: Duration,
    /// Longest reconnect delay, jitter included.
    pub max_backoff: Duration,
    /// How the device plugin names resources and device ids (its `--resource-prefix` and `--rename`).
    pub naming: ResourceNaming,
}

impl Default for PodResourcesWatch {
    fn default() -> Self {
        Self {
            socket: PathBuf::from(DEFAULT_SOCKET),
            refresh: Duration::from_secs(5),
            call_timeout: Duration::from_secs(5),
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            naming: ResourceNaming::default(),
        }
    }
}

/// The assignments of a `List` answer: one entry per container, every resource.
fn assignments_from_response(response: ListPodResourcesResponse) -> Vec<ContainerAssignment> {
    let mut assignments = Vec::new();
    for pod in response.pod_resources {
        for container in pod.containers {
            let devices = container
                .devices
                .into_iter()
                .map(|d| AssignedDevices { resource_name: d.resource_name, device_ids: d.device_ids })
                .collect();
            let container =
                ContainerRef { namespace: pod.namespace.clone(), pod: pod.name.clone(), container: container.name };
            assignments.push(ContainerAssignment { container, devices });
        }
    }
    assignments
}

impl PodResourcesWatch {
    /// Lists pod resources until `shutdown` completes, publishing each answer into `shared`; reconnects with backoff.
    pub async fn run(self, shared: Arc<SharedAttribution>, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut delays = ReconnectDelays::new(self.min_backoff, self.max_backoff);
        let mut reported_unreachable = false;
        loop {
            let ended = tokio::select! {
                ended = self.session(&shared) => ended,
                () = &mut shutdown => return,
            };
            shared.mark_unreachable();
            if ended.published {
                reported_unreachable = false;
            }
            if reported_unreachable {
                tracing::debug!(error = %ended.error, "kubelet PodResources still unreachable");
            } else {
                tracing::warn!(error = %ended.error, "kubelet PodResources unreachable; pod labels kept as they were, retrying");
                reported_unreachable = true;
            }
            tokio::select! {
                () = tokio::time::sleep(delays.after(&ended)) => {}
                () = &mut shutdown => return,
            }
        }
    }

    /// One connection: lists every `refresh` until a call fails.
    async fn session(&self, shared: &SharedAttribution) -> SessionEnd {
        let mut client = match PodResourcesClient::connect(&self.socket, self.call_timeout).await {
            Ok(client) => client,
            Err(error) => return SessionEnd { published: false, error: error.to_string() },
        };
        let mut published = false;
        loop {
            let response = match client.list().await {
                Ok(response) => response,
                Err(error) => return SessionEnd { published, error: error.to_string() },
            };
            shared.publish(PodAttribution::from_assignments(&assignments_from_response(response), &self.naming));
            published = true;
            tokio::time::sleep(self.refresh).await;
        }
    }
}

/// Why a connection to the kubelet ended.
struct SessionEnd {
    /// Whether at least one `List` answer was published on it.
    published: bool,
    /// What failed.
    error: String,
}

/// The waits between connections to the kubelet: the daemons' one retry policy, started over after an answer.
struct ReconnectDelays {
    backoff: Backoff,
}

impl ReconnectDelays {
    fn new(min: Duration, max: Duration) -> Self {
        ReconnectDelays { backoff: Backoff::new(BackoffPolicy { first: min, max }) }
    }

    /// The wait before connecting again after `ended`: a connection that delivered an answer means the kubelet
    /// restarted or hiccupped, so the waits start over; otherwise the next, longer one.
    fn after(&mut self, ended: &SessionEnd) -> Duration {
        if ended.published {
            self.backoff.reset();
        }
        self.backoff.next_wait()
    }
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::PhyId;
    use ascend_node::pod_resources::api::{ContainerDevices, ContainerResources, PodResources};

    use super::*;

    fn ended(published: bool) -> SessionEnd {
        SessionEnd { published, error: "connection refused".to_owned() }
    }

    #[test]
    fn reconnect_delays_grow_with_jitter_and_start_over_after_an_answer() {
        let (min, max) = (Duration::from_millis(100), Duration::from_secs(2));
        let mut delays = ReconnectDelays::new(min, max);
        let failures: Vec<Duration> = (0..8).map(|_| delays.after(&ended(false))).collect();
        for (attempt, delay) in failures.iter().enumerate().take(4) {
            let base = min * (1 << attempt);
            assert!(*delay >= base && *delay < base * 2, "attempt {attempt}: {delay:?} not in [{base:?}, 2x)");
        }
        assert!(failures.windows(2).take(3).all(|pair| pair[1] > pair[0]), "delays must grow: {failures:?}");
        assert!(failures.iter().all(|delay| *delay <= max), "{failures:?}");
        assert!(failures[7] >= max / 2, "at the cap: {failures:?}");

        let after_answer = delays.after(&ended(true));
        assert!(after_answer >= min && after_answer < min * 2, "an answer starts over: {after_answer:?}");
        let next = delays.after(&ended(false));
        assert!(next >= min * 2 && next < min * 4, "and the waits grow again: {next:?}");

        let jittered: std::collections::BTreeSet<Duration> =
            (0..50).map(|_| ReconnectDelays::new(min, max).after(&ended(false))).collect();
        assert!(jittered.len() > 40, "a fleet reconnects at different times: {jittered:?}");
    }

    #[test]
    fn every_container_of_every_pod_becomes_an_assignment() {
        let response = ListPodResourcesResponse {
            pod_resources: vec![PodResources {
                name: "train-0".into(),
                namespace: "ml".into(),
                containers: vec![
                    ContainerResources {
                        name: "worker".into(),
                        devices: vec![ContainerDevices {
                            resource_name: "huawei.com/Ascend910".into(),
                            device_ids: vec!["Ascend910-4".into()],
                            topology: None,
                        }],
                        ..Default::default()
                    },
                    ContainerResources { name: "sidecar".into(), ..Default::default() },
                ],
                ..Default::default()
            }],
        };
        let assignments = assignments_from_response(response);
        assert_eq!(assignments.len(), 2);
        let attribution = PodAttribution::from_assignments(&assignments, &ResourceNaming::default());
        let holder = &attribution.holders_of(PhyId(4))[0];
        assert_eq!(
            (holder.namespace.as_str(), holder.pod.as_str(), holder.container.as_str()),
            ("ml", "train-0", "worker")
        );
    }
}
