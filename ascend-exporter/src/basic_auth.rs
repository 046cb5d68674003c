//! HTTP basic authentication against the bcrypt hashes of the web configuration.

use std::collections::BTreeMap;

use base64::Engine;

use crate::error::Result;

/// Users and their bcrypt hashes; checks `Authorization` headers.
#[derive(Debug, Clone)]
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// Checked for unknown users so that a wrong user name costs as much time as a wrong password.
    decoy_hash: String,
}

impl BasicAuth {
    /// Authentication over `users`; `None` if there are none (auth off).
    ///
    /// # Errors
    /// [`Error::BasicAuth`](crate::Error::BasicAuth) only if bcrypt cannot hash the decoy password, which happens for an out-of-range cost in
    /// the hashes.
    pub fn new(users: BTreeMap<String, String>) -> Result<Option<Self>> {
        let Some(first) = users.values().next() else { return Ok(None) };
        let cost = first.get(4..6).and_then(|digits| digits.parse().ok()).unwrap_or(bcrypt::DEFAULT_COST);
        let decoy_hash = bcrypt::hash("npu-exporter decoy password", cost)?;
        Ok(Some(Self { users, decoy_hash }))
    }

    /// Whether an `Authorization` header value carries a known user and that user's password. Blocking: bcrypt takes
    /// tens of milliseconds at the usual costs, so call it off the async executor.
    pub fn check(&self, authorization: Option<&str>) -> bool {
        let Some((user, password)) = authorization.and_then(decode_basic) else { return false };
        match self.users.get(&user) {
            Some(hash) => bcrypt::verify(&password, hash).unwrap_or(false),
            None => {
                // Same work as a real check, result discarded: do not reveal which user names exist.
                let _ = bcrypt::verify(&password, &self.decoy_hash);
                false
            }
        }
    }
}

/// Splits `Basic <base64(user:password)>` into user and password.
fn decode_basic(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user: &str, password: &str) -> String {
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
    }

    #[test]
    fn accepts_only_the_right_password_of_a_known_user() {
        let hash = bcrypt::hash("s3cret:with colon", 4).expect("hash");
        let auth = BasicAuth::new(BTreeMap::from([("prom".to_owned(), hash)])).expect("valid").expect("users");
        assert!(auth.check(Some(&header("prom", "s3cret:with colon"))));
        assert!(!auth.check(Some(&header("prom", "wrong"))));
        assert!(!auth.check(Some(&header("mallory", "s3cret:with colon"))));
        assert!(!auth.check(Some("Bearer abc")));
        assert!(!auth.check(Some("Basic !!!")));
        assert!(!auth.check(None));
    }

    #[test]
    fn no_users_means_no_auth() {
        assert!(BasicAuth::new(BTreeMap::new()).expect("valid").is_none());
    }
}
