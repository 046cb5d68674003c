//! Objects a daemon keeps current with a watch, never by polling: kube-runtime's watcher feeding a reflector store.
//!
//! A node's daemon asks the API server about its own node only (a field selector: `spec.nodeName=<node>` for pods,
//! `metadata.name=<name>` for one object), so a watch costs the server one LIST when it starts, one open WATCH, and
//! an event per change of those objects; while nothing changes it costs nothing but re-opening the watch when its
//! server-side timeout ends it (kube-runtime asks for 290 s). That replaces a LIST or GET every few seconds, which a
//! fleet multiplies by its node count.
//!
//! The watcher re-lists after a 410 Gone (history compacted) and retries failed requests with kube-runtime's default
//! backoff: exponential with jitter, 800 ms to 30 s, as client-go's informers do. The store starts empty and is
//! [`Watched::is_ready`] after the first complete list; readers that need the server's view wait for it
//! ([`Watched::ready`]). Every event bumps a counter readers can wait on ([`Watched::changes`]).

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::Resource;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::error::{Error, Result};

/// A live, read-only copy of the objects one watch selects. Clones share the watch; it stops when the last clone is
/// dropped.
pub struct Watched<K>
where
    K: Resource<DynamicType = ()> + 'static,
{
    store: Store<K>,
    changes: watch::Receiver<u64>,
    ready: Arc<AtomicBool>,
    what: Arc<str>,
    _task: Arc<AbortOnDrop>,
}

impl<K> Clone for Watched<K>
where
    K: Resource<DynamicType = ()> + 'static,
{
    fn clone(&self) -> Self {
        Watched {
            store: self.store.clone(),
            changes: self.changes.clone(),
            ready: Arc::clone(&self.ready),
            what: Arc::clone(&self.what),
            _task: Arc::clone(&self._task),
        }
    }
}

impl<K> Debug for Watched<K>
where
    K: Resource<DynamicType = ()> + 'static,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("what", &self.what)
            .field("ready", &self.ready.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<K> Watched<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    /// Starts watching what `api` and `fields` (a field selector, `spec.nodeName=worker-1`) select, on the current
    /// Tokio runtime; `what` names it in logs (`pods on worker-1`).
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn start(api: Api<K>, fields: &str, what: impl Into<String>) -> Self {
        let what: Arc<str> = what.into().into();
        let (store, writer) = reflector::store();
        let (bump, changes) = watch::channel(0u64);
        let config = watcher::Config::default().fields(fields);
        let events = watcher(api, config).default_backoff().reflect(writer);
        let name = Arc::clone(&what);
        let ready = Arc::new(AtomicBool::new(false));
        let listed = Arc::clone(&ready);
        let task = tokio::spawn(async move {
            futures_util::pin_mut!(events);
            while let Some(event) = events.next().await {
                match event {
                    Ok(watcher::Event::Init | watcher::Event::InitApply(_)) => {}
                    Ok(event) => {
                        if matches!(event, watcher::Event::InitDone) {
                            listed.store(true, Ordering::Release);
                        }
                        bump.send_modify(|count| *count += 1);
                    }
                    // The backoff paces the next attempt; the store keeps its last view meanwhile.
                    Err(error) => tracing::warn!(watch = %name, %error, "watch failed; retrying with backoff"),
                }
            }
        });
        Watched { store, changes, ready, what, _task: Arc::new(AbortOnDrop(task.abort_handle())) }
    }

    /// Whether the first complete list arrived.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Waits for the first complete list, at most `timeout`.
    ///
    /// # Errors
    /// [`Error::Timeout`] (verb `watch`) when the API server did not answer the first list in time.
    pub async fn ready(&self, timeout: Duration) -> Result<()> {
        if self.is_ready() {
            return Ok(());
        }
        match tokio::time::timeout(timeout, self.store.wait_until_ready()).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(Error::Timeout { verb: "watch", object: self.what.to_string(), timeout }),
        }
    }

    /// Every object the watch holds now.
    pub fn objects(&self) -> Vec<Arc<K>> {
        self.store.state()
    }

    /// One object by name (and namespace, for namespaced kinds).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let mut reference = ObjectRef::new(name);
        if let Some(namespace) = namespace {
            reference = reference.within(namespace);
        }
        self.store.get(&reference)
    }

    /// Waits, at most `timeout`, until the watch holds the object at `resource_version` (the answer of this
    /// process's own write) or later: until then its copy is older than the write, and a writer comparing with it
    /// would write the same again. Returns whether it caught up.
    ///
    /// "Or later" matters: when someone else writes the object just after us, the watch may apply both events
    /// before this reader looks, and it never sees our version itself. Later is decided as Kubernetes defines it
    /// for resource versions of one kind (decimal integers, compared by value: KEP-5504 "Comparable Resource
    /// Version", stable in 1.35); a server whose versions are not such integers is waited for by equality only.
    pub async fn caught_up(
        &self,
        namespace: Option<&str>,
        name: &str,
        resource_version: Option<&str>,
        timeout: Duration,
    ) -> bool {
        let Some(wanted) = resource_version else { return false };
        let mut changes = self.changes();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            changes.borrow_and_update();
            let held = self.get(namespace, name);
            if let Some(held) = held.as_ref().and_then(|object| object.meta().resource_version.clone()) {
                if at_or_after(&held, wanted) {
                    return true;
                }
            }
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                return false;
            }
        }
    }

    /// A counter bumped after every change the watch applied (after the first list too); `changed()` on it wakes
    /// a waiting reader.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }
}

/// Whether resource version `held` is `wanted` or a later one. Versions are compared as KEP-5504 defines them:
/// decimal integers without leading zeros, longer is later, equal lengths compare digit by digit (no parse, so no
/// overflow). Anything else compares by equality only.
pub(crate) fn at_or_after(held: &str, wanted: &str) -> bool {
    let comparable = |version: &str| {
        !version.is_empty() && version.bytes().all(|byte| byte.is_ascii_digit()) && !version.starts_with('0')
    };
    if held == wanted {
        return true;
    }
    if !comparable(held) || !comparable(wanted) {
        return false;
    }
    (held.len(), held) > (wanted.len(), wanted)
}

#[cfg(test)]
mod tests {
    use super::at_or_after;

    #[test]
    fn later_resource_versions_compare_by_value_and_opaque_ones_by_equality() {
        assert!(at_or_after("41", "41"));
        assert!(at_or_after("42", "41"));
        assert!(at_or_after("100", "99"), "longer is later, whatever the first digit");
        assert!(!at_or_after("99", "100"));
        assert!(!at_or_after("41", "42"));
        assert!(at_or_after("184467440737095516160", "18446744073709551615"), "past u64 without overflow");
        assert!(!at_or_after("opaque-b", "opaque-a"), "not integers: equality only");
        assert!(at_or_after("opaque-a", "opaque-a"));
        assert!(!at_or_after("042", "41"), "a leading zero is not a comparable version");
        assert!(!at_or_after("", "41"));
    }
}
