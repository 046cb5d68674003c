//! The supervisor: runs the health monitor, one server per advertised resource, registration with the kubelet,
//! and recovery from kubelet restarts.
//!
//! It checks the plugin directory as soon as inotify reports an entry created, removed or renamed there
//! (`directory_changes.rs`), as soon as a server stops serving, when a failed registration or serve is due again, and
//! periodically as the backstop: every `watch_interval` (1 s by default) while the directory cannot be watched,
//! every `WATCHED_CHECK_INTERVAL` (10 s) while it is (nothing is known to need that check then; an idle plugin no
//! longer wakes every second for it). A server whose socket was deleted is stopped and served again, then
//! re-registered; a new `kubelet.sock` (a restarted kubelet) re-registers every resource. Health lives in the
//! monitor, not in the servers, so nothing is lost across these restarts.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::DeviceManager;

use crate::allocate::AllocateConfig;
use crate::assigner::DeviceAssigner;
use crate::directory_changes::DirectoryChanges;
use crate::error::Result;
use crate::held::HoldingsTracker;
use crate::kubelet::{register, DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};
use crate::observer::PluginObserver;
use crate::server::{ResourceServer, ServerContext};
use ascend_node::{HealthMonitor, MonitorConfig};
use kubelet_socket::{identity, FileIdentity};
use tokio::sync::Notify;

/// Everything the plugin is configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// The kubelet's device-plugin directory.
    pub plugin_dir: PathBuf,
    /// Health polling and resource naming.
    pub monitor: MonitorConfig,
    /// Allocation mode.
    pub allocate: AllocateConfig,
    /// How often the plugin directory is checked for deleted sockets and a new kubelet while inotify cannot watch it
    /// (1 s; the 100 ms it was cost an idle plugin 60 to 80 of its 160 ms of CPU a minute on a simulated Atlas 800T
    /// A2). While the directory is watched the periodic check is 10 s apart, or this if longer.
    pub watch_interval: Duration,
    /// How long to wait before retrying a failed registration.
    pub register_retry: Duration,
    /// Timeout of one connection or registration attempt.
    pub call_timeout: Duration,
    /// The kubelet's PodResources socket, read before every registration and every `pod_resources_interval` for
    /// the chips running pods hold under ids the kubelet does not count ([`crate::Holdings`]); `None` reads nothing.
    pub pod_resources_socket: Option<PathBuf>,
    /// How often PodResources is read while registered.
    pub pod_resources_interval: Duration,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self {
            plugin_dir: PathBuf::from(DEFAULT_PLUGIN_DIR),
            monitor: MonitorConfig::default(),
            allocate: AllocateConfig::default(),
            watch_interval: Duration::from_millis(1000),
            register_retry: Duration::from_secs(1),
            call_timeout: Duration::from_secs(5),
            pod_resources_socket: None,
            pod_resources_interval: Duration::from_secs(5),
        }
    }
}

struct Served {
    server: ResourceServer,
    /// The `kubelet.sock` this resource was registered with, read just before dialing it: a new one (a restarted
    /// kubelet) means registering again. Read before, not after, so that a kubelet restarting during the call is
    /// registered with again rather than missed (at worst a kubelet gets the same registration twice).
    registered_with: Option<FileIdentity>,
    /// The last failed attempt and the `kubelet.sock` it was made against: retried after `register_retry`, or at
    /// once when that socket changes.
    failed_attempt: Option<(Instant, Option<FileIdentity>)>,
}

/// Runs the device plugin until `shutdown` completes, then stops every server and removes its socket.
///
/// # Errors
/// [`crate::Error::Config`] or [`crate::Error::Monitor`] if the health monitor cannot start. Failures to serve or
/// register are logged, reported to the observer and retried, never returned.
pub async fn run(
    manager: Arc<dyn DeviceManager>,
    config: PluginConfig,
    observer: Arc<dyn PluginObserver>,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let monitor = HealthMonitor::start(manager, config.monitor.clone(), observer.clone())?;
    let holdings = Arc::new(HoldingsTracker::new(config.pod_resources_socket.clone(), config.call_timeout));
    serve(&monitor, config, observer, None, holdings, shutdown).await;
    drop(monitor);
    Ok(())
}

/// Serves the resources of an already started monitor until `shutdown` completes, with Allocate asking `assigner`
/// (when given) which devices a container gets. [`run`] is this with a monitor of its own; a daemon that also needs
/// the monitor's snapshots or [`HealthMonitor::separations`] (Volcano mode) starts the monitor itself.
///
/// `holdings` is the node's one reader of the kubelet's PodResources (made from `config`'s socket and timeout):
/// this function reads it before each registration and every `config.pod_resources_interval`, and the daemon's
/// other users (Volcano's free-chip list, recovery's holders) subscribe to the same reader.
pub async fn serve(
    monitor: &HealthMonitor,
    config: PluginConfig,
    observer: Arc<dyn PluginObserver>,
    assigner: Option<Arc<dyn DeviceAssigner>>,
    holdings: Arc<HoldingsTracker>,
    shutdown: impl Future<Output = ()>,
) {
    let context = ServerContext {
        snapshot: monitor.subscribe(),
        allocate: Arc::new(config.allocate.clone()),
        observer: Arc::clone(&observer),
        assigner,
        holdings: holdings.subscribe(),
    };
    let (stop_reading, reading_stopped) = tokio::sync::oneshot::channel::<()>();
    let reader = tokio::spawn(Arc::clone(&holdings).run(config.pod_resources_interval, async {
        let _ = reading_stopped.await;
    }));
    let server_ended = Arc::new(Notify::new());
    let mut supervisor = Supervisor {
        config,
        context,
        observer,
        holdings,
        served: BTreeMap::new(),
        serve_failures: BTreeMap::new(),
        kubelet_socket: None,
        server_ended: Arc::clone(&server_ended),
    };
    let mut snapshot_changes = monitor.subscribe();
    let mut directory_changes = DirectoryChanges::watch(&supervisor.config.plugin_dir);
    tokio::pin!(shutdown);
    let mut next_check = Instant::now();
    loop {
        let retry_due = supervisor.next_retry();
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep_until(next_check.into()) => directory_changes.watch_again_if_lost(),
            () = directory_changes.changed() => tokio::time::sleep(DIRECTORY_SETTLE).await,
            () = server_ended.notified() => {}
            () = sleep_until_some(retry_due) => {}
            changed = snapshot_changes.changed() => if changed.is_err() { break },
        }
        supervisor.reconcile().await;
        let period = match directory_changes.is_watching() {
            true => supervisor.config.watch_interval.max(WATCHED_CHECK_INTERVAL),
            false => supervisor.config.watch_interval,
        };
        // From this check on: whatever woke it, the directory was just checked.
        next_check = Instant::now() + period;
    }
    tracing::info!("shutting down");
    supervisor.stop_all().await;
    let _ = stop_reading.send(());
    let _ = reader.await;
}

/// How long the supervisor lets the plugin directory settle after inotify reports a change, before it checks: a
/// restarting kubelet removes every socket and makes a new `kubelet.sock` in one burst (one check for all of it),
/// and its socket file exists from `bind(2)` on but refuses a dial until its `listen(2)` (every first registration
/// failed when dialed at once, and waited for the 1 s retry).
const DIRECTORY_SETTLE: Duration = Duration::from_millis(50);

/// How far apart the periodic checks of the plugin directory are while inotify watches it: inotify reports every
/// change the checks look for (a queue overflow and a lost watch wake the supervisor too), a stopped server wakes it,
/// and registration retries have their own deadlines, so this check only guards against what nobody foresaw. It
/// was every second: about 60 of an idle plugin's wake-ups a minute.
const WATCHED_CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// Completes at `due`; never without one.
async fn sleep_until_some(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}

struct Supervisor {
    config: PluginConfig,
    context: ServerContext,
    observer: Arc<dyn PluginObserver>,
    holdings: Arc<HoldingsTracker>,
    served: BTreeMap<String, Served>,
    /// When serving a resource last failed, to retry at the registration pace rather than every tick.
    serve_failures: BTreeMap<String, Instant>,
    kubelet_socket: Option<FileIdentity>,
    /// Notified when a server stops serving.
    server_ended: Arc<Notify>,
}

impl Supervisor {
    async fn reconcile(&mut self) {
        let kubelet_socket = identity(&self.config.plugin_dir.join(KUBELET_SOCKET));
        if kubelet_socket.is_some() && kubelet_socket != self.kubelet_socket {
            if self.kubelet_socket.is_some() {
                tracing::info!("kubelet.sock was recreated (kubelet restart); registering again");
            }
            // What running pods hold is known before the kubelet can ask for a device: a node taken over from
            // another plugin, or a kubelet that restarted. A failure is logged; the last holdings stay.
            let _ = self.holdings.refresh().await;
        }
        self.kubelet_socket = kubelet_socket;

        let wanted: BTreeMap<String, String> = self
            .context
            .snapshot
            .borrow()
            .resources()
            .filter(|resource| !resource.devices.is_empty())
            .map(|resource| (resource.name.clone(), resource.socket.clone()))
            .collect();
        let stale: Vec<String> = self
            .served
            .iter()
            .filter(|(name, served)| !wanted.contains_key(*name) || !served.server.is_intact())
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            if let Some(served) = self.served.remove(&name) {
                if wanted.contains_key(&name) {
                    tracing::info!(resource = %name, "socket removed (kubelet restart?); serving again");
                }
                served.server.stop().await;
            }
        }
        for (name, socket) in &wanted {
            if !self.served.contains_key(name) {
                self.start_server(name, socket).await;
            }
        }
        self.register_pending().await;
    }

    async fn start_server(&mut self, resource: &str, socket: &str) {
        if self.serve_failures.get(resource).is_some_and(|at| at.elapsed() < self.config.register_retry) {
            return;
        }
        let dir = &self.config.plugin_dir;
        let ended = Some(Arc::clone(&self.server_ended));
        match ResourceServer::start_telling_end(dir, resource, socket, &self.context, self.config.call_timeout, ended)
            .await
        {
            Ok(server) => {
                self.serve_failures.remove(resource);
                self.served.insert(resource.to_owned(), Served { server, registered_with: None, failed_attempt: None });
            }
            Err(error) => {
                tracing::error!(resource, %error, retry_in = ?self.config.register_retry, "cannot serve; retrying");
                self.serve_failures.insert(resource.to_owned(), Instant::now());
            }
        }
    }

    async fn register_pending(&mut self) {
        let retry = self.config.register_retry;
        let kubelet_path = self.config.plugin_dir.join(KUBELET_SOCKET);
        for served in self.served.values_mut() {
            let kubelet_socket = identity(&kubelet_path);
            let waiting =
                served.failed_attempt.is_some_and(|(at, against)| against == kubelet_socket && at.elapsed() < retry);
            if kubelet_socket.is_none() || served.registered_with == kubelet_socket || waiting {
                continue;
            }
            let resource = served.server.resource().to_owned();
            let socket = served.server.socket().to_owned();
            match register(&self.config.plugin_dir, &resource, &socket, self.config.call_timeout).await {
                Ok(()) => {
                    tracing::info!(%resource, %socket, "registered with the kubelet");
                    served.registered_with = kubelet_socket;
                    served.failed_attempt = None;
                    self.observer.registered(&resource);
                }
                Err(error) => {
                    tracing::warn!(%resource, %error, retry_in = ?retry, "registration failed; retrying");
                    served.failed_attempt = Some((Instant::now(), kubelet_socket));
                    self.observer.registration_failed(&resource, &error);
                }
            }
        }
    }

    /// When the earliest failed registration or serve is due again, if that is still ahead: the supervisor wakes
    /// then, whatever its periodic check (a kubelet socket created a moment before it listens refuses the first
    /// dial).
    fn next_retry(&self) -> Option<Instant> {
        let retry = self.config.register_retry;
        let registrations = self.served.values().filter_map(|served| served.failed_attempt.map(|(at, _)| at));
        let now = Instant::now();
        // Only a time still ahead: one that passed was dealt with by the check it woke (an attempt, or none while
        // there is no kubelet socket or the resource is no longer wanted), and waking for it again would spin.
        registrations.chain(self.serve_failures.values().copied()).map(|at| at + retry).filter(|due| *due > now).min()
    }

    async fn stop_all(&mut self) {
        for (_, served) in std::mem::take(&mut self.served) {
            served.server.stop().await;
        }
    }
}
