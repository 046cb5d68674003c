//! The kinds the fake serves: where each lives in the URL space, and how the API server treats it.
//!
//! The server is generic over kinds: objects are JSON values stored by group, resource, namespace and name, so a
//! kind is only a row of this table. [`Kinds::standard`] has the kinds this project talks to; a test that needs
//! another one adds it with [`crate::Builder::kind`] instead of editing the server.

/// One kind of object, as the API server's discovery would describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// API group; empty for the core group (`/api/v1`).
    pub group: String,
    /// Version within the group, for example `v1`.
    pub version: String,
    /// The resource name in URLs (lower-case plural), for example `resourceslices`.
    pub plural: String,
    /// The kind name in objects, for example `ResourceSlice`.
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether the kind has a `status` subresource: then writes to the object keep its status, and writes to
    /// `<object>/status` change only the status (the API server's rule for Nodes, Pods, ResourceClaims ...).
    pub status_subresource: bool,
}

impl Kind {
    /// A namespaced kind without a status subresource.
    pub fn namespaced(group: &str, version: &str, plural: &str, kind: &str) -> Kind {
        Kind {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            kind: kind.to_owned(),
            namespaced: true,
            status_subresource: false,
        }
    }

    /// A cluster-scoped kind without a status subresource.
    pub fn cluster(group: &str, version: &str, plural: &str, kind: &str) -> Kind {
        Kind { namespaced: false, ..Kind::namespaced(group, version, plural, kind) }
    }

    /// The same kind with a `status` subresource.
    pub fn with_status(self) -> Kind {
        Kind { status_subresource: true, ..self }
    }

    /// `group/version`, or `version` for the core group: the `apiVersion` of its objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// The table of served kinds.
#[derive(Debug, Clone, Default)]
pub struct Kinds(Vec<Kind>);

impl Kinds {
    /// Nodes, Pods, ConfigMaps, Namespaces, Events (core and events.k8s.io/v1), and the DRA kinds of
    /// resource.k8s.io/v1 (ResourceSlices, ResourceClaims, DeviceClasses).
    pub fn standard() -> Kinds {
        Kinds(vec![
            Kind::cluster("", "v1", "nodes", "Node").with_status(),
            Kind::cluster("", "v1", "namespaces", "Namespace").with_status(),
            Kind::namespaced("", "v1", "pods", "Pod").with_status(),
            Kind::namespaced("", "v1", "configmaps", "ConfigMap"),
            Kind::namespaced("", "v1", "events", "Event"),
            Kind::namespaced("events.k8s.io", "v1", "events", "Event"),
            Kind::cluster("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass"),
            Kind::cluster("resource.k8s.io", "v1", "resourceslices", "ResourceSlice"),
            Kind::namespaced("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim").with_status(),
            Kind::cluster("resource.k8s.io", "v1", "deviceclasses", "DeviceClass"),
        ])
    }

    /// Adds a kind, replacing one with the same group, version and plural.
    pub fn add(&mut self, kind: Kind) {
        self.0.retain(|known| {
            (&known.group, &known.version, &known.plural) != (&kind.group, &kind.version, &kind.plural)
        });
        self.0.push(kind);
    }

    /// Stops serving every kind of `group/version` (a cluster of an older release).
    pub fn remove_group_version(&mut self, group: &str, version: &str) {
        self.0.retain(|known| (known.group.as_str(), known.version.as_str()) != (group, version));
    }

    /// The kind served at `group/version/plural`.
    pub fn by_resource(&self, group: &str, version: &str, plural: &str) -> Option<&Kind> {
        self.0.iter().find(|kind| kind.group == group && kind.version == version && kind.plural == plural)
    }

    /// The kind of an object with this `apiVersion` and `kind`.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<&Kind> {
        self.0.iter().find(|known| known.api_version() == api_version && known.kind == kind)
    }

    /// Every kind of a group version (for discovery).
    pub fn in_group_version<'a>(&'a self, group: &'a str, version: &'a str) -> impl Iterator<Item = &'a Kind> + 'a {
        self.0.iter().filter(move |kind| kind.group == group && kind.version == version)
    }

    /// Every kind.
    pub fn iter(&self) -> impl Iterator<Item = &Kind> {
        self.0.iter()
    }
}
