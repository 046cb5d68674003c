//! HTTP basic authentication against the bcrypt hashes of the web configuration.

use std::collections::{BTreeMap, HashSet};

use base64::Engine;
use parking_lot::Mutex;

use crate::error::Result;
use crate::web_config::{bcrypt_cost, BCRYPT_COSTS};

/// How many verified credentials are remembered; a scrape configuration has a handful, so reaching this means
/// churn, and the set is simply emptied.
const MAX_VERIFIED: usize = 64;

/// Users and their bcrypt hashes; checks `Authorization` headers.
///
/// Credentials that passed bcrypt once are remembered (as a SHA-256 digest of user, password and hash, never in
/// clear), and bcrypt runs one check at a time, as in Prometheus' exporter-toolkit. Without either, every scrape with
/// the right password costs a whole bcrypt check (about 50 ms of CPU at cost 10) and clients that scrape or guess
/// passwords in parallel occupy every core: `scripts/load.sh exporter` (4 clients, cost 10) then starved the sampler
/// thread and half of its rounds were never served (docs/robustness.md).
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    /// Checked for unknown users so that a wrong user name costs as much time as a wrong password.
    decoy_hash: String,
    /// Digests of credentials that passed bcrypt.
    verified: Mutex<HashSet<[u8; 32]>>,
    /// Held during a bcrypt check: wrong passwords sent in parallel take one core, not all of them.
    bcrypt_turn: Mutex<()>,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("BasicAuth")
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .field("verified", &self.verified.lock().len())
            .finish_non_exhaustive()
    }
}

impl BasicAuth {
    /// Authentication over `users`; `None` if there are none (auth off).
    ///
    /// # Errors
    /// [`Error::BasicAuth`](crate::Error::BasicAuth) only if bcrypt cannot hash the decoy password (a failure of the
    /// system's random source).
    pub fn new(users: BTreeMap<String, String>) -> Result<Option<Self>> {
        let Some(first) = users.values().next() else { return Ok(None) };
        // A cost outside the accepted range (users built without `WebConfig::parse`) would stall here for days.
        let cost = Some(bcrypt_cost(first)).filter(|cost| BCRYPT_COSTS.contains(cost)).unwrap_or(bcrypt::DEFAULT_COST);
        let decoy_hash = bcrypt::hash("npu-exporter decoy password", cost)?;
        Ok(Some(Self { users, decoy_hash, verified: Mutex::default(), bcrypt_turn: Mutex::default() }))
    }

    /// Whether an `Authorization` header value carries a known user and that user's password. Blocking: a first
    /// check (and every wrong one) takes tens of milliseconds of bcrypt at the usual costs and waits for other checks,
    /// so call it off the async executor.
    pub fn check(&self, authorization: Option<&str>) -> bool {
        let Some((user, password)) = authorization.and_then(decode_basic) else { return false };
        let Some(hash) = self.users.get(&user) else {
            // Same work as a real check, result discarded: do not reveal which user names exist.
            let _turn = self.bcrypt_turn.lock();
            let _ = bcrypt::verify(&password, &self.decoy_hash);
            return false;
        };
        let digest = credential_digest(&user, &password, hash);
        if self.verified.lock().contains(&digest) {
            return true;
        }
        let valid = {
            let _turn = self.bcrypt_turn.lock();
            bcrypt::verify(&password, hash).unwrap_or(false)
        };
        if valid {
            let mut verified = self.verified.lock();
            if verified.len() >= MAX_VERIFIED {
                verified.clear();
            }
            verified.insert(digest);
        }
        valid
    }
}

/// SHA-256 over the lengths and bytes of user, password and hash (lengths first, so no two triples collide by
/// shifting bytes between fields).
fn credential_digest(user: &str, password: &str, hash: &str) -> [u8; 32] {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for field in [user, password, hash] {
        context.update(&(field.len() as u64).to_le_bytes());
        context.update(field.as_bytes());
    }
    let mut digest = [0u8; 32];
    digest.copy_from_slice(context.finish().as_ref());
    digest
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
    fn a_verified_password_is_remembered_and_a_wrong_one_never() {
        let hash = bcrypt::hash("right", 4).expect("hash");
        let auth = BasicAuth::new(BTreeMap::from([("prom".to_owned(), hash)])).expect("valid").expect("users");
        assert!(!auth.check(Some(&header("prom", "wrong"))));
        assert!(auth.verified.lock().is_empty(), "a failed check is not remembered");
        assert!(auth.check(Some(&header("prom", "right"))));
        assert!(auth.check(Some(&header("prom", "right"))));
        assert_eq!(auth.verified.lock().len(), 1);
        assert!(!auth.check(Some(&header("prom", "right2"))), "a remembered password does not open similar ones");
        assert!(!auth.check(Some(&header("other", "right"))));
        assert_ne!(credential_digest("ab", "c", "h"), credential_digest("a", "bc", "h"));
    }

    #[test]
    fn no_users_means_no_auth() {
        assert!(BasicAuth::new(BTreeMap::new()).expect("valid").is_none());
    }
}
