//! Keeps a node's NPU labels current: reads the chips, compares with the node, patches only what differs.
//!
//! The labels are changed with a JSON merge patch of `metadata.labels` (field manager
//! [`NODE_LABELLER_FIELD_MANAGER`]): a merge patch changes only the keys it lists, so labels set by anyone else are
//! untouched by construction, and a managed key the node should no longer carry is sent as `null`. (Server-side
//! apply would also work, but it would take ownership of the managed keys from whoever set them by hand, and a later
//! `kubectl label` would conflict; the merge patch keeps the behaviour operators had.)
//!
//! [`NodeLabeller::run`] keeps the Node with a watch (`metadata.name=<node>`, [`crate::Watched`]) and reads the chips
//! every [`LabellerConfig::interval`] (default [`DEFAULT_RECONCILE_INTERVAL`]), whenever a [`ReconcileTrigger`]
//! asks, and whenever the Node changes (someone edited a label): the API server sees a request only when a label
//! differs, and the watch. While nothing changes, it costs the API server nothing but the watch. Failures (driver
//! not ready, API server unreachable, missing RBAC) are logged and retried after [`crate::Backoff`]'s wait;
//! they never remove labels. The loop is `ascend_node::ReconcileLoop`, the one every daemon's reconcile uses. [`NodeLabeller::reconcile`] is the one-shot form: it GETs the Node.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_kube::{LabellerConfig, NodeLabeller};
//!
//! # async fn example(manager: Arc<dyn ascend_dcmi::DeviceManager>) -> Result<(), ascend_kube::Error> {
//! let labeller = NodeLabeller::new(manager, ascend_kube::connect().await?, LabellerConfig::new("worker-1"))?;
//! labeller.run(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::deadline::{DriverCalls, Started};
use ascend_dcmi::DeviceManager;
use ascend_node::{Reconcile, ReconcileLoop};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use tokio::sync::Notify;

use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, NODE_LABELLER_FIELD_MANAGER};
use crate::error::{Error, Result};
use crate::node_labels::{LabelPatch, NodeLabels};
use crate::watched::Watched;
use crate::BackoffPolicy;

/// How often the chips are read by default (a local driver read; the API server is asked only on a difference).
pub const DEFAULT_RECONCILE_INTERVAL: Duration = Duration::from_secs(60);
/// How long reading the chips may take by default before a reconcile gives up.
pub const DEFAULT_DRIVER_DEADLINE: Duration = Duration::from_secs(30);

/// What the labeller does and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabellerConfig {
    /// The node to label (the downward API's `spec.nodeName`).
    pub node_name: String,
    /// Time between reads of the chips.
    pub interval: Duration,
    /// How long reading the chips may take.
    pub driver_deadline: Duration,
    /// How long one API request may take.
    pub request_timeout: Duration,
    /// The waits after a failed reconcile.
    pub backoff: BackoffPolicy,
}

impl LabellerConfig {
    /// The defaults for a node.
    pub fn new(node_name: impl Into<String>) -> Self {
        LabellerConfig {
            node_name: node_name.into(),
            interval: DEFAULT_RECONCILE_INTERVAL,
            driver_deadline: DEFAULT_DRIVER_DEADLINE,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            backoff: BackoffPolicy::default(),
        }
    }
}

/// The result of a successful reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// The node already carried the right labels; nothing was patched.
    Unchanged,
    /// These changes were patched.
    Patched(LabelPatch),
}

/// Asks a running [`NodeLabeller::run`] to reconcile now (for example after the plugin saw the chip set change).
/// Requests made while a reconcile runs are folded into one more reconcile.
#[derive(Debug, Clone)]
pub struct ReconcileTrigger(Arc<Notify>);

impl ReconcileTrigger {
    /// Requests a reconcile.
    pub fn request(&self) {
        self.0.notify_one();
    }
}

/// Reconciles the NPU labels of one node.
pub struct NodeLabeller {
    manager: Arc<dyn DeviceManager>,
    nodes: Api<Node>,
    config: LabellerConfig,
    trigger: Arc<Notify>,
    /// The one read of the chips at a time, on a worker thread within the deadline: a read that outlived its
    /// deadline keeps the worker until it returns, and no second read piles up behind it.
    driver: DriverCalls,
}

impl NodeLabeller {
    /// A labeller of `config.node_name` using the driver behind `manager` and the API server behind `client`.
    ///
    /// # Errors
    /// [`Error::InvalidNodeName`] when the node name cannot be an object name.
    pub fn new(manager: Arc<dyn DeviceManager>, client: kube::Client, config: LabellerConfig) -> Result<Self> {
        check_node_name(&config.node_name)?;
        Ok(NodeLabeller {
            manager,
            nodes: Api::all(client),
            driver: DriverCalls::new("node-labeller", 1, config.driver_deadline),
            config,
            trigger: Arc::new(Notify::new()),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LabellerConfig {
        &self.config
    }

    /// A handle that makes [`NodeLabeller::run`] reconcile now.
    pub fn trigger(&self) -> ReconcileTrigger {
        ReconcileTrigger(Arc::clone(&self.trigger))
    }

    /// The labels the node should carry, read from the driver on a blocking thread within the deadline.
    ///
    /// # Errors
    /// [`Error::NoChips`] or [`Error::Dcmi`] from the driver, [`Error::DriverDeadline`], [`Error::DriverBusy`]
    /// while an earlier read is still blocked, [`Error::DriverThread`] if the thread panicked.
    pub async fn desired_labels(&self) -> Result<NodeLabels> {
        desired_labels(Arc::clone(&self.manager), &self.driver).await
    }

    /// What a reconcile would patch now, without patching: the desired labels against the node's.
    ///
    /// # Errors
    /// As [`NodeLabeller::desired_labels`], and [`Error::Api`], [`Error::Transport`] or [`Error::Timeout`] when
    /// the node cannot be read.
    pub async fn plan(&self) -> Result<LabelPatch> {
        let desired = self.desired_labels().await?;
        let node = &self.config.node_name;
        let current =
            request("get", format!("nodes/{node}"), self.config.request_timeout, self.nodes.get(node)).await?;
        Ok(desired.patch_against(&current.metadata.labels.unwrap_or_default()))
    }

    /// Reads the chips and the node and patches the labels that differ; sends no PATCH when none do.
    ///
    /// # Errors
    /// As [`NodeLabeller::plan`], and [`Error::Api`] when the PATCH is refused. The labels are then as they were.
    pub async fn reconcile(&self) -> Result<Reconciled> {
        let patch = self.plan().await?;
        Ok(self.apply(patch).await?.0)
    }

    /// Patches `patch` unless it is empty; returns the patched Node's resourceVersion.
    async fn apply(&self, patch: LabelPatch) -> Result<(Reconciled, Option<String>)> {
        if patch.is_empty() {
            return Ok((Reconciled::Unchanged, None));
        }
        let node = &self.config.node_name;
        let params = PatchParams { field_manager: Some(NODE_LABELLER_FIELD_MANAGER.into()), ..PatchParams::default() };
        let merge = Patch::Merge(patch.to_merge_patch());
        let patched = request(
            "patch",
            format!("nodes/{node}"),
            self.config.request_timeout,
            self.nodes.patch(node, &params, &merge),
        )
        .await?;
        Ok((Reconciled::Patched(patch), patched.metadata.resource_version))
    }

    /// The desired labels against the Node as the watch has it.
    async fn reconcile_watched(&self, watched: &Watched<Node>) -> Result<Reconciled> {
        let desired = self.desired_labels().await?;
        watched.ready(self.config.request_timeout).await?;
        let node = &self.config.node_name;
        let Some(current) = watched.get(None, node) else {
            return Err(Error::Api {
                verb: "watch",
                object: format!("nodes/{node}"),
                code: 404,
                reason: "NotFound".into(),
                message: format!("nodes \"{node}\" not found"),
                retry_after: None,
            });
        };
        let patch = desired.patch_against(current.metadata.labels.as_ref().unwrap_or(&Default::default()));
        let (reconciled, written) = self.apply(patch).await?;
        if written.is_some() {
            // Until the watch delivers the patched Node, its copy is older than the patch: comparing with it would
            // send the same patch again.
            watched.caught_up(None, node, written.as_deref(), self.config.request_timeout).await;
        }
        Ok(reconciled)
    }

    /// Watches the Node and reconciles at once, then after every interval, trigger and change of the Node, until
    /// `shutdown` completes. Errors are logged (with the API's message) and retried after the backoff's wait.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        let node = self.config.node_name.as_str();
        let nodes: Api<Node> = self.nodes.clone();
        let watched = Watched::start(nodes, &format!("metadata.name={node}"), format!("nodes/{node}"));
        ReconcileLoop::new(format!("node labels of {node}"), self.config.backoff)
            .resync_every(self.config.interval)
            .wake_on_notify(Arc::clone(&self.trigger))
            .wake_on_change(watched.changes())
            .run(WatchedRounds { labeller: self, watched: &watched }, shutdown)
            .await;
    }
}

/// The rounds of [`NodeLabeller::run`]: the desired labels against the Node as the watch has it.
struct WatchedRounds<'a> {
    labeller: &'a NodeLabeller,
    watched: &'a Watched<Node>,
}

impl Reconcile for WatchedRounds<'_> {
    type Error = Error;

    async fn reconcile(&mut self) -> Result<Option<Duration>> {
        let node = self.labeller.config.node_name.as_str();
        match self.labeller.reconcile_watched(self.watched).await? {
            Reconciled::Unchanged => tracing::debug!(node, "node labels are current"),
            Reconciled::Patched(patch) => tracing::info!(node, changes = %patch, "node labels updated"),
        }
        Ok(None)
    }
}

/// Reads the labels on the driver's worker within its deadline. DCMI calls cannot be cancelled: while a read that
/// outlived its deadline is still blocked in the driver (a dropped card), later ticks are refused at once.
async fn desired_labels(manager: Arc<dyn DeviceManager>, driver: &DriverCalls) -> Result<NodeLabels> {
    let (sender, answer) = tokio::sync::oneshot::channel();
    let read = move || NodeLabels::read(manager.as_ref());
    match driver.start((), read, move |labels| {
        // The reconcile may have stopped waiting (deadline passed); then nobody wants the labels.
        let _ = sender.send(labels);
    }) {
        Ok(Started::Started) => {}
        Ok(Started::StillBusy) => return Err(Error::DriverBusy),
        Err(error) => return Err(Error::DriverThread(error.to_string())),
    }
    match tokio::time::timeout(driver.deadline(), answer).await {
        Ok(Ok(labels)) => Ok(labels?),
        // The worker dropped the delivery without calling it: the read panicked.
        Ok(Err(_)) => Err(Error::DriverThread("the read of the chips panicked".to_owned())),
        Err(_) => Err(Error::DriverDeadline(driver.deadline())),
    }
}
