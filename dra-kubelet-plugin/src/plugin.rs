//! [`KubeletPlugin`]: serves a [`Driver`] to the kubelet and keeps serving it across kubelet restarts.
//!
//! Start-up order matters to the kubelet: the DRA socket is served (and answers a call) before the registration
//! socket appears, because the kubelet's plugin watcher dials the driver as soon as it sees the registration
//! socket. Afterwards a supervisor checks both sockets every [`PluginConfig::watch_interval`]: a socket that was
//! deleted or replaced (a kubelet cleaning its directories, an operator) is served again, which makes the kubelet
//! register the driver again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnixListenerStream;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::{Connected, Router};
use tonic::transport::Server;

use crate::api::dra_v1::dra_plugin_client::DraPluginClient;
use crate::api::dra_v1::dra_plugin_server::DraPluginServer as V1Server;
use crate::api::dra_v1::NodePrepareResourcesRequest;
use crate::api::dra_v1beta1::dra_plugin_server::DraPluginServer as V1beta1Server;
use crate::api::health_v1alpha1::dra_resource_health_server::DraResourceHealthServer;
use crate::api::registration::registration_server::RegistrationServer;
use crate::api::registration::PluginInfo;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::health::HealthService;
use crate::registration::{supported_versions, RegistrationService, RegistrationState, DRA_PLUGIN_TYPE};
use crate::service::{Calls, DraV1, DraV1beta1};
use kubelet_socket::{bind_fresh, connect, identity, remove_if_same, AuthorityRewriter, FileIdentity};

/// The kubelet's plugin-registration directory.
pub const DEFAULT_REGISTRY_DIR: &str = "/var/lib/kubelet/plugins_registry";
/// The kubelet's directory of plugin data (each driver gets `<dir>/<driver name>/`).
pub const DEFAULT_PLUGINS_DIR: &str = "/var/lib/kubelet/plugins";
/// The DRA socket's name inside the driver's data directory.
pub const DRA_SOCKET: &str = "dra.sock";

/// How long a stopping server may take to finish its calls before it is aborted.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How the plugin is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// The driver name (`spec.driver` of its ResourceSlices), a DNS subdomain such as `gpu.example.com`.
    pub driver_name: String,
    /// The kubelet's plugin-registration directory (default [`DEFAULT_REGISTRY_DIR`]).
    pub registry_dir: PathBuf,
    /// The kubelet's plugin data directory (default [`DEFAULT_PLUGINS_DIR`]).
    pub plugins_dir: PathBuf,
    /// The health stream repeats the list at least this often (default 10 s, a third of the kubelet's 30 s
    /// timeout, so that one late message never turns a device `Unknown`).
    pub health_refresh: Duration,
    /// How often the sockets are checked (default 1 s).
    pub watch_interval: Duration,
    /// Whether prepare and unprepare calls run one at a time (default `true`, like the Go helper): a driver that
    /// does its own locking can turn it off.
    pub serialize: bool,
    /// Timeout of the start-up self-check call (default 5 s).
    pub call_timeout: Duration,
}

impl PluginConfig {
    /// The defaults for `driver_name`.
    pub fn new(driver_name: impl Into<String>) -> Self {
        PluginConfig {
            driver_name: driver_name.into(),
            registry_dir: PathBuf::from(DEFAULT_REGISTRY_DIR),
            plugins_dir: PathBuf::from(DEFAULT_PLUGINS_DIR),
            health_refresh: Duration::from_secs(10),
            watch_interval: Duration::from_secs(1),
            serialize: true,
            call_timeout: Duration::from_secs(5),
        }
    }

    /// The driver's own directory: `<plugins_dir>/<driver_name>` (its socket; a good place for its checkpoint).
    pub fn data_dir(&self) -> PathBuf {
        self.plugins_dir.join(&self.driver_name)
    }

    /// The DRA socket: `<plugins_dir>/<driver_name>/dra.sock`.
    pub fn dra_socket(&self) -> PathBuf {
        self.data_dir().join(DRA_SOCKET)
    }

    /// The registration socket: `<registry_dir>/<driver_name>-reg.sock`.
    pub fn registration_socket(&self) -> PathBuf {
        self.registry_dir.join(format!("{}-reg.sock", self.driver_name))
    }

    fn validate(&self) -> Result<()> {
        check_driver_name(&self.driver_name)?;
        if self.health_refresh.is_zero() || self.watch_interval.is_zero() {
            return Err(Error::Config("health_refresh and watch_interval must be longer than zero".into()));
        }
        if !self.dra_socket().is_absolute() {
            return Err(Error::Config(format!(
                "the plugins directory {} must be absolute: the kubelet dials the socket path as given",
                self.plugins_dir.display()
            )));
        }
        Ok(())
    }
}

/// A driver name is a DNS subdomain of at most 63 characters (the limit of `ResourceSlice.spec.driver`).
fn check_driver_name(name: &str) -> Result<()> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 63 || !name.split('.').all(label_ok) {
        return Err(Error::Config(format!(
            "driver name {name:?} is not a DNS subdomain of at most 63 characters (for example gpu.example.com)"
        )));
    }
    Ok(())
}

/// A running kubelet plugin. Dropping it leaves the servers running until the runtime stops; call
/// [`KubeletPlugin::shutdown`] to stop them and remove the sockets.
#[derive(Debug)]
pub struct KubeletPlugin {
    registration: watch::Receiver<RegistrationState>,
    stop: watch::Sender<bool>,
    supervisor: JoinHandle<()>,
}

impl KubeletPlugin {
    /// Creates the directories, serves the DRA services (v1, v1beta1 and, if the driver reports health, the
    /// health stream), checks that they answer, then serves the registration socket, and keeps both served.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad configuration, [`Error::Io`] when a directory or socket cannot be created,
    /// [`Error::Grpc`] when the DRA server does not answer its own check.
    pub async fn start<D: Driver>(config: PluginConfig, driver: Arc<D>) -> Result<Self> {
        config.validate()?;
        for dir in [config.data_dir(), config.registry_dir.clone()] {
            std::fs::create_dir_all(&dir).map_err(|source| Error::io("creating directory", dir, source))?;
        }
        let (state, registration) = watch::channel(RegistrationState::default());
        let calls = Calls::new(Arc::clone(&driver), config.serialize);
        let info = PluginInfo {
            r#type: DRA_PLUGIN_TYPE.to_owned(),
            name: config.driver_name.clone(),
            endpoint: config.dra_socket().display().to_string(),
            supported_versions: supported_versions(driver.health().is_some()),
        };
        let servers = Servers { config, calls, health: driver.health(), info, state: Arc::new(state) };
        let dra = servers.serve_dra().await?;
        let registrar = servers.serve_registration()?;
        let (stop, stopping) = watch::channel(false);
        let supervisor = tokio::spawn(supervise(servers, dra, registrar, stopping));
        Ok(KubeletPlugin { registration, stop, supervisor })
    }

    /// What the kubelet said about the registration; changes whenever it registers the driver (again).
    pub fn registration(&self) -> watch::Receiver<RegistrationState> {
        self.registration.clone()
    }

    /// Stops serving: removes the registration socket first (the kubelet then deregisters the driver), ends the
    /// health streams, lets running calls finish, and removes the DRA socket.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.supervisor.await;
    }
}

/// Everything needed to (re)start the two servers.
struct Servers<D> {
    config: PluginConfig,
    calls: Arc<Calls<D>>,
    health: Option<watch::Receiver<Vec<crate::driver::DeviceHealth>>>,
    info: PluginInfo,
    state: Arc<watch::Sender<RegistrationState>>,
}

impl<D: Driver> Servers<D> {
    async fn serve_dra(&self) -> Result<Served> {
        let path = self.config.dra_socket();
        let (listener, identity) = bind_fresh(&path)?;
        let (stop, stopping) = watch::channel(false);
        let mut router = Server::builder()
            .add_service(V1Server::new(DraV1(Arc::clone(&self.calls))))
            .add_service(V1beta1Server::new(DraV1beta1(Arc::clone(&self.calls))));
        if let Some(health) = &self.health {
            let service = HealthService {
                health: health.clone(),
                refresh: self.config.health_refresh,
                stopping: stopping.clone(),
            };
            router = router.add_service(DraResourceHealthServer::new(service));
        }
        let served = Served::spawn(router, UnixListenerStream::new(listener), path, identity, stop, stopping);
        if let Err(error) = self.check_dra(&served.path).await {
            served.stop().await;
            return Err(error);
        }
        tracing::info!(socket = %served.path.display(), "serving the DRA services");
        Ok(served)
    }

    /// An empty prepare call through the socket: the kubelet may dial the moment the registration socket exists.
    async fn check_dra(&self, path: &Path) -> Result<()> {
        let timeout = self.config.call_timeout;
        let mut client = DraPluginClient::new(connect(path, timeout).await?);
        client
            .node_prepare_resources(NodePrepareResourcesRequest { claims: Vec::new() })
            .await
            .map_err(|status| Error::grpc("NodePrepareResources (self-check)", path, status))?;
        Ok(())
    }

    fn serve_registration(&self) -> Result<Served> {
        let path = self.config.registration_socket();
        let (listener, identity) = bind_fresh(&path)?;
        let (stop, stopping) = watch::channel(false);
        let service = RegistrationService { info: self.info.clone(), state: Arc::clone(&self.state) };
        let router = Server::builder().add_service(RegistrationServer::new(service));
        // The kubelet's plugin watcher dials this socket with the bare path as gRPC target (k8s.io/kubernetes
        // pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go, dial()), so grpc-go sends the path as
        // :authority, which tonic's h2 refuses with RST_STREAM PROTOCOL_ERROR: the driver would never register.
        // Its DRA dial uses "unix:" + path, whose authority is "localhost", so the DRA socket needs no rewriting.
        let incoming = UnixListenerStream::new(listener).map(|accepted| accepted.map(AuthorityRewriter::new));
        let served = Served::spawn(router, incoming, path, identity, stop, stopping);
        tracing::info!(socket = %served.path.display(), "serving registration");
        Ok(served)
    }
}

async fn supervise<D: Driver>(
    servers: Servers<D>,
    mut dra: Served,
    registrar: Served,
    mut stopping: watch::Receiver<bool>,
) {
    let mut registrar = Some(registrar);
    let mut tick = tokio::time::interval(servers.config.watch_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stopping.wait_for(|stop| *stop) => break,
            _ = tick.tick() => {}
        }
        if !dra.is_intact() {
            tracing::warn!(socket = %dra.path.display(), "DRA socket gone; serving it again");
            match servers.serve_dra().await {
                Ok(fresh) => {
                    std::mem::replace(&mut dra, fresh).stop().await;
                    // A new registration socket makes the kubelet dial the new DRA socket.
                    if let Some(old) = registrar.take() {
                        old.stop().await;
                    }
                }
                Err(error) => {
                    tracing::error!(%error, "cannot serve the DRA socket; retrying");
                    continue;
                }
            }
        }
        if registrar.as_ref().is_none_or(|served| !served.is_intact()) {
            if let Some(old) = registrar.take() {
                tracing::warn!(socket = %old.path.display(), "registration socket gone; serving it again");
                old.stop().await;
            }
            match servers.serve_registration() {
                Ok(fresh) => registrar = Some(fresh),
                Err(error) => tracing::error!(%error, "cannot serve the registration socket; retrying"),
            }
        }
    }
    if let Some(registrar) = registrar {
        registrar.stop().await;
    }
    dra.stop().await;
    tracing::info!(driver = %servers.config.driver_name, "stopped serving the kubelet");
}

/// One server on one socket.
struct Served {
    path: PathBuf,
    identity: FileIdentity,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Served {
    fn spawn<IO>(
        router: Router,
        incoming: impl Stream<Item = std::io::Result<IO>> + Send + 'static,
        path: PathBuf,
        identity: FileIdentity,
        stop: watch::Sender<bool>,
        mut stopping: watch::Receiver<bool>,
    ) -> Self
    where
        IO: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static,
    {
        let socket = path.clone();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopping.wait_for(|stop| *stop).await;
            };
            if let Err(error) = router.serve_with_incoming_shutdown(incoming, shutdown).await {
                tracing::error!(socket = %socket.display(), %error, "gRPC server failed");
            }
        });
        Served { path, identity, stop, task }
    }

    /// Whether our socket file is still in place and the server still runs.
    fn is_intact(&self) -> bool {
        identity(&self.path) == Some(self.identity) && !self.task.is_finished()
    }

    async fn stop(self) {
        if let Err(error) = remove_if_same(&self.path, self.identity) {
            tracing::warn!(%error, "cannot remove socket");
        }
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(STOP_GRACE, &mut task).await.is_err() {
            tracing::warn!(socket = %self.path.display(), "server did not stop in time; aborting it");
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_names_must_be_dns_subdomains() {
        for good in ["gpu.example.com", "npu.huawei.com", "a", "x-1.y"] {
            assert!(check_driver_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Gpu.example.com", "-a.b", "a..b", "a_b", "a/b", &"a".repeat(64)] {
            let error = check_driver_name(bad).expect_err(bad).to_string();
            assert!(error.contains("DNS subdomain"), "{error}");
        }
    }
}
