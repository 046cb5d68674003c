//! Failures as the API server reports them: an HTTP status with a `Status` object whose `reason` and `message`
//! match what kube-apiserver sends, so clients map them as they would in a cluster (kube-rs's `Error::Api`).

use serde_json::{json, Value};

/// A failed request: HTTP code, the `reason` of the Status object, and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code (404, 409, 422 ...).
    pub code: u16,
    /// `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `BadRequest`, `MethodNotAllowed`, `Expired`,
    /// `InternalError`, `UnsupportedMediaType` ...
    pub reason: &'static str,
    /// The human-readable message.
    pub message: String,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { code, reason, message: message.into() }
    }

    /// 404 for a named object, in kube-apiserver's words: `nodes "worker-1" not found`.
    pub fn not_found(plural: &str, name: &str) -> ApiError {
        ApiError::new(404, "NotFound", format!("{plural} \"{name}\" not found"))
    }

    /// 404 for a path the server does not serve.
    pub fn no_route(path: &str) -> ApiError {
        ApiError::new(404, "NotFound", format!("the server could not find the requested resource ({path})"))
    }

    /// 409 on create of an existing name.
    pub fn already_exists(plural: &str, name: &str) -> ApiError {
        ApiError::new(409, "AlreadyExists", format!("{plural} \"{name}\" already exists"))
    }

    /// 409 when a resourceVersion or UID precondition does not hold.
    pub fn conflict(plural: &str, name: &str, why: &str) -> ApiError {
        ApiError::new(409, "Conflict", format!("Operation cannot be fulfilled on {plural} \"{name}\": {why}"))
    }

    /// 422 for an object the server refuses.
    pub fn invalid(plural: &str, name: &str, why: &str) -> ApiError {
        ApiError::new(422, "Invalid", format!("{plural} \"{name}\" is invalid: {why}"))
    }

    /// 400 for a request that cannot be understood.
    pub fn bad_request(why: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", why)
    }

    /// 405 for a verb the path does not support.
    pub fn method_not_allowed(method: &str, path: &str) -> ApiError {
        ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method} {path})"),
        )
    }

    /// 415 for a patch content type the server does not know.
    pub fn unsupported_media_type(content_type: &str) -> ApiError {
        ApiError::new(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"))
    }

    /// 410 for a watch from a resourceVersion older than the history kept.
    pub fn expired(resource_version: u64, oldest: u64) -> ApiError {
        ApiError::new(410, "Expired", format!("too old resource version: {resource_version} ({oldest})"))
    }

    /// An injected failure with any code.
    pub fn injected(code: u16) -> ApiError {
        let reason = match code {
            429 => "TooManyRequests",
            500 => "InternalError",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            403 => "Forbidden",
            401 => "Unauthorized",
            _ => "InternalError",
        };
        ApiError::new(code, reason, format!("injected failure: the fake API server answers {code}"))
    }

    /// The `Status` object sent as the response body.
    pub fn to_status(&self) -> Value {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        })
    }
}

/// The result of a store operation.
pub type ApiResult<T> = Result<T, ApiError>;
