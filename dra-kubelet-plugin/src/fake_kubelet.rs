//! A DRA kubelet peer for tests (feature `fake-kubelet`). It does what the kubelet does, over the real sockets and
//! the real protocol: it watches the registration directory, calls `GetInfo` on each new socket (names starting
//! with `.` are ignored), picks the first service of the plugin's list that it knows, answers with
//! `NotifyRegistrationStatus`, follows the health stream if the plugin offers one, and calls
//! `NodePrepareResources` / `NodeUnprepareResources` on the negotiated service when a test asks. A deleted
//! registration socket deregisters the plugin; [`FakeKubelet::restart`] forgets everything and registers every
//! socket again, like a restarting kubelet.
//!
//! **Outside the semver promise.** A test double (feature `fake-kubelet`): it follows what this workspace's tests need,
//! and its API may change in any release, patch releases included. Use it from `[dev-dependencies]`, and pin the exact
//! version (`=0.1.x`) if your tests depend on its details.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::api::health_v1alpha1::dra_resource_health_client::DraResourceHealthClient;
use crate::api::health_v1alpha1::{DeviceHealth as WireHealth, NodeWatchResourcesRequest};
use crate::api::registration::registration_client::RegistrationClient;
use crate::api::registration::{InfoRequest, RegistrationStatus};
use crate::api::{dra_v1, dra_v1beta1};
use crate::driver::{ClaimRef, PreparedDevice};
use crate::error::{Error, Result};
use crate::registration::{DRA_PLUGIN_TYPE, DRA_V1, DRA_V1BETA1, HEALTH_V1ALPHA1};
use kubelet_socket::{connect, identity, FileIdentity};

const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const SCAN_INTERVAL: Duration = Duration::from_millis(20);

/// Calls one method of the DRA service in the generated module `$version` (`dra_v1` or `dra_v1beta1`) with the
/// claims of a request, and yields the per-claim answers. The two versions' messages have the same fields but are
/// distinct types, so the call is written once here for both.
macro_rules! dra_call {
    ($version:ident, $channel:expr, $claims:expr, $method:ident, $request:ident, $failed:expr) => {{
        let claims = $claims
            .iter()
            .map(|c| $version::Claim { namespace: c.namespace.clone(), uid: c.uid.clone(), name: c.name.clone() })
            .collect();
        $version::dra_plugin_client::DraPluginClient::new($channel)
            .$method($version::$request { claims })
            .await
            .map_err($failed)?
            .into_inner()
            .claims
    }};
}

/// What a prepare call answered for each claim UID: the devices, or the claim's error.
pub type PrepareAnswers = BTreeMap<String, std::result::Result<Vec<PreparedDevice>, String>>;
/// What an unprepare call answered for each claim UID.
pub type UnprepareAnswers = BTreeMap<String, std::result::Result<(), String>>;

/// One registered plugin as the peer sees it.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The driver name from `GetInfo`.
    pub driver: String,
    /// The DRA socket from `GetInfo`.
    pub endpoint: PathBuf,
    /// The plugin's list of services, in its order.
    pub supported_versions: Vec<String>,
    /// The DRA service the peer chose (`v1.DRAPlugin` or `v1beta1.DRAPlugin`).
    pub service: String,
    /// The registration socket it came through.
    pub registration_socket: PathBuf,
    /// When the registration was confirmed.
    pub at: Instant,
    /// Health messages received on the stream so far, with their arrival times.
    pub health_messages: Vec<Instant>,
    /// The latest health list.
    pub health: Option<Vec<WireHealth>>,
    serial: u64,
}

#[derive(Default)]
struct State {
    plugins: BTreeMap<String, Registered>,
    /// Registration sockets already handled, so that each is registered once per kubelet life.
    seen: HashMap<PathBuf, FileIdentity>,
    /// Refusals: (socket, reason).
    refused: Vec<(PathBuf, String)>,
    serial: u64,
}

struct Shared {
    registry_dir: PathBuf,
    known_services: Vec<String>,
    state: Mutex<State>,
    changes: watch::Sender<u64>,
}

impl Shared {
    /// Changes the state and tells the waiters ([`FakeKubelet::wait_until`]).
    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let result = f(&mut self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        self.changes.send_modify(|generation| *generation += 1);
        result
    }

    /// Reads the state. A read must not tell the waiters: a waiter's own check would wake it again at once, and it
    /// would spin without ever reaching its deadline.
    fn read_state<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// The peer.
pub struct FakeKubelet {
    shared: Arc<Shared>,
    changes: watch::Receiver<u64>,
    watcher: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeKubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeKubelet").field("registry_dir", &self.shared.registry_dir).finish()
    }
}

impl FakeKubelet {
    /// A kubelet 1.34 or newer (knows `v1.DRAPlugin` and `v1beta1.DRAPlugin`) watching `registry_dir`.
    pub fn start(registry_dir: &Path) -> Self {
        Self::start_knowing(registry_dir, &[DRA_V1, DRA_V1BETA1])
    }

    /// A kubelet that knows only `services` (`&["v1beta1.DRAPlugin"]` behaves like kubelet 1.32 or 1.33).
    pub fn start_knowing(registry_dir: &Path, services: &[&str]) -> Self {
        let (changes_sender, changes) = watch::channel(0);
        let shared = Arc::new(Shared {
            registry_dir: registry_dir.to_owned(),
            known_services: services.iter().map(|s| (*s).to_owned()).collect(),
            state: Mutex::new(State::default()),
            changes: changes_sender,
        });
        let watcher = Some(tokio::spawn(watch_registry(Arc::clone(&shared))));
        FakeKubelet { shared, changes, watcher }
    }

    /// Restarts like a kubelet: forgets every registration and registers every socket found again.
    pub fn restart(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        self.shared.with_state(|state| {
            state.plugins.clear();
            state.seen.clear();
        });
        self.watcher = Some(tokio::spawn(watch_registry(Arc::clone(&self.shared))));
    }

    /// Stops watching (registrations stay as they are).
    pub fn shutdown(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
    }

    /// The registration of `driver`, if any.
    pub fn registered(&self, driver: &str) -> Option<Registered> {
        self.shared.read_state(|state| state.plugins.get(driver).cloned())
    }

    /// Every registration refused so far: the socket and the reason sent to the plugin.
    pub fn refused(&self) -> Vec<(PathBuf, String)> {
        self.shared.read_state(|state| state.refused.clone())
    }

    /// Waits until `condition` holds, checking on every change the peer sees.
    ///
    /// # Errors
    /// [`Error::Grpc`] describing `what` when `timeout` passes first.
    pub async fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        condition: impl Fn(&FakeKubelet) -> bool,
    ) -> Result<()> {
        let mut changes = self.changes.clone();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if condition(self) {
                return Ok(());
            }
            let woken = tokio::time::timeout_at(deadline, changes.changed()).await;
            if woken.is_err() || tokio::time::Instant::now() >= deadline {
                let plugins: Vec<String> = self.shared.read_state(|state| state.plugins.keys().cloned().collect());
                return Err(Error::grpc(
                    format!("waiting for {what}"),
                    &self.shared.registry_dir,
                    format!("not reached within {timeout:?}; registered: {plugins:?}"),
                ));
            }
        }
    }

    /// Waits for `driver` to be registered and returns its registration.
    ///
    /// # Errors
    /// [`Error::Grpc`] when it is not registered within `timeout`.
    pub async fn wait_registered(&self, driver: &str, timeout: Duration) -> Result<Registered> {
        self.wait_until(&format!("{driver} to register"), timeout, |k| k.registered(driver).is_some()).await?;
        self.registered(driver).ok_or_else(|| Error::grpc("registration", &self.shared.registry_dir, "vanished"))
    }

    /// Calls `NodePrepareResources` on `driver` over the negotiated service, as the kubelet does before starting
    /// a pod, and checks that every claim got an answer.
    ///
    /// # Errors
    /// [`Error::Grpc`] when the driver is not registered, the call fails, or a claim got no answer.
    pub async fn prepare(&self, driver: &str, claims: &[ClaimRef]) -> Result<PrepareAnswers> {
        let plugin = self.plugin(driver)?;
        let channel = connect(&plugin.endpoint, CALL_TIMEOUT).await?;
        let failed = |status: tonic::Status| Error::grpc("NodePrepareResources", &plugin.endpoint, status);
        let answers: PrepareAnswers = if plugin.service == DRA_V1 {
            let answers =
                dra_call!(dra_v1, channel, claims, node_prepare_resources, NodePrepareResourcesRequest, failed);
            answers.into_iter().map(|(uid, answer)| (uid, v1_answer(answer))).collect()
        } else {
            let answers =
                dra_call!(dra_v1beta1, channel, claims, node_prepare_resources, NodePrepareResourcesRequest, failed);
            answers.into_iter().map(|(uid, answer)| (uid, v1beta1_answer(answer))).collect()
        };
        every_claim_answered("NodePrepareResources", &plugin.endpoint, claims, &answers)?;
        Ok(answers)
    }

    /// Calls `NodeUnprepareResources` on `driver` over the negotiated service and checks that every claim got an
    /// answer.
    ///
    /// # Errors
    /// [`Error::Grpc`] when the driver is not registered, the call fails, or a claim got no answer.
    pub async fn unprepare(&self, driver: &str, claims: &[ClaimRef]) -> Result<UnprepareAnswers> {
        let plugin = self.plugin(driver)?;
        let channel = connect(&plugin.endpoint, CALL_TIMEOUT).await?;
        let failed = |status: tonic::Status| Error::grpc("NodeUnprepareResources", &plugin.endpoint, status);
        let to_result = |error: String| if error.is_empty() { Ok(()) } else { Err(error) };
        let answers: UnprepareAnswers = if plugin.service == DRA_V1 {
            dra_call!(dra_v1, channel, claims, node_unprepare_resources, NodeUnprepareResourcesRequest, failed)
                .into_iter()
                .map(|(uid, answer)| (uid, to_result(answer.error)))
                .collect()
        } else {
            dra_call!(dra_v1beta1, channel, claims, node_unprepare_resources, NodeUnprepareResourcesRequest, failed)
                .into_iter()
                .map(|(uid, answer)| (uid, to_result(answer.error)))
                .collect()
        };
        every_claim_answered("NodeUnprepareResources", &plugin.endpoint, claims, &answers)?;
        Ok(answers)
    }

    fn plugin(&self, driver: &str) -> Result<Registered> {
        self.registered(driver)
            .ok_or_else(|| Error::grpc(format!("calling {driver}"), &self.shared.registry_dir, "not registered"))
    }
}

impl Drop for FakeKubelet {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn every_claim_answered<T>(
    call: &str,
    endpoint: &Path,
    claims: &[ClaimRef],
    answers: &BTreeMap<String, T>,
) -> Result<()> {
    let missing: Vec<&str> = claims.iter().map(|c| c.uid.as_str()).filter(|uid| !answers.contains_key(*uid)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::grpc(call, endpoint, format!("no answer for claim(s) {missing:?}")))
    }
}

fn v1_answer(answer: dra_v1::NodePrepareResourceResponse) -> std::result::Result<Vec<PreparedDevice>, String> {
    if !answer.error.is_empty() {
        return Err(answer.error);
    }
    Ok(answer
        .devices
        .into_iter()
        .map(|d| PreparedDevice {
            request_names: d.request_names,
            pool: d.pool_name,
            device: d.device_name,
            cdi_device_ids: d.cdi_device_ids,
            share_id: d.share_id,
        })
        .collect())
}

fn v1beta1_answer(
    answer: dra_v1beta1::NodePrepareResourceResponse,
) -> std::result::Result<Vec<PreparedDevice>, String> {
    if !answer.error.is_empty() {
        return Err(answer.error);
    }
    Ok(answer
        .devices
        .into_iter()
        .map(|d| PreparedDevice {
            request_names: d.request_names,
            pool: d.pool_name,
            device: d.device_name,
            cdi_device_ids: d.cdi_device_ids,
            share_id: None,
        })
        .collect())
}

async fn watch_registry(shared: Arc<Shared>) {
    loop {
        scan(&shared).await;
        tokio::time::sleep(SCAN_INTERVAL).await;
    }
}

async fn scan(shared: &Arc<Shared>) {
    let Ok(entries) = std::fs::read_dir(&shared.registry_dir) else { return };
    let present: HashMap<PathBuf, FileIdentity> = entries
        .flatten()
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|entry| identity(&entry.path()).map(|id| (entry.path(), id)))
        .collect();
    let new: Vec<PathBuf> = shared.with_state(|state| {
        // A socket that disappeared (or was replaced) deregisters its plugin.
        state.seen.retain(|path, id| present.get(path) == Some(id));
        let seen = state.seen.clone();
        state.plugins.retain(|_, plugin| seen.contains_key(&plugin.registration_socket));
        let new: Vec<PathBuf> = present.keys().filter(|path| !seen.contains_key(*path)).cloned().collect();
        for path in &new {
            state.seen.insert(path.clone(), present[path]);
        }
        new
    });
    for socket in new {
        if let Err(error) = register(shared, &socket).await {
            // The kubelet's plugin manager keeps a socket it could not register in its desired state and tries again
            // on its next reconcile (k8s.io/kubernetes pkg/kubelet/pluginmanager/reconciler): so does the peer.
            tracing::warn!(socket = %socket.display(), %error, "fake kubelet: registration failed; retrying");
            shared.with_state(|state| state.seen.remove(&socket));
        }
    }
}

async fn register(shared: &Arc<Shared>, socket: &Path) -> Result<()> {
    let mut client = RegistrationClient::new(connect(socket, CALL_TIMEOUT).await?);
    let info = client.get_info(InfoRequest {}).await.map_err(|s| Error::grpc("GetInfo", socket, s))?.into_inner();
    let service = info.supported_versions.iter().find(|v| shared.known_services.contains(v)).cloned();
    let verdict = match (&service, info.r#type.as_str()) {
        (_, kind) if kind != DRA_PLUGIN_TYPE => Err(format!("plugin type {kind:?} is not {DRA_PLUGIN_TYPE:?}")),
        (None, _) => Err(format!(
            "none of the plugin's versions {:?} is supported by this kubelet ({:?})",
            info.supported_versions, shared.known_services
        )),
        (Some(service), _) => Ok(service.clone()),
    };
    let status = match &verdict {
        Ok(_) => RegistrationStatus { plugin_registered: true, error: String::new() },
        Err(reason) => RegistrationStatus { plugin_registered: false, error: reason.clone() },
    };
    if let Err(reason) = &verdict {
        shared.with_state(|state| state.refused.push((socket.to_owned(), reason.clone())));
    }
    client.notify_registration_status(status).await.map_err(|s| Error::grpc("NotifyRegistrationStatus", socket, s))?;
    let Ok(service) = verdict else { return Ok(()) };
    let endpoint = PathBuf::from(&info.endpoint);
    let health = info.supported_versions.iter().any(|v| v == HEALTH_V1ALPHA1);
    let serial = shared.with_state(|state| {
        state.serial += 1;
        let serial = state.serial;
        let plugin = Registered {
            driver: info.name.clone(),
            endpoint: endpoint.clone(),
            supported_versions: info.supported_versions.clone(),
            service,
            registration_socket: socket.to_owned(),
            at: Instant::now(),
            health_messages: Vec::new(),
            health: None,
            serial,
        };
        state.plugins.insert(info.name.clone(), plugin);
        serial
    });
    if health {
        tokio::spawn(follow_health(Arc::clone(shared), info.name, endpoint, serial));
    }
    Ok(())
}

async fn follow_health(shared: Arc<Shared>, driver: String, endpoint: PathBuf, serial: u64) {
    let Ok(channel) = connect(&endpoint, CALL_TIMEOUT).await else { return };
    // The stream lives as long as the plugin; only connecting is bounded.
    let Ok(response) = DraResourceHealthClient::new(channel).node_watch_resources(NodeWatchResourcesRequest {}).await
    else {
        return;
    };
    let mut stream = response.into_inner();
    while let Ok(Some(update)) = stream.message().await {
        let current = shared.with_state(|state| match state.plugins.get_mut(&driver) {
            Some(plugin) if plugin.serial == serial => {
                plugin.health_messages.push(Instant::now());
                plugin.health = Some(update.devices);
                true
            }
            _ => false,
        });
        if !current {
            return;
        }
    }
}
