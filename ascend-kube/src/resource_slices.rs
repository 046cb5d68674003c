//! A node-local DRA resource pool, published as `resource.k8s.io/v1` ResourceSlices.
//!
//! A DRA driver describes what one node offers as a pool named after the node. [`PoolPublisher`] owns the API
//! side of that: it names the slices (`<node>-<driver with dots as dashes>-<index>`, stable so that a restarted
//! driver updates them in place), makes the Node their owner (they go when the Node does), numbers the pool's
//! generation (the scheduler uses only the newest generation of a pool, so every publication raises it, also
//! across driver restarts), writes the slices by server-side apply under [`DRA_DRIVER_FIELD_MANAGER`], and deletes
//! the driver's slices of this node that are no longer wanted. It lists the node's slices before its first
//! publication and after a failed one; otherwise it knows what it published, so a change costs one apply per slice
//! and nothing more. What goes into the slices (devices, shared
//! counters, and how they are packed within the API's limits) is the driver's business: [`SliceContent`].
//!
//! Others may remove what it wrote: a restarting kubelet deletes its node's slices, possibly after the driver
//! published them again, and a person may edit or delete one. [`PoolPublisher::watch`] watches the node's slices of
//! the driver, and [`PoolPublisher::divergence`] says when one of the last publication is gone or was rewritten by
//! someone else, so that the driver publishes again instead of leaving its pool empty until its next change.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::resource::v1::{CounterSet, Device, ResourcePool, ResourceSlice, ResourceSliceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::Api;

use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DRA_DRIVER_FIELD_MANAGER};
use crate::error::Result;
use crate::watched::{at_or_after, Watched};

/// How long a slice just created may stay out of the watch before it counts as deleted: the watch shows a write within
/// milliseconds, but a create and a delete that both arrive before the reader looks leave no trace of the slice.
const UNSEEN_GRACE: Duration = Duration::from_secs(5);

/// The Ascend DRA driver's name (`ascend-dra`'s default; Huawei's own DRA driver uses it too, so DeviceClasses carry
/// over): what its slices' `spec.driver` and its claims' allocation results say.
pub const ASCEND_DRA_DRIVER_NAME: &str = "npu.huawei.com";
/// The device taint key of a faulty chip in the Ascend DRA driver's slices; its value is the fault level (for example
/// `SeparateNPU`). Defined here, beside the slices, so that the driver writing it and the tools reading it share it.
pub const UNHEALTHY_TAINT_KEY: &str = "npu.huawei.com/unhealthy";

/// The label on the slices naming their node, for people and tools (`kubectl get resourceslices -l ...`); the
/// publisher itself selects its slices by the `spec.nodeName` and `spec.driver` fields.
pub const NODE_LABEL: &str = "resource.ascend.huawei.com/node";

/// What one ResourceSlice holds: devices, and the shared counters they consume (which must be in the same slice).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SliceContent {
    /// The slice's devices.
    pub devices: Vec<Device>,
    /// The counter sets the devices consume; empty without partitionable devices.
    pub shared_counters: Vec<CounterSet>,
}

/// Publishes one node's pool of one driver.
#[derive(Debug, Clone)]
pub struct PoolPublisher {
    api: Api<ResourceSlice>,
    driver: String,
    node_name: String,
    node_uid: String,
    generation: Option<i64>,
    /// The names of the node's slices of this driver as the last successful publication left them; `None` before
    /// it and after a failure, when the API server is asked.
    published: Option<BTreeSet<String>>,
    /// What the API server answered to each write of the last successful publication, by slice name.
    written: BTreeMap<String, Written>,
    timeout: Duration,
}

/// One slice as this publisher last wrote it.
#[derive(Debug, Clone)]
struct Written {
    /// The server's resource version of the write.
    resource_version: Option<String>,
    /// The spec as the server stored it (with its defaults), what a later version is compared with.
    spec: ResourceSliceSpec,
    /// When it was written.
    at: Instant,
    /// The watch has held the slice (at any version) since the write, or the driver knew it before (then its absence
    /// is a deletion).
    seen: bool,
}

impl PoolPublisher {
    /// A publisher for `driver` on `node_name`; reads the Node for the owner reference of the slices.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`], or the errors of reading the Node (a 404 says to check `NODE_NAME`).
    pub async fn for_node(client: kube::Client, node_name: &str, driver: &str) -> Result<PoolPublisher> {
        check_node_name(node_name)?;
        let nodes: Api<Node> = Api::all(client.clone());
        let node = request("get", format!("nodes/{node_name}"), DEFAULT_REQUEST_TIMEOUT, nodes.get(node_name)).await?;
        Ok(PoolPublisher {
            api: Api::all(client),
            driver: driver.to_owned(),
            node_name: node_name.to_owned(),
            node_uid: node.metadata.uid.unwrap_or_default(),
            generation: None,
            published: None,
            written: BTreeMap::new(),
            timeout: DEFAULT_REQUEST_TIMEOUT,
        })
    }

    /// The generation of the last successful publication.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    /// The name of the slice at `index`.
    pub fn slice_name(&self, index: usize) -> String {
        format!("{}-{}-{index}", self.node_name, self.driver.replace('.', "-"))
    }

    /// Publishes `contents` as the pool's complete content under a new generation, and deletes this driver's
    /// other slices of the node; returns the slices written. An empty `contents` publishes one empty slice, so
    /// that the scheduler learns that the pool is empty.
    ///
    /// # Errors
    /// The error of the first request that failed, naming the slice; the caller retries (a retry publishes under
    /// a newer generation, which is what the scheduler expects after a partial write).
    pub async fn publish(&mut self, mut contents: Vec<SliceContent>) -> Result<Vec<ResourceSlice>> {
        if contents.is_empty() {
            contents.push(SliceContent::default());
        }
        let result = self.write_generation(contents).await;
        if result.is_err() {
            // Whatever the failed publication left is known again only from the API server.
            self.published = None;
        }
        result
    }

    /// Starts watching the node's slices of this driver (what [`PoolPublisher::publish`] writes), on the current
    /// Tokio runtime: one LIST and one open WATCH, then an event per change. Hand it to
    /// [`PoolPublisher::divergence`] after each of its changes.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn watch(&self) -> Watched<ResourceSlice> {
        let what = format!("resourceslices of {} on {}", self.driver, self.node_name);
        Watched::start(self.api.clone(), &self.field_selector(), what)
    }

    /// Why the slices `watched` holds no longer match the last successful publication, or `None` when they do (or
    /// the watch has not listed yet, or nothing was published): a slice of it was deleted, or someone else rewrote
    /// its spec. A slice the watch has not shown since it was created counts as deleted once five seconds have
    /// passed; [`PoolPublisher::next_check`] says when to ask again for that.
    pub fn divergence(&mut self, watched: &Watched<ResourceSlice>) -> Option<String> {
        if !watched.is_ready() {
            return None;
        }
        let now = Instant::now();
        for (name, written) in &mut self.written {
            let Some(held) = watched.get(None, name) else {
                if written.seen || now.duration_since(written.at) >= UNSEEN_GRACE {
                    return Some(format!("ResourceSlice {name} was deleted"));
                }
                continue;
            };
            // Known to the watch (at this publication's version, an older or a later one): from now on its absence
            // is a deletion.
            written.seen = true;
            let (Some(held_version), Some(ours)) =
                (held.metadata.resource_version.as_deref(), &written.resource_version)
            else {
                continue;
            };
            // A later version with another spec is someone else's write; an older one is the watch not there yet.
            if held_version != ours && at_or_after(held_version, ours) && held.spec != written.spec {
                return Some(format!("ResourceSlice {name} was changed by someone else"));
            }
        }
        None
    }

    /// When [`PoolPublisher::divergence`] should be asked again although the watch showed nothing: when a slice just
    /// created and not yet shown by the watch would count as deleted. `None` when every slice has been seen.
    pub fn next_check(&self) -> Option<Instant> {
        self.written.values().filter(|written| !written.seen).map(|written| written.at + UNSEEN_GRACE).min()
    }

    fn field_selector(&self) -> String {
        format!("spec.nodeName={},spec.driver={}", self.node_name, self.driver)
    }

    /// The slices of this driver on the node and the highest generation among them: as remembered, or listed.
    async fn existing(&self) -> Result<(BTreeSet<String>, i64)> {
        if let (Some(names), Some(generation)) = (&self.published, self.generation) {
            return Ok((names.clone(), generation));
        }
        let selector = self.field_selector();
        let listed = request(
            "list",
            format!("resourceslices?fieldSelector={selector}"),
            self.timeout,
            self.api.list(&ListParams::default().fields(&selector)),
        )
        .await?;
        // A restarted driver continues above whatever generation it (or a predecessor) wrote.
        let published = listed.items.iter().map(|slice| slice.spec.pool.generation).max().unwrap_or(0);
        let names = listed.items.into_iter().filter_map(|slice| slice.metadata.name).collect();
        Ok((names, self.generation.unwrap_or(0).max(published)))
    }

    async fn write_generation(&mut self, contents: Vec<SliceContent>) -> Result<Vec<ResourceSlice>> {
        let (existing, published) = self.existing().await?;
        let generation = published + 1;
        let count = i64::try_from(contents.len()).unwrap_or(i64::MAX);
        let wanted: Vec<ResourceSlice> = contents
            .into_iter()
            .enumerate()
            .map(|(index, content)| self.slice(index, content, generation, count))
            .collect();
        let params = PatchParams::apply(DRA_DRIVER_FIELD_MANAGER).force();
        let mut written = BTreeMap::new();
        for slice in &wanted {
            let name = slice.metadata.name.clone().unwrap_or_default();
            let object = format!("resourceslices/{name}");
            let stored =
                request("apply", object, self.timeout, self.api.patch(&name, &params, &Patch::Apply(slice))).await?;
            // A slice that existed before this write is known to the watch: its absence later is a deletion.
            let seen = existing.contains(&name);
            let record = Written {
                resource_version: stored.metadata.resource_version,
                spec: stored.spec,
                at: Instant::now(),
                seen,
            };
            written.insert(name, record);
        }
        let wanted_names: BTreeSet<String> = wanted.iter().filter_map(|slice| slice.metadata.name.clone()).collect();
        for name in existing.difference(&wanted_names) {
            let deleted = request(
                "delete",
                format!("resourceslices/{name}"),
                self.timeout,
                self.api.delete(name, &DeleteParams::default()),
            )
            .await;
            match deleted {
                Err(error) if !error.is_not_found() => return Err(error),
                _ => {}
            }
        }
        self.published = Some(wanted_names);
        self.written = written;
        self.generation = Some(generation);
        Ok(wanted)
    }

    fn slice(&self, index: usize, content: SliceContent, generation: i64, count: i64) -> ResourceSlice {
        ResourceSlice {
            metadata: ObjectMeta {
                name: Some(self.slice_name(index)),
                labels: Some(BTreeMap::from([(NODE_LABEL.to_owned(), self.node_name.clone())])),
                owner_references: (!self.node_uid.is_empty()).then(|| {
                    vec![OwnerReference {
                        api_version: "v1".into(),
                        kind: "Node".into(),
                        name: self.node_name.clone(),
                        uid: self.node_uid.clone(),
                        ..OwnerReference::default()
                    }]
                }),
                ..ObjectMeta::default()
            },
            spec: ResourceSliceSpec {
                driver: self.driver.clone(),
                node_name: Some(self.node_name.clone()),
                pool: ResourcePool { name: self.node_name.clone(), generation, resource_slice_count: count },
                devices: Some(content.devices),
                shared_counters: (!content.shared_counters.is_empty()).then_some(content.shared_counters),
                ..ResourceSliceSpec::default()
            },
        }
    }
}
