//! What a DRA driver implements ([`Driver`]) and the plain types it exchanges with the kubelet layer.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

/// A claim as the kubelet names it: it never sends the allocation, so a driver reads the `ResourceClaim` from the
/// API server (and must check that its UID is still `uid`: a claim deleted and recreated under the same name is a
/// different claim).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClaimRef {
    /// Namespace of the `ResourceClaim`.
    pub namespace: String,
    /// Name of the `ResourceClaim`.
    pub name: String,
    /// UID of the `ResourceClaim` (the key of every answer).
    pub uid: String,
}

impl fmt::Display for ClaimRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} (uid {})", self.namespace, self.name, self.uid)
    }
}

/// One device a claim got, as the kubelet hands it to the container runtime.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedDevice {
    /// The claim's requests this device serves (a subrequest `req/sub` is reported as `req`); empty = all.
    pub request_names: Vec<String>,
    /// The ResourceSlice pool the device was published in.
    pub pool: String,
    /// The device's name in that pool.
    pub device: String,
    /// Fully qualified CDI device ids (`vendor/class=name`) the runtime injects into the claim's containers.
    pub cdi_device_ids: Vec<String>,
    /// The share of a device allocated with consumable capacity (sent to kubelets 1.35 and newer over `v1` only).
    pub share_id: Option<String>,
}

/// Why one claim could not be prepared or unprepared. It reaches the kubelet (and the pod's events) as text, so
/// its message names the claim's problem; the other claims of the same call are unaffected.
///
/// Any error type converts into it with `?`; like `anyhow::Error` it is therefore not an `Error` itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimError(String);

impl ClaimError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ClaimError(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for ClaimError {
    fn from(error: E) -> Self {
        // The whole chain: the kubelet shows only this string.
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        ClaimError(message)
    }
}

/// A device's health as the driver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthStatus {
    /// The driver cannot tell (the kubelet also assumes this for a device not reported within its timeout).
    Unknown,
    /// Usable.
    Healthy,
    /// Faulty.
    Unhealthy,
}

/// One device's entry on the health stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceHealth {
    /// The ResourceSlice pool of the device.
    pub pool: String,
    /// The device's name in the pool.
    pub device: String,
    /// Its health.
    pub status: HealthStatus,
    /// Why, for people (shown by kubelets 1.36 and newer; cut to 1024 characters).
    pub message: String,
    /// How long the kubelet may trust this entry without a refresh (`None` = the kubelet's default, 30 s).
    pub timeout: Option<Duration>,
}

/// A DRA driver's node-side logic. The kubelet layer ([`crate::KubeletPlugin`]) calls it for every claim of every
/// request and turns the results into the kubelet's messages, so that each claim gets exactly one answer whatever
/// the driver does.
///
/// Both calls must be idempotent: the kubelet repeats a call whose answer it did not get, and calls
/// [`Driver::unprepare`] for claims it thinks prepared after a driver restart, maybe for claims that no longer
/// exist in the API server. A driver therefore records what it prepared in its own checkpoint.
///
/// Write the methods as `async fn`; the future must be `Send` (it runs on the gRPC server's tasks).
pub trait Driver: Send + Sync + 'static {
    /// Prepares the devices allocated to `claim` on this node and says how the runtime gets them.
    ///
    /// # Errors
    /// A [`ClaimError`] saying what is wrong with this claim; the kubelet retries later.
    fn prepare(&self, claim: &ClaimRef) -> impl Future<Output = Result<Vec<PreparedDevice>, ClaimError>> + Send;

    /// Undoes [`Driver::prepare`]; a claim never prepared (or already unprepared) is a success.
    ///
    /// # Errors
    /// A [`ClaimError`] when cleaning up failed; the kubelet retries later.
    fn unprepare(&self, claim: &ClaimRef) -> impl Future<Output = Result<(), ClaimError>> + Send;

    /// The driver's current device health, if it reports any: each value is the complete list. When `Some`, the
    /// layer serves the `v1alpha1.DRAResourceHealth` stream, sending the list on every change and at least every
    /// [`crate::PluginConfig::health_refresh`].
    fn health(&self) -> Option<watch::Receiver<Vec<DeviceHealth>>> {
        None
    }
}
