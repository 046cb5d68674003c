//! What the fake saw: every request, for tests that check what a client sent.

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
}
