//! The object store: JSON objects by group, resource, namespace and name, one resourceVersion counter for all of
//! them (as etcd's revision), and the history of changes that watches replay.
//!
//! The store applies the API server's rules that clients rely on: `metadata.uid`, `creationTimestamp`,
//! `resourceVersion` and `generation` are the server's; `generateName` gets a random suffix; a resourceVersion in
//! an update or patch is a precondition (409 when stale); the status subresource splits writes of status from
//! writes of the rest; deleting an object with finalizers only marks it, and it goes when the last finalizer does.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::kinds::{Kind, Kinds};
use crate::patch;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::{ApiError, ApiResult};

/// Where an object is stored: group, resource, namespace (empty for cluster-scoped kinds) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// API group.
    pub group: String,
    /// Resource (plural).
    pub plural: String,
    /// Namespace, empty for cluster-scoped kinds.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
}

impl ChangeType {
    /// The `type` of the watch event.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One change, kept for watches.
#[derive(Debug, Clone)]
pub struct Change {
    /// The revision the change made.
    pub revision: u64,
    /// Which object.
    pub key: ObjectKey,
    /// What happened.
    pub change: ChangeType,
    /// The object after the change (for a deletion: the last state, with the deletion's resourceVersion).
    pub object: Value,
    /// The object before the change.
    pub previous: Option<Value>,
}

/// A patch body with its type, from the `Content-Type` of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/json-patch+json`.
    Json,
    /// `application/apply-patch+yaml` (kube-rs sends JSON, which is YAML).
    Apply,
}

impl PatchType {
    /// The patch type of a content type.
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        Some(match content_type.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => PatchType::Merge,
            "application/strategic-merge-patch+json" => PatchType::Strategic,
            "application/json-patch+json" => PatchType::Json,
            "application/apply-patch+yaml" | "application/apply-patch+json" => PatchType::Apply,
            _ => return None,
        })
    }
}

/// Which objects a list, watch or collection delete covers.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only this namespace (`None`: all).
    pub namespace: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Selection {
    /// Whether an object of this kind is selected.
    pub fn matches(&self, key: &ObjectKey, object: &Value) -> bool {
        self.namespace.as_ref().is_none_or(|namespace| *namespace == key.namespace)
            && self.labels.matches(object)
            && self.fields.matches(object)
    }
}

/// A patch request.
#[derive(Debug, Clone, Copy)]
pub struct PatchRequest<'a> {
    /// The patch type.
    pub patch_type: PatchType,
    /// The body.
    pub body: &'a Value,
    /// `fieldManager` (required for apply).
    pub field_manager: Option<&'a str>,
    /// `force` (apply only).
    pub force: bool,
}

/// The store.
#[derive(Debug)]
pub struct Store {
    kinds: Kinds,
    objects: BTreeMap<ObjectKey, Value>,
    /// The last configuration each manager applied to each object (server-side apply).
    applied: BTreeMap<ObjectKey, BTreeMap<String, Value>>,
    revision: u64,
    history: Vec<Change>,
    /// Watches from a revision before this one get 410 Expired.
    oldest_watchable: u64,
    names_made: u64,
}

impl Store {
    /// An empty store serving these kinds.
    pub fn new(kinds: Kinds) -> Store {
        Store {
            kinds,
            objects: BTreeMap::new(),
            applied: BTreeMap::new(),
            revision: 1,
            history: Vec::new(),
            oldest_watchable: 1,
            names_made: 0,
        }
    }

    /// The served kinds.
    pub fn kinds(&self) -> &Kinds {
        &self.kinds
    }

    /// The current revision (the resourceVersion of a list made now).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Forgets the watch history: a watch from any earlier resourceVersion gets 410 Expired, as after an etcd
    /// compaction.
    pub fn compact(&mut self) {
        self.history.clear();
        self.oldest_watchable = self.revision;
    }

    fn key(kind: &Kind, namespace: Option<&str>, name: &str) -> ObjectKey {
        ObjectKey {
            group: kind.group.clone(),
            plural: kind.plural.clone(),
            namespace: if kind.namespaced { namespace.unwrap_or_default().to_owned() } else { String::new() },
            name: name.to_owned(),
        }
    }

    /// One object.
    ///
    /// # Errors
    /// 404.
    pub fn get(&self, kind: &Kind, namespace: Option<&str>, name: &str) -> ApiResult<Value> {
        self.objects
            .get(&Self::key(kind, namespace, name))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&kind.plural, name))
    }

    /// The selected objects of a kind, in namespace and name order, starting after `continue_after` and at most
    /// `limit` of them; with the continue token when more remain.
    pub fn list(
        &self,
        kind: &Kind,
        selection: &Selection,
        limit: Option<usize>,
        continue_after: Option<&str>,
    ) -> (Vec<Value>, Option<String>) {
        let mut items = Vec::new();
        let mut more = None;
        for (key, object) in self.objects_of(kind) {
            let position = format!("{}/{}", key.namespace, key.name);
            if continue_after.is_some_and(|after| position.as_str() <= after) || !selection.matches(key, object) {
                continue;
            }
            if limit.is_some_and(|limit| items.len() >= limit) {
                more = items.last().map(|_| ());
                break;
            }
            items.push((position, object.clone()));
        }
        let token = more.and_then(|()| items.last().map(|(position, _)| position.clone()));
        (items.into_iter().map(|(_, object)| object).collect(), token)
    }

    fn objects_of<'a>(&'a self, kind: &'a Kind) -> impl Iterator<Item = (&'a ObjectKey, &'a Value)> + 'a {
        self.objects.iter().filter(move |(key, _)| key.group == kind.group && key.plural == kind.plural)
    }

    /// Creates an object (`POST`), naming it from `generateName` when it has no name.
    ///
    /// # Errors
    /// 400 when the body is not an object of this kind or its namespace differs from the path's; 422 without a
    /// name; 409 when the name is taken.
    pub fn create(&mut self, kind: &Kind, namespace: Option<&str>, mut object: Value) -> ApiResult<Value> {
        check_type(kind, &object)?;
        let metadata = metadata_mut(&mut object)?;
        if kind.namespaced {
            let path_namespace = namespace.unwrap_or("default");
            match metadata.get("namespace").and_then(Value::as_str) {
                Some(body) if body != path_namespace => {
                    return Err(ApiError::bad_request(format!(
                        "the namespace of the provided object ({body}) does not match the namespace sent on the request ({path_namespace})"
                    )))
                }
                _ => {
                    metadata.insert("namespace".into(), json!(path_namespace));
                }
            }
        } else {
            metadata.remove("namespace");
        }
        if metadata.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
            let Some(prefix) = metadata.get("generateName").and_then(Value::as_str).map(str::to_owned) else {
                return Err(ApiError::invalid(
                    &kind.plural,
                    "",
                    "metadata.name: Required value: name or generateName is required",
                ));
            };
            self.names_made += 1;
            metadata
                .insert("name".into(), json!(format!("{prefix}{}", random_suffix(self.names_made ^ self.revision))));
        }
        let name = metadata.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let key = Self::key(kind, namespace.or(Some("default")), &name);
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(&kind.plural, &name));
        }
        metadata.insert("uid".into(), json!(uid(self.revision + 1)));
        metadata.insert("creationTimestamp".into(), json!(now()));
        metadata.insert("generation".into(), json!(1));
        metadata.remove("deletionTimestamp");
        set_type(kind, &mut object);
        crate::validation::check(kind, &object)?;
        Ok(self.commit(key, None, object, ChangeType::Added))
    }

    /// Replaces an object (`PUT`), or only its status when `status_only`.
    ///
    /// # Errors
    /// 404, 400 when the body's name differs from the path's, 409 when its resourceVersion is stale.
    pub fn replace(
        &mut self,
        kind: &Kind,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        status_only: bool,
    ) -> ApiResult<Value> {
        check_type(kind, &object)?;
        let key = Self::key(kind, namespace, name);
        let old = self.objects.get(&key).cloned().ok_or_else(|| ApiError::not_found(&kind.plural, name))?;
        if let Some(body_name) = object.pointer("/metadata/name").and_then(Value::as_str) {
            if body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
        }
        check_resource_version(kind, name, &old, &object)?;
        self.update(kind, key, old, object, status_only)
    }

    /// Patches an object (`PATCH`), or only its status when `status_only`. Apply creates a missing object.
    ///
    /// # Errors
    /// 404 (other than apply), 400/422 for a bad patch, 409 for a stale resourceVersion or an apply conflict.
    pub fn patch(
        &mut self,
        kind: &Kind,
        namespace: Option<&str>,
        name: &str,
        request: PatchRequest<'_>,
        status_only: bool,
    ) -> ApiResult<Value> {
        let key = Self::key(kind, namespace, name);
        let Some(old) = self.objects.get(&key).cloned() else {
            if request.patch_type != PatchType::Apply {
                return Err(ApiError::not_found(&kind.plural, name));
            }
            let manager = apply_manager(request)?;
            let mut object = request.body.clone();
            metadata_mut(&mut object)?.insert("name".into(), json!(name));
            let created = self.create(kind, namespace, object)?;
            self.applied.entry(key).or_default().insert(manager.to_owned(), request.body.clone());
            return Ok(created);
        };
        let mut patched = old.clone();
        match request.patch_type {
            PatchType::Merge => patch::merge_patch(&mut patched, request.body),
            PatchType::Strategic => patch::strategic_merge_patch(&mut patched, request.body)?,
            PatchType::Json => patch::json_patch(&mut patched, request.body)?,
            PatchType::Apply => patched = self.apply(&key, &old, request)?,
        }
        if request.patch_type != PatchType::Json {
            check_resource_version(kind, name, &old, request.body)?;
        }
        if let Some(meta) = patched.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), old["metadata"]["resourceVersion"].clone());
        }
        self.update(kind, key, old, patched, status_only)
    }

    /// Server-side apply: fields the manager applied before and no longer names are removed (unless another
    /// manager applied them too), the configuration is merged in, and a field another manager applied with a
    /// different value is a 409 conflict unless `force` takes it over.
    fn apply(&mut self, key: &ObjectKey, old: &Value, request: PatchRequest<'_>) -> ApiResult<Value> {
        let manager = apply_manager(request)?.to_owned();
        let managers = self.applied.entry(key.clone()).or_default();
        let config = request.body;
        let paths = patch::leaf_paths(config);
        let mut conflicts = Vec::new();
        for path in &paths {
            let current = old.pointer(path);
            if path.starts_with("/metadata/resourceVersion") || current.is_none() || current == config.pointer(path) {
                continue;
            }
            for (other, other_config) in managers.iter_mut() {
                if *other != manager && other_config.pointer(path).is_some() {
                    if request.force {
                        patch::remove_path(other_config, path);
                    } else {
                        conflicts.push(format!("conflict with \"{other}\": {path}"));
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            return Err(ApiError {
                code: 409,
                reason: "Conflict",
                message: format!("Apply failed with {} conflict(s): {}", conflicts.len(), conflicts.join(", ")),
            });
        }
        let mut object = old.clone();
        if let Some(previous) = managers.get(&manager) {
            for path in patch::leaf_paths(previous) {
                let kept = paths.contains(&path)
                    || managers.iter().any(|(other, config)| *other != manager && config.pointer(&path).is_some());
                if !kept && !path.starts_with("/metadata/name") && !path.starts_with("/metadata/namespace") {
                    patch::remove_path(&mut object, &path);
                }
            }
        }
        patch::strategic_merge_patch(&mut object, config)?;
        managers.insert(manager, config.clone());
        Ok(object)
    }

    /// The common end of replace and patch: server-owned metadata kept, status split, generation bumped.
    fn update(
        &mut self,
        kind: &Kind,
        key: ObjectKey,
        old: Value,
        mut new: Value,
        status_only: bool,
    ) -> ApiResult<Value> {
        if status_only {
            let status = new.get("status").cloned();
            let written_metadata = status_write_keeps_metadata(kind).then(|| new["metadata"].clone());
            new = old.clone();
            match status {
                Some(status) => new["status"] = status,
                None => {
                    if let Some(fields) = new.as_object_mut() {
                        fields.remove("status");
                    }
                }
            }
            if let Some(written) = written_metadata {
                for field in ["labels", "annotations"] {
                    match written.get(field) {
                        Some(value) => new["metadata"][field] = value.clone(),
                        None => {
                            if let Some(metadata) = new["metadata"].as_object_mut() {
                                metadata.remove(field);
                            }
                        }
                    }
                }
            }
        } else if kind.status_subresource {
            match old.get("status") {
                Some(status) => new["status"] = status.clone(),
                None => {
                    if let Some(fields) = new.as_object_mut() {
                        fields.remove("status");
                    }
                }
            }
        }
        let metadata = metadata_mut(&mut new)?;
        for field in ["uid", "creationTimestamp", "name", "namespace", "deletionTimestamp", "generation"] {
            match old["metadata"].get(field) {
                Some(value) => metadata.insert(field.into(), value.clone()),
                None => metadata.remove(field),
            };
        }
        let spec_changed = strip_for_generation(&old) != strip_for_generation(&new);
        if spec_changed {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            new["metadata"]["generation"] = json!(generation);
        }
        set_type(kind, &mut new);
        crate::validation::check(kind, &new)?;
        let finalized = new.pointer("/metadata/deletionTimestamp").is_some()
            && new.pointer("/metadata/finalizers").and_then(Value::as_array).is_none_or(Vec::is_empty);
        if finalized {
            return Ok(self.remove(key, old));
        }
        Ok(self.commit(key, Some(old), new, ChangeType::Modified))
    }

    /// Deletes an object (`DELETE`); one with finalizers is only marked with `deletionTimestamp`.
    ///
    /// # Errors
    /// 404, or 409 when a `preconditions` uid or resourceVersion of the DeleteOptions does not hold.
    pub fn delete(&mut self, kind: &Kind, namespace: Option<&str>, name: &str, options: &Value) -> ApiResult<Value> {
        let key = Self::key(kind, namespace, name);
        let old = self.objects.get(&key).cloned().ok_or_else(|| ApiError::not_found(&kind.plural, name))?;
        for field in ["uid", "resourceVersion"] {
            if let Some(wanted) = options.pointer(&format!("/preconditions/{field}")).and_then(Value::as_str) {
                if old["metadata"][field].as_str() != Some(wanted) {
                    let why = format!(
                        "Precondition failed: {field} in precondition: {wanted}, {field} in object meta: {}",
                        old["metadata"][field].as_str().unwrap_or_default()
                    );
                    return Err(ApiError::conflict(&kind.plural, name, &why));
                }
            }
        }
        let has_finalizers =
            old.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(|list| !list.is_empty());
        if has_finalizers {
            if old.pointer("/metadata/deletionTimestamp").is_some() {
                return Ok(old);
            }
            let mut marked = old.clone();
            marked["metadata"]["deletionTimestamp"] = json!(now());
            return Ok(self.commit(key, Some(old), marked, ChangeType::Modified));
        }
        Ok(self.remove(key, old))
    }

    /// Deletes every selected object of a kind (`DELETE` on the collection); returns what was deleted.
    pub fn delete_collection(&mut self, kind: &Kind, selection: &Selection) -> Vec<Value> {
        let keys: Vec<(ObjectKey, String)> = self
            .objects_of(kind)
            .filter(|(key, object)| selection.matches(key, object))
            .map(|(key, _)| (key.clone(), key.name.clone()))
            .collect();
        let namespace = |key: &ObjectKey| (!key.namespace.is_empty()).then(|| key.namespace.clone());
        keys.into_iter()
            .filter_map(|(key, name)| self.delete(kind, namespace(&key).as_deref(), &name, &Value::Null).ok())
            .collect()
    }

    fn remove(&mut self, key: ObjectKey, old: Value) -> Value {
        self.objects.remove(&key);
        self.applied.remove(&key);
        self.revision += 1;
        let mut last = old.clone();
        last["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        self.history.push(Change {
            revision: self.revision,
            key,
            change: ChangeType::Deleted,
            object: last.clone(),
            previous: Some(old),
        });
        last
    }

    fn commit(&mut self, key: ObjectKey, old: Option<Value>, mut object: Value, change: ChangeType) -> Value {
        self.revision += 1;
        object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        self.objects.insert(key.clone(), object.clone());
        self.history.push(Change { revision: self.revision, key, change, object: object.clone(), previous: old });
        object
    }

    /// The changes to a kind after `revision`, oldest first.
    ///
    /// # Errors
    /// 410 Expired when `revision` is older than the history kept.
    pub fn changes_since(&self, kind: &Kind, revision: u64) -> ApiResult<Vec<Change>> {
        if revision + 1 < self.oldest_watchable {
            return Err(ApiError::expired(revision, self.oldest_watchable));
        }
        Ok(self
            .history
            .iter()
            .filter(|change| {
                change.revision > revision && change.key.group == kind.group && change.key.plural == kind.plural
            })
            .cloned()
            .collect())
    }

    /// Stores an object as is, bypassing the API's rules except the server's metadata (for seeding tests);
    /// replaces any object of the same name.
    ///
    /// # Errors
    /// 400 when the object's apiVersion and kind are not served, or it has no name.
    pub fn seed(&mut self, mut object: Value) -> ApiResult<Value> {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let kind_name = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let kind = self
            .kinds
            .by_kind(api_version, kind_name)
            .cloned()
            .ok_or_else(|| ApiError::bad_request(format!("the fake does not serve {api_version} {kind_name}")))?;
        let metadata = metadata_mut(&mut object)?;
        let name = metadata.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        if name.is_empty() {
            return Err(ApiError::bad_request("a seeded object needs metadata.name"));
        }
        let namespace = metadata.get("namespace").and_then(Value::as_str).map(str::to_owned);
        if kind.namespaced && namespace.is_none() {
            metadata.insert("namespace".into(), json!("default"));
        }
        metadata.entry("uid").or_insert_with(|| json!(uid(self.revision + 1)));
        metadata.entry("creationTimestamp").or_insert_with(|| json!(now()));
        metadata.entry("generation").or_insert(json!(1));
        let key = Self::key(&kind, namespace.as_deref().or(Some("default")), &name);
        let old = self.objects.get(&key).cloned();
        let change = if old.is_some() { ChangeType::Modified } else { ChangeType::Added };
        Ok(self.commit(key, old, object, change))
    }

    /// Every stored object, for inspection.
    pub fn all(&self) -> impl Iterator<Item = (&ObjectKey, &Value)> {
        self.objects.iter()
    }
}

fn apply_manager<'a>(request: PatchRequest<'a>) -> ApiResult<&'a str> {
    request.field_manager.filter(|manager| !manager.is_empty()).ok_or_else(|| {
        ApiError::bad_request(
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        )
    })
}

fn check_type(kind: &Kind, object: &Value) -> ApiResult<()> {
    if !object.is_object() {
        return Err(ApiError::bad_request(format!("the body is not a {} object", kind.kind)));
    }
    let field = |name: &str| object.get(name).and_then(Value::as_str);
    if let Some(api_version) = field("apiVersion") {
        if api_version != kind.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                kind.api_version()
            )));
        }
    }
    if let Some(found) = field("kind") {
        if found != kind.kind {
            return Err(ApiError::bad_request(format!("the kind in the data ({found}) is not {}", kind.kind)));
        }
    }
    Ok(())
}

fn check_resource_version(kind: &Kind, name: &str, old: &Value, body: &Value) -> ApiResult<()> {
    let wanted = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).filter(|rv| !rv.is_empty());
    match wanted {
        Some(wanted) if Some(wanted) != old.pointer("/metadata/resourceVersion").and_then(Value::as_str) => {
            Err(ApiError::conflict(
                &kind.plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ))
        }
        _ => Ok(()),
    }
}

fn metadata_mut(object: &mut Value) -> ApiResult<&mut Map<String, Value>> {
    let fields = object.as_object_mut().ok_or_else(|| ApiError::bad_request("the body is not a JSON object"))?;
    let metadata = fields.entry("metadata").or_insert_with(|| json!({}));
    metadata.as_object_mut().ok_or_else(|| ApiError::bad_request("metadata is not an object"))
}

fn set_type(kind: &Kind, object: &mut Value) {
    object["apiVersion"] = json!(kind.api_version());
    object["kind"] = json!(kind.kind);
}

/// Whether a write to the kind's status subresource also takes the labels and annotations it carries. kube-apiserver's
/// Node status strategy resets only the spec (k8s.io/kubernetes `pkg/registry/core/node/strategy.go`,
/// `nodeStatusStrategy.PrepareForUpdate`), and clients rely on it: the kubelet sets a Node's labels through
/// `nodes/status` (`pkg/kubelet/kubelet_node_status.go`, `registerWithAPIServer` -> `nodeutil.PatchNodeStatus`), and so
/// does Huawei's device plugin (mind-cluster `component/ascend-device-plugin/pkg/kubeclient/kubeclient.go`,
/// `PatchNodeState`). Newer kinds reset the metadata too (`ResetObjectMetaForStatus`).
fn status_write_keeps_metadata(kind: &Kind) -> bool {
    kind.group.is_empty() && kind.plural == "nodes"
}

/// The object without metadata and status: what `generation` counts changes of.
fn strip_for_generation(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(fields) = copy.as_object_mut() {
        fields.remove("metadata");
        fields.remove("status");
    }
    copy
}

fn now() -> String {
    let now = k8s_openapi::jiff::Timestamp::now();
    k8s_openapi::jiff::Timestamp::from_second(now.as_second())
        .map_or_else(|_| now.to_string(), |second| second.to_string())
}

fn uid(seed: u64) -> String {
    let mixed = splitmix(seed);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        mixed >> 32,
        (mixed >> 16) & 0xffff,
        mixed & 0xfff,
        seed & 0xfff,
        seed
    )
}

/// Five characters from the alphabet kube-apiserver uses for `generateName` (no vowels, no confusable digits).
fn random_suffix(seed: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut value = splitmix(seed.wrapping_add(0x9e37_79b9));
    (0..5)
        .map(|_| {
            let index = (value % ALPHABET.len() as u64) as usize;
            value /= ALPHABET.len() as u64;
            char::from(ALPHABET[index])
        })
        .collect()
}

fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
