//! Failure injection: make the fake answer an error status, or stop answering, for the requests a rule matches.

/// What a matched request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    /// An error status with a `Status` body (500, 503, 429 ...), and the message to put in it (a default one
    /// when `None`).
    Status(u16, Option<&'static str>),
    /// No answer: the request is held until the rules are cleared ([`crate::FakeApiServer::clear_faults`]), then
    /// served. A client without its own timeout waits that long.
    Hang,
}

/// A failure rule: which requests (method, a part of the path), how many times, and what they get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    method: Option<String>,
    path_contains: Option<String>,
    remaining: Option<usize>,
    action: FaultAction,
    retry_after: Option<u32>,
    text_body: bool,
}

/// What a matched request gets, with the rule's throttling details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) action: FaultAction,
    /// Seconds for the `Retry-After` header (and the Status's `details.retryAfterSeconds`).
    pub(crate) retry_after: Option<u32>,
    /// A plain-text body instead of a `Status`, as API Priority and Fairness rejects a request.
    pub(crate) text_body: bool,
}

impl FaultRule {
    /// Every request gets this status (until narrowed by the other methods).
    pub fn status(code: u16) -> FaultRule {
        FaultRule {
            method: None,
            path_contains: None,
            remaining: None,
            action: FaultAction::Status(code, None),
            retry_after: None,
            text_body: false,
        }
    }

    /// A throttled request as kube-apiserver answers it: 429 with a `Retry-After` header of `seconds`, and
    /// `details.retryAfterSeconds` in the Status (`apierrors.NewTooManyRequests`).
    pub fn too_many_requests(seconds: u32) -> FaultRule {
        FaultRule::status(429).retry_after(seconds)
    }

    /// A request API Priority and Fairness rejects: 429, a `Retry-After` header of `seconds` and a plain-text body
    /// (no Status object: apiserver's `tooManyRequests` writes `http.Error`), so only the header says when to retry.
    pub fn rejected_by_flow_control(seconds: u32) -> FaultRule {
        FaultRule { text_body: true, ..FaultRule::status(429).retry_after(seconds) }
    }

    /// Adds a `Retry-After` header of `seconds` (and `details.retryAfterSeconds` in a Status body).
    pub fn retry_after(self, seconds: u32) -> FaultRule {
        FaultRule { retry_after: Some(seconds), ..self }
    }

    /// Every request is held without an answer.
    pub fn hang() -> FaultRule {
        FaultRule { action: FaultAction::Hang, ..FaultRule::status(500) }
    }

    /// The `message` of the Status object, for tests of how a client reports the API's words.
    pub fn message(self, message: &'static str) -> FaultRule {
        match self.action {
            FaultAction::Status(code, _) => FaultRule { action: FaultAction::Status(code, Some(message)), ..self },
            FaultAction::Hang => self,
        }
    }

    /// Only requests with this method (`GET`, `PATCH` ...).
    pub fn method(self, method: &str) -> FaultRule {
        FaultRule { method: Some(method.to_ascii_uppercase()), ..self }
    }

    /// Only requests whose path contains this text (for example `/configmaps` or `/nodes/worker-1/status`).
    pub fn path_contains(self, text: &str) -> FaultRule {
        FaultRule { path_contains: Some(text.to_owned()), ..self }
    }

    /// Only the next `count` matching requests; then the rule is spent.
    pub fn times(self, count: usize) -> FaultRule {
        FaultRule { remaining: Some(count), ..self }
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.method.as_deref().is_none_or(|wanted| wanted == method)
            && self.path_contains.as_deref().is_none_or(|text| path.contains(text))
            && self.remaining != Some(0)
    }
}

/// The rules in force, first match wins.
#[derive(Debug, Default)]
pub(crate) struct Faults(Vec<FaultRule>);

impl Faults {
    pub(crate) fn add(&mut self, rule: FaultRule) {
        self.0.push(rule);
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The fault for a request, counting it against the rule that matched.
    pub(crate) fn take(&mut self, method: &str, path: &str) -> Option<Fault> {
        let rule = self.0.iter_mut().find(|rule| rule.matches(method, path))?;
        if let Some(remaining) = rule.remaining.as_mut() {
            *remaining -= 1;
        }
        Some(Fault { action: rule.action, retry_after: rule.retry_after, text_body: rule.text_body })
    }
}
