//! The HTTP side: routes kube-apiserver's URL space to the store, streams watches, applies injected failures.
//!
//! Paths: `/api/v1/...` (core group) and `/apis/<group>/<version>/...`, then `[namespaces/<ns>/]<resource>` for a
//! collection and `.../<name>[/status]` for an object; `/version` and the discovery documents (`/api`, `/apis`,
//! `/api/v1`, `/apis/<group>/<version>`). HTTP/1.1 only, which is what kube-rs speaks to an `http://` URL.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{header, Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};

use crate::faults::{Fault, FaultAction, Faults};
use crate::kinds::Kind;
use crate::record::RecordedRequest;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{ApiError, ApiResult};
use crate::store::{Change, ChangeType, PatchRequest, PatchType, Selection, Store};

/// The largest request body read (an object is at most 1.5 MiB in etcd; a little more for patches).
const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The response body: whole JSON documents, or a watch stream.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// State shared by every connection and the test's handle.
pub(crate) struct Shared {
    pub(crate) store: Mutex<Store>,
    /// The store's revision after each change, so that watches wake up.
    pub(crate) revision: watch::Sender<u64>,
    pub(crate) faults: Mutex<Faults>,
    /// Bumped when the fault rules are cleared, so that held requests go on.
    pub(crate) fault_epoch: watch::Sender<u64>,
    pub(crate) requests: Mutex<Vec<RecordedRequest>>,
}

/// Locks a mutex; a test that panicked while holding it leaves consistent data (every change is one assignment).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    pub(crate) fn new(store: Store) -> Shared {
        let revision = store.revision();
        Shared {
            store: Mutex::new(store),
            revision: watch::Sender::new(revision),
            faults: Mutex::new(Faults::default()),
            fault_epoch: watch::Sender::new(0),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Runs a store operation and wakes the watches.
    pub(crate) fn write<T>(&self, operation: impl FnOnce(&mut Store) -> T) -> T {
        let mut store = lock(&self.store);
        let result = operation(&mut store);
        let revision = store.revision();
        drop(store);
        self.revision.send_replace(revision);
        result
    }
}

/// Serves one request.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = request.into_parts();
    let header_text =
        |name: header::HeaderName| parts.headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let bytes = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => return Ok(error_response(&ApiError::bad_request(format!("reading the body: {error}")))),
    };
    let query: Vec<(String, String)> = form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query,
        content_type: header_text(header::CONTENT_TYPE),
        authorization: header_text(header::AUTHORIZATION),
        user_agent: header_text(header::USER_AGENT),
        body: serde_json::from_slice(&bytes).ok(),
        received: std::time::Instant::now(),
    };
    tracing::debug!(method = %recorded.method, path = %recorded.path, "fake API server request");
    lock(&shared.requests).push(recorded.clone());

    let fault = lock(&shared.faults).take(&recorded.method, &recorded.path);
    match fault {
        Some(Fault { action: FaultAction::Status(code, message), retry_after, text_body }) => {
            let mut error = ApiError::injected(code);
            if let Some(message) = message {
                error.message = message.to_owned();
            }
            return Ok(injected_response(&error, retry_after, text_body));
        }
        Some(Fault { action: FaultAction::Hang, .. }) => {
            let mut epoch = shared.fault_epoch.subscribe();
            // Held until the rules are cleared; a closed channel means the server is gone.
            if epoch.changed().await.is_err() {
                return Ok(error_response(&ApiError::injected(503)));
            }
        }
        None => {}
    }
    if recorded.body.is_none() && !bytes.is_empty() {
        return Ok(error_response(&ApiError::bad_request("the body is not JSON")));
    }
    Ok(route(&shared, &parts.method, &recorded).unwrap_or_else(|error| error_response(&error)))
}

/// What a path names.
enum Target {
    Collection { kind: Kind, namespace: Option<String> },
    Object { kind: Kind, namespace: Option<String>, name: String, status: bool },
}

fn route(shared: &Arc<Shared>, method: &Method, request: &RecordedRequest) -> ApiResult<Response<Body>> {
    let segments: Vec<&str> = request.path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    if let Some(document) = discovery(shared, &segments) {
        return if method == Method::GET {
            Ok(json_response(StatusCode::OK, &document))
        } else {
            Err(ApiError::method_not_allowed(method.as_str(), &request.path))
        };
    }
    let target = parse_target(shared, &segments).ok_or_else(|| ApiError::no_route(&request.path))?;
    let body = request.body.clone().unwrap_or(Value::Null);
    match (method, target) {
        (&Method::GET, Target::Collection { kind, namespace }) if request.is_watch() => {
            watch(shared, kind, namespace, request)
        }
        (&Method::GET, Target::Collection { kind, namespace }) => list(shared, &kind, namespace, request),
        (&Method::POST, Target::Collection { kind, namespace }) => {
            let created = shared.write(|store| store.create(&kind, namespace.as_deref(), body))?;
            Ok(json_response(StatusCode::CREATED, &created))
        }
        (&Method::DELETE, Target::Collection { kind, namespace }) => {
            let selection = selection(namespace, request)?;
            let deleted = shared.write(|store| store.delete_collection(&kind, &selection));
            Ok(json_response(StatusCode::OK, &list_document(&kind, deleted, shared_revision(shared), None)))
        }
        (&Method::GET, Target::Object { kind, namespace, name, .. }) => {
            Ok(json_response(StatusCode::OK, &lock(&shared.store).get(&kind, namespace.as_deref(), &name)?))
        }
        (&Method::PUT, Target::Object { kind, namespace, name, status }) => {
            let replaced = shared.write(|store| store.replace(&kind, namespace.as_deref(), &name, body, status))?;
            Ok(json_response(StatusCode::OK, &replaced))
        }
        (&Method::PATCH, Target::Object { kind, namespace, name, status }) => {
            let content_type = request.content_type.clone().unwrap_or_default();
            let patch_type = PatchType::from_content_type(&content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(&content_type))?;
            let patch = PatchRequest {
                patch_type,
                body: &body,
                field_manager: request.query_value("fieldManager"),
                force: request.query_value("force") == Some("true"),
            };
            let (existed, patched) = shared.write(|store| {
                let existed = store.get(&kind, namespace.as_deref(), &name).is_ok();
                (existed, store.patch(&kind, namespace.as_deref(), &name, patch, status))
            });
            let code = if existed { StatusCode::OK } else { StatusCode::CREATED };
            Ok(json_response(code, &patched?))
        }
        (&Method::DELETE, Target::Object { kind, namespace, name, status: false }) => {
            let deleted = shared.write(|store| store.delete(&kind, namespace.as_deref(), &name, &body))?;
            Ok(json_response(StatusCode::OK, &deleted))
        }
        _ => Err(ApiError::method_not_allowed(method.as_str(), &request.path)),
    }
}

fn shared_revision(shared: &Shared) -> u64 {
    lock(&shared.store).revision()
}

fn parse_target(shared: &Shared, segments: &[&str]) -> Option<Target> {
    let (group, version, rest) = match segments {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, plural, rest @ ..] if !matches!(*plural, "status" | "finalize") => {
            (Some((*namespace).to_owned()), std::iter::once(plural).chain(rest).copied().collect::<Vec<_>>())
        }
        _ => (None, rest.to_vec()),
    };
    let kind = lock(&shared.store).kinds().by_resource(group, version, rest.first()?)?.clone();
    if !kind.namespaced && namespace.is_some() {
        return None;
    }
    match rest[1..] {
        [] => Some(Target::Collection { kind, namespace }),
        [name] if !kind.namespaced || namespace.is_some() => {
            Some(Target::Object { kind, namespace, name: name.to_owned(), status: false })
        }
        [name, "status"] if !kind.namespaced || namespace.is_some() => {
            Some(Target::Object { kind, namespace, name: name.to_owned(), status: true })
        }
        _ => None,
    }
}

fn selection(namespace: Option<String>, request: &RecordedRequest) -> ApiResult<Selection> {
    Ok(Selection {
        namespace,
        labels: LabelSelector::parse(request.query_value("labelSelector").unwrap_or_default())?,
        fields: FieldSelector::parse(request.query_value("fieldSelector").unwrap_or_default())?,
    })
}

fn list(
    shared: &Shared,
    kind: &Kind,
    namespace: Option<String>,
    request: &RecordedRequest,
) -> ApiResult<Response<Body>> {
    let selection = selection(namespace, request)?;
    let limit = request.query_value("limit").and_then(|limit| limit.parse().ok()).filter(|limit| *limit > 0);
    let store = lock(&shared.store);
    let (items, token) = store.list(kind, &selection, limit, request.query_value("continue"));
    Ok(json_response(StatusCode::OK, &list_document(kind, items, store.revision(), token)))
}

fn list_document(kind: &Kind, items: Vec<Value>, revision: u64, token: Option<String>) -> Value {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if let Some(token) = token {
        metadata["continue"] = json!(token);
    }
    json!({"kind": format!("{}List", kind.kind), "apiVersion": kind.api_version(), "metadata": metadata, "items": items})
}

/// A watch: the changes after `resourceVersion` (or, without one, the current objects as ADDED first), then every
/// change as it happens, as newline-delimited JSON events, until `timeoutSeconds` or the client goes away.
fn watch(
    shared: &Arc<Shared>,
    kind: Kind,
    namespace: Option<String>,
    request: &RecordedRequest,
) -> ApiResult<Response<Body>> {
    let selection = selection(namespace, request)?;
    let bookmarks = request.query_value("allowWatchBookmarks") == Some("true");
    let initial_events = request.query_value("sendInitialEvents") == Some("true");
    let timeout = request
        .query_value("timeoutSeconds")
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let requested = request.query_value("resourceVersion").filter(|rv| !rv.is_empty() && *rv != "0");
    let (sender, receiver) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(256);
    let mut revisions = shared.revision.subscribe();
    let (mut last, opening) = {
        let store = lock(&shared.store);
        match requested {
            Some(text) if !initial_events => {
                let revision: u64 =
                    text.parse().map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {text:?}")))?;
                match store.changes_since(&kind, revision) {
                    Ok(_) => (revision, Vec::new()),
                    Err(expired) => (u64::MAX, vec![json!({"type": "ERROR", "object": expired.to_status()})]),
                }
            }
            _ => {
                let (items, _) = store.list(&kind, &selection, None, None);
                let mut events: Vec<Value> =
                    items.into_iter().map(|object| json!({"type": "ADDED", "object": object})).collect();
                if initial_events {
                    events.push(bookmark(&kind, store.revision(), true));
                }
                (store.revision(), events)
            }
        }
    };
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let send = |event: Value| {
            let sender = sender.clone();
            async move {
                let mut line = event.to_string();
                line.push('\n');
                sender.send(Ok(Frame::data(Bytes::from(line)))).await.is_ok()
            }
        };
        for event in opening {
            if !send(event).await {
                return;
            }
        }
        if last == u64::MAX {
            return;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changes = lock(&shared.store).changes_since(&kind, last);
            let changes = match changes {
                Ok(changes) => changes,
                Err(expired) => {
                    send(json!({"type": "ERROR", "object": expired.to_status()})).await;
                    return;
                }
            };
            for change in changes {
                last = change.revision;
                if let Some(event) = visible_event(&selection, &change) {
                    if !send(event).await {
                        return;
                    }
                }
            }
            tokio::select! {
                changed = revisions.changed() => if changed.is_err() { return },
                () = tokio::time::sleep_until(deadline) => {
                    if bookmarks {
                        send(bookmark(&kind, last, false)).await;
                    }
                    return;
                }
                () = sender.closed() => return,
            }
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(receiver);
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    Ok(response)
}

/// The event a watcher with this selection sees for a change: an object that starts matching is ADDED, one that
/// stops matching is DELETED, as kube-apiserver reports them.
fn visible_event(selection: &Selection, change: &Change) -> Option<Value> {
    let now = selection.matches(&change.key, &change.object);
    let before = change.previous.as_ref().is_some_and(|previous| selection.matches(&change.key, previous));
    let kind = match change.change {
        ChangeType::Added if now => ChangeType::Added,
        ChangeType::Deleted if before || now => ChangeType::Deleted,
        ChangeType::Modified if now && before => ChangeType::Modified,
        ChangeType::Modified if now => ChangeType::Added,
        ChangeType::Modified if before => ChangeType::Deleted,
        _ => return None,
    };
    Some(json!({"type": kind.as_str(), "object": change.object}))
}

fn bookmark(kind: &Kind, revision: u64, initial_events_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"type": "BOOKMARK", "object": {"kind": kind.kind, "apiVersion": kind.api_version(), "metadata": metadata}})
}

/// `/version` and the discovery documents, built from the kind table.
fn discovery(shared: &Shared, segments: &[&str]) -> Option<Value> {
    let store = lock(&shared.store);
    let kinds = store.kinds();
    let resources = |group: &str, version: &str| -> Vec<Value> {
        kinds
            .in_group_version(group, version)
            .flat_map(|kind| {
                let verbs = json!(["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]);
                let main = json!({"name": kind.plural, "singularName": kind.kind.to_lowercase(), "namespaced": kind.namespaced, "kind": kind.kind, "verbs": verbs});
                let status = kind.status_subresource.then(|| json!({"name": format!("{}/status", kind.plural), "singularName": "", "namespaced": kind.namespaced, "kind": kind.kind, "verbs": ["get", "patch", "update"]}));
                std::iter::once(main).chain(status)
            })
            .collect()
    };
    match segments {
        ["version"] => {
            Some(json!({"major": "1", "minor": "34", "gitVersion": "v1.34.0-fake", "platform": "linux/amd64"}))
        }
        ["api"] => Some(json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})),
        ["apis"] => {
            // One entry per group, its versions in kube-apiserver's priority order, the first preferred.
            let mut by_group: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
            for kind in kinds.iter().filter(|kind| !kind.group.is_empty()) {
                let versions = by_group.entry(kind.group.as_str()).or_default();
                if !versions.contains(&kind.version.as_str()) {
                    versions.push(kind.version.as_str());
                }
            }
            let groups: Vec<Value> = by_group
                .into_iter()
                .map(|(group, mut versions)| {
                    versions.sort_by_key(|version| std::cmp::Reverse(version_priority(version)));
                    let listed: Vec<Value> = versions
                        .iter()
                        .map(|version| json!({"groupVersion": format!("{group}/{version}"), "version": version}))
                        .collect();
                    json!({"name": group, "preferredVersion": listed[0].clone(), "versions": listed})
                })
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["api", version] => {
            Some(json!({"kind": "APIResourceList", "groupVersion": version, "resources": resources("", version)}))
        }
        ["apis", group, version] => {
            let found = resources(group, version);
            (!found.is_empty()).then(|| json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/{version}"), "resources": found}))
        }
        _ => None,
    }
}

/// Kubernetes' order of API versions: GA before beta before alpha, then the higher number (`v1` > `v1beta2` >
/// `v1beta1` > `v1alpha3`); a name outside the scheme sorts last.
fn version_priority(version: &str) -> (u8, u32, u32) {
    let Some(rest) = version.strip_prefix('v') else { return (0, 0, 0) };
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let Ok(major) = rest[..digits].parse() else { return (0, 0, 0) };
    let (stability, minor) = match &rest[digits..] {
        "" => (3, 0),
        tail => {
            match tail.strip_prefix("beta").map(|n| (2, n)).or_else(|| tail.strip_prefix("alpha").map(|n| (1, n))) {
                Some((stability, number)) => match number.parse() {
                    Ok(minor) => (stability, minor),
                    Err(_) => return (0, 0, 0),
                },
                None => return (0, 0, 0),
            }
        }
    };
    (stability, major, minor)
}

fn json_response(status: StatusCode, document: &Value) -> Response<Body> {
    let mut response = Response::new(BodyExt::boxed(Full::new(Bytes::from(document.to_string()))));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

/// An injected failure: a Status (with `details.retryAfterSeconds` when throttled) or, as API Priority and Fairness
/// answers, plain text; `Retry-After` in the header either way.
fn injected_response(error: &ApiError, retry_after: Option<u32>, text_body: bool) -> Response<Body> {
    let mut response = if text_body {
        let mut response =
            Response::new(BodyExt::boxed(Full::new(Bytes::from("Too many requests, please try again later.\n"))));
        *response.status_mut() = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
        response
    } else {
        let mut status = error.to_status();
        if let Some(seconds) = retry_after {
            status["details"] = json!({"retryAfterSeconds": seconds});
        }
        json_response(StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &status)
    };
    if let Some(seconds) = retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    }
    response
}

fn error_response(error: &ApiError) -> Response<Body> {
    json_response(StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &error.to_status())
}
