//! What the fake saw: every request, for tests that check what a client sent, and its tally by verb, resource and
//! user agent (the dimensions of kube-apiserver's `apiserver_request_total`), for tests that count what a daemon costs
//! the API server.

use serde_json::Value;

/// One request as received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    pub method: String,
    /// The path, for example `/api/v1/nodes/worker-1`.
    pub path: String,
    /// The decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
    /// The body, when it was JSON.
    pub body: Option<Value>,
    /// When it arrived (for tests of how long a client waits between attempts).
    pub received: std::time::Instant,
}

impl RecordedRequest {
    /// The value of a query parameter.
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// Whether this was a watch (`?watch=true`).
    pub fn is_watch(&self) -> bool {
        matches!(self.query_value("watch"), Some("true" | "1"))
    }

    /// The Kubernetes verb, as the API server's metrics and audit log name it: `get`, `list`, `watch`, `create`,
    /// `update`, `patch`, `delete`, `deletecollection` (discovery documents and `/version` are `get`).
    pub fn verb(&self) -> &'static str {
        let named = self.target().is_some_and(|target| target.name);
        match (self.method.as_str(), named) {
            ("GET", _) if self.is_watch() => "watch",
            ("GET", false) if self.target().is_some() => "list",
            ("GET", _) => "get",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            _ => "unknown",
        }
    }

    /// The resource, with its subresource (`pods`, `configmaps`, `nodes/status`); empty for discovery and
    /// `/version`.
    pub fn resource(&self) -> String {
        self.target().map(|target| target.resource).unwrap_or_default()
    }

    /// The tally key of this request.
    pub fn key(&self) -> RequestKey {
        RequestKey {
            verb: self.verb().to_owned(),
            resource: self.resource(),
            user_agent: self.user_agent.clone().unwrap_or_default(),
        }
    }

    /// The resource a path names, and whether it names one object: `/api/v1/[namespaces/<ns>/]<resource>[/<name>
    /// [/<subresource>]]`, `/apis/<group>/<version>/...` alike; `/api/v1/namespaces/<name>` is a Namespace.
    fn target(&self) -> Option<Target> {
        let segments: Vec<&str> = self.path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
        let rest = match segments.as_slice() {
            ["api", _version, rest @ ..] => rest,
            ["apis", _group, _version, rest @ ..] => rest,
            _ => return None,
        };
        let rest = match rest {
            ["namespaces", _namespace, inner @ ..] if !inner.is_empty() => inner,
            _ => rest,
        };
        match rest {
            [] => None,
            [resource] => Some(Target { resource: (*resource).to_owned(), name: false }),
            [resource, _name] => Some(Target { resource: (*resource).to_owned(), name: true }),
            [resource, _name, subresource, ..] => {
                Some(Target { resource: format!("{resource}/{subresource}"), name: true })
            }
        }
    }
}

struct Target {
    resource: String,
    name: bool,
}

/// What requests are counted by: verb, resource (with subresource) and the client's `User-Agent` (empty when it
/// sent none).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestKey {
    /// [`RecordedRequest::verb`].
    pub verb: String,
    /// [`RecordedRequest::resource`].
    pub resource: String,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl std::fmt::Display for RequestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.verb, self.resource, self.user_agent)
    }
}
