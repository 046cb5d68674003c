//! The `Registration` service the kubelet's plugin watcher calls: `GetInfo`, then `NotifyRegistrationStatus`.

use tokio::sync::watch;
use tonic::{Request, Response, Status};

use crate::api::registration::{
    registration_server::Registration, InfoRequest, PluginInfo, RegistrationStatus, RegistrationStatusResponse,
};

/// The plugin type of a DRA driver.
pub const DRA_PLUGIN_TYPE: &str = "DRAPlugin";
/// The registration label of the DRA service `v1`.
pub const DRA_V1: &str = "v1.DRAPlugin";
/// The registration label of the DRA service `v1beta1`.
pub const DRA_V1BETA1: &str = "v1beta1.DRAPlugin";
/// The registration label of the health service (its gRPC service name).
pub const HEALTH_V1ALPHA1: &str = "v1alpha1.DRAResourceHealth";

/// What the kubelet last told the plugin about its registration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistrationState {
    /// How many times the kubelet confirmed a registration: it rises each time a (restarted) kubelet registers the
    /// driver again, which is when a driver republishes its ResourceSlices (a starting kubelet deletes them).
    pub registrations: u64,
    /// Whether the last verdict was a success.
    pub registered: bool,
    /// The kubelet's reason when it refused.
    pub error: Option<String>,
}

pub(crate) struct RegistrationService {
    pub(crate) info: PluginInfo,
    pub(crate) state: std::sync::Arc<watch::Sender<RegistrationState>>,
}

/// The services the plugin offers, most preferred first: the kubelet takes the first one it knows.
pub(crate) fn supported_versions(health: bool) -> Vec<String> {
    let mut versions = vec![DRA_V1.to_owned(), DRA_V1BETA1.to_owned()];
    if health {
        versions.push(HEALTH_V1ALPHA1.to_owned());
    }
    versions
}

#[tonic::async_trait]
impl Registration for RegistrationService {
    async fn get_info(&self, _request: Request<InfoRequest>) -> Result<Response<PluginInfo>, Status> {
        Ok(Response::new(self.info.clone()))
    }

    async fn notify_registration_status(
        &self,
        request: Request<RegistrationStatus>,
    ) -> Result<Response<RegistrationStatusResponse>, Status> {
        let status = request.into_inner();
        if status.plugin_registered {
            tracing::info!(driver = %self.info.name, "registered with the kubelet");
        } else {
            tracing::error!(driver = %self.info.name, error = %status.error, "the kubelet refused the registration");
        }
        self.state.send_modify(|state| {
            state.registered = status.plugin_registered;
            if status.plugin_registered {
                state.registrations += 1;
                state.error = None;
            } else {
                state.error = Some(status.error);
            }
        });
        Ok(Response::new(RegistrationStatusResponse {}))
    }
}
