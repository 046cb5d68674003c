//! Registration with the kubelet (the `Registration` service on `kubelet.sock`).

use std::path::Path;
use std::time::Duration;

use crate::api::v1beta1::registration_client::RegistrationClient;
use crate::api::v1beta1::RegisterRequest;
use crate::error::{grpc_error, Result};
use crate::service::PLUGIN_OPTIONS;
use kubelet_socket::connect;

/// The device plugin API version this crate speaks.
pub const API_VERSION: &str = "v1beta1";

pub use ascend_node::{DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};

/// Registers `resource`, served on `socket` (a file name inside `plugin_dir`), with the kubelet.
///
/// The plugin must already be serving: the kubelet calls back into it before answering.
///
/// # Errors
/// [`crate::Error::Grpc`] when the kubelet socket cannot be reached in `timeout` or the kubelet rejects the
/// registration (for example because another plugin owns the resource).
pub async fn register(plugin_dir: &Path, resource: &str, socket: &str, timeout: Duration) -> Result<()> {
    let kubelet = plugin_dir.join(KUBELET_SOCKET);
    let channel = connect(&kubelet, timeout).await?;
    let request = RegisterRequest {
        version: API_VERSION.to_owned(),
        endpoint: socket.to_owned(),
        resource_name: resource.to_owned(),
        options: Some(PLUGIN_OPTIONS),
    };
    RegistrationClient::new(channel)
        .register(request)
        .await
        .map_err(|status| grpc_error(format!("Register {resource}"), &kubelet, status.to_string()))?;
    Ok(())
}
