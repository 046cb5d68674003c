//! A fake Kubernetes API server for tests: real HTTP/JSON on 127.0.0.1, reached by real kube-rs clients.
//!
//! There is no kube-apiserver on the machines this project is built and tested on, and mocking kube-rs's `Client`
//! would test our code against our own idea of the protocol. This server speaks the protocol itself, the way
//! controller-runtime's envtest runs a real one: the URL space of the core and named groups, JSON objects with
//! server-owned metadata (uid, resourceVersion, generation, creationTimestamp), `generateName`, get, list (label and
//! field selectors, `limit`/`continue`), create, replace, delete (preconditions, finalizers, collections), the four
//! patch types as kube-rs sends them (merge, strategic merge, JSON patch, server-side apply with field managers and
//! conflicts), the status subresource, watch from a resourceVersion (with bookmarks, `sendInitialEvents` and 410
//! after [`FakeApiServer::compact`]: all that kube-runtime's watcher needs), and `Status` errors (404, 409, 422).
//!
//! It is generic over kinds: objects are JSON stored by group, resource, namespace and name, so a new kind is one
//! row ([`Kind`], [`Builder::kind`]). The standard table ([`Kinds::standard`]) has Nodes, Pods, ConfigMaps,
//! Namespaces, Events (core and events.k8s.io/v1), node.k8s.io/v1 RuntimeClasses and resource.k8s.io/v1
//! ResourceSlices, ResourceClaims and DeviceClasses.
//!
//! For the failure paths it can answer an error status or stop answering ([`FaultRule`]), and stop listening and
//! come back on the same port ([`FakeApiServer::stop_listening`], [`FakeApiServer::resume_listening`]); it can
//! throttle as kube-apiserver does (429 with `Retry-After`: [`FaultRule::too_many_requests`],
//! [`FaultRule::rejected_by_flow_control`]). Every request is recorded ([`FakeApiServer::requests`]) and tallied by
//! verb, resource and user agent ([`FakeApiServer::request_counts`]), as the API server's `apiserver_request_total`
//! counts them: what tests of a daemon's cost to the API server assert on.
//!
//! Not modelled: authentication and RBAC (every request is allowed; the `Authorization` header is recorded),
//! admission and validation beyond the API machinery's own rules, defaulting, the field ownership of non-apply
//! writes, and protobuf.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = fake_apiserver::FakeApiServer::start().await?;
//! let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "kube-system");
//! let mut map = ConfigMap::default();
//! map.metadata.name = Some("settings".into());
//! config_maps.create(&PostParams::default(), &map).await?;
//! let stored: ConfigMap = server.get(Some("kube-system"), "settings").expect("created");
//! assert!(stored.metadata.resource_version.is_some());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod faults;
mod kinds;
pub mod patch;
mod record;
pub mod selector;
mod server;
mod status;
pub mod store;
pub mod validation;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper_util::rt::TokioIo;
use kube::Resource;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::task::AbortHandle;

pub use faults::{FaultAction, FaultRule};
pub use kinds::{Kind, Kinds};
pub use record::{RecordedRequest, RequestKey};
pub use status::ApiError;

use server::{lock, Shared};
use store::Store;

/// Which kinds the server serves; [`Builder::start`] starts it.
#[derive(Debug, Clone)]
pub struct Builder {
    kinds: Kinds,
}

impl Builder {
    /// Serves one more kind (or replaces the row of one with the same group, version and resource).
    pub fn kind(mut self, kind: Kind) -> Builder {
        self.kinds.add(kind);
        self
    }

    /// Serves no kind of `group/version`, as an API server of a release without it (`resource.k8s.io`, `v1` for
    /// one before Kubernetes 1.34); its group leaves discovery when no version of it is left.
    pub fn without_group_version(mut self, group: &str, version: &str) -> Builder {
        self.kinds.remove_group_version(group, version);
        self
    }

    /// Starts serving on a free port of 127.0.0.1. Needs a Tokio runtime.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start(self) -> std::io::Result<FakeApiServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let server = FakeApiServer {
            shared: Arc::new(Shared::new(Store::new(self.kinds))),
            address,
            tasks: Arc::new(Mutex::new(Vec::new())),
        };
        server.serve(listener);
        Ok(server)
    }
}

/// A running fake API server. Stops serving when dropped.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    address: SocketAddr,
    /// The accept loop and every connection, so that [`FakeApiServer::stop_listening`] can cut them all.
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer").field("address", &self.address).finish_non_exhaustive()
    }
}

impl FakeApiServer {
    /// Starts a server with the standard kinds on a free port of 127.0.0.1.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start() -> std::io::Result<FakeApiServer> {
        FakeApiServer::builder().start().await
    }

    /// A builder, for more kinds.
    pub fn builder() -> Builder {
        Builder { kinds: Kinds::standard() }
    }

    fn serve(&self, listener: tokio::net::TcpListener) {
        let shared = Arc::clone(&self.shared);
        let tasks = Arc::clone(&self.tasks);
        let accepting = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = Arc::clone(&shared);
                let connection = tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request| server::handle(Arc::clone(&shared), request));
                    // A client that goes away mid-request is not the server's error.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                let mut tasks = lock(&tasks);
                tasks.retain(|task| !task.is_finished());
                tasks.push(connection.abort_handle());
            }
        });
        lock(&self.tasks).push(accepting.abort_handle());
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Its URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// A kube-rs configuration for this server: its URL, default namespace `default`, no credentials.
    pub fn config(&self) -> kube::Config {
        let url = self.url().parse().unwrap_or_else(|error| panic!("{} is a URL: {error}", self.url()));
        kube::Config::new(url)
    }

    /// A kube-rs client of this server. Needs a Tokio runtime.
    ///
    /// # Panics
    /// If kube-rs cannot build a client for a plain `http://` URL (it always can).
    pub fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config())
            .unwrap_or_else(|error| panic!("a kube client for {}: {error}", self.url()))
    }

    /// Stores an object directly (not through HTTP), replacing one of the same name; returns it as stored. Its
    /// `apiVersion` and `kind` choose where it goes; a namespaced object without a namespace goes to `default`.
    ///
    /// # Panics
    /// If the object is not JSON of a served kind with a name.
    pub fn seed(&self, object: impl Serialize) -> Value {
        let value = serde_json::to_value(object).unwrap_or_else(|error| panic!("the seeded object is JSON: {error}"));
        self.shared.write(|store| store.seed(value)).unwrap_or_else(|error| panic!("seeding: {}", error.message))
    }

    /// A typed copy of a stored object, if there is one.
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let store = lock(&self.shared.store);
        let kind = store.kinds().by_resource(&K::group(&()), &K::version(&()), &K::plural(&()))?.clone();
        let object = store.get(&kind, namespace, name).ok()?;
        drop(store);
        Some(
            serde_json::from_value(object)
                .unwrap_or_else(|error| panic!("stored {} {name} decodes: {error}", K::kind(&()))),
        )
    }

    /// Typed copies of every stored object of a kind, in namespace and name order.
    pub fn list<K>(&self) -> Vec<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let store = lock(&self.shared.store);
        let Some(kind) = store.kinds().by_resource(&K::group(&()), &K::version(&()), &K::plural(&())).cloned() else {
            return Vec::new();
        };
        let (items, _) = store.list(&kind, &store::Selection::default(), None, None);
        drop(store);
        items
            .into_iter()
            .map(|item| {
                serde_json::from_value(item)
                    .unwrap_or_else(|error| panic!("a stored {} decodes: {error}", K::kind(&())))
            })
            .collect()
    }

    /// The raw JSON of a stored object.
    pub fn get_json(&self, api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        let store = lock(&self.shared.store);
        let kind = store.kinds().by_kind(api_version, kind)?.clone();
        store.get(&kind, namespace, name).ok()
    }

    /// The store's current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        lock(&self.shared.store).revision()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The requests received so far, counted by verb, resource and user agent.
    pub fn request_counts(&self) -> std::collections::BTreeMap<RequestKey, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for request in lock(&self.shared.requests).iter() {
            *counts.entry(request.key()).or_insert(0) += 1;
        }
        counts
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// Adds a failure rule; rules are tried in the order added.
    pub fn inject(&self, rule: FaultRule) {
        lock(&self.shared.faults).add(rule);
    }

    /// Removes every failure rule; requests held by [`FaultRule::hang`] are then served.
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
        self.shared.fault_epoch.send_modify(|epoch| *epoch += 1);
    }

    /// Forgets the watch history, as an etcd compaction does: watches from an older resourceVersion get 410
    /// Expired and must list again.
    pub fn compact(&self) {
        self.shared.write(Store::compact);
    }

    /// Stops listening and drops every open connection (watches included): clients then see the API server as
    /// unreachable. The stored objects are kept.
    pub fn stop_listening(&self) {
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }

    /// Listens again on the same address after [`FakeApiServer::stop_listening`].
    ///
    /// # Errors
    /// When the port cannot be bound again.
    pub async fn resume_listening(&self) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(self.address).await?;
        self.serve(listener);
        Ok(())
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.stop_listening();
    }
}
