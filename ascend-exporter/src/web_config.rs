//! The Prometheus exporter-toolkit web configuration file (`--web.config.file`): TLS and basic auth.
//!
//! The YAML keys are the toolkit's, so one file serves every exporter of a fleet:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt            # relative paths are relative to this file
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # optional; needs client_ca_file
//!   client_ca_file: ca.crt
//!   min_version: TLS12               # TLS12 or TLS13 (rustls has no TLS 1.0/1.1)
//! http_server_config:
//!   http2: true
//!   headers:
//!     X-Frame-Options: deny
//! basic_auth_users:
//!   prometheus: $2y$10$...           # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//! ```
//!
//! Toolkit keys that this exporter cannot honour with rustls (`cipher_suites`, `curve_preferences`,
//! `prefer_server_cipher_suites`, `client_allowed_sans`) are rejected rather than silently ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{ConfigFile, Error};

/// TLS protocol versions a configuration can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum TlsVersion {
    /// TLS 1.2.
    #[serde(rename = "TLS12")]
    Tls12,
    /// TLS 1.3.
    #[serde(rename = "TLS13")]
    Tls13,
    /// TLS 1.0 (rejected: rustls does not implement it).
    #[serde(rename = "TLS10")]
    Tls10,
    /// TLS 1.1 (rejected: rustls does not implement it).
    #[serde(rename = "TLS11")]
    Tls11,
}

/// Whether and how clients must present certificates (the toolkit's `client_auth_type` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    #[default]
    NoClientCert,
    /// A client certificate is verified against `client_ca_file` if the client sends one.
    VerifyClientCertIfGiven,
    /// A client certificate is required and verified against `client_ca_file`.
    RequireAndVerifyClientCert,
    /// Accepted by the toolkit, rejected here: asking for a certificate without verifying it protects nothing.
    RequestClientCert,
    /// Rejected for the same reason.
    RequireAnyClientCert,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebConfigFile {
    tls_server_config: Option<TlsServerConfigFile>,
    #[serde(default)]
    http_server_config: HttpServerConfigFile,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsServerConfigFile {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    #[serde(default)]
    client_auth_type: ClientAuth,
    client_ca_file: Option<PathBuf>,
    min_version: Option<TlsVersion>,
    max_version: Option<TlsVersion>,
    #[serde(default)]
    cipher_suites: Vec<String>,
    #[serde(default)]
    curve_preferences: Vec<String>,
    prefer_server_cipher_suites: Option<bool>,
    #[serde(default)]
    client_allowed_sans: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpServerConfigFile {
    http2: Option<bool>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Validated TLS settings with absolute paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// PEM certificate chain.
    pub cert_file: PathBuf,
    /// PEM private key.
    pub key_file: PathBuf,
    /// Client certificate policy.
    pub client_auth: ClientAuth,
    /// PEM CA bundle for client certificates.
    pub client_ca_file: Option<PathBuf>,
    /// Lowest protocol version.
    pub min_version: TlsVersion,
    /// Highest protocol version.
    pub max_version: TlsVersion,
}

/// A validated web configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebConfig {
    /// TLS, if configured.
    pub tls: Option<TlsSettings>,
    /// Whether HTTP/2 is offered (default true, as in the toolkit).
    pub http2: bool,
    /// Headers added to every response.
    pub headers: BTreeMap<String, String>,
    /// User name to bcrypt hash.
    pub basic_auth_users: BTreeMap<String, String>,
}

impl WebConfig {
    /// Plain HTTP, no auth: the configuration without a file.
    pub fn plain() -> Self {
        Self { http2: true, ..Self::default() }
    }

    /// Reads and validates a web config file; relative paths in it are taken relative to its directory.
    ///
    /// # Errors
    /// [`Error`] naming the file and the key at fault.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            file: ConfigFile::WebConfig,
            path: shown.clone(),
            source,
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        Self::parse(&text, base, &shown)
    }

    /// Validates the text of a web config file; `base` resolves relative paths, `origin` names the file in errors.
    ///
    /// # Errors
    /// [`Error::Syntax`] for malformed YAML or unknown keys, [`Error::Invalid`] for values that
    /// cannot be honoured (missing key file, unsupported TLS version or option, a user whose hash is not bcrypt).
    pub fn parse(text: &str, base: &Path, origin: &str) -> Result<Self, Error> {
        let file: WebConfigFile = if text.trim().is_empty() {
            WebConfigFile::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(|error| Error::Syntax {
                file: ConfigFile::WebConfig,
                path: origin.to_owned(),
                message: error.to_string(),
            })?
        };
        let invalid =
            |message: String| Error::Invalid { file: ConfigFile::WebConfig, path: origin.to_owned(), message };
        for (user, hash) in &file.basic_auth_users {
            if !is_bcrypt_hash(hash) {
                return Err(invalid(format!(
                    "basic_auth_users.{user}: not a bcrypt hash (expected $2a$, $2b$ or $2y$ followed by cost and 53 characters)"
                )));
            }
            let cost = bcrypt_cost(hash);
            if !BCRYPT_COSTS.contains(&cost) {
                return Err(invalid(format!(
                    "basic_auth_users.{user}: bcrypt cost {cost} is outside {}..={} (each check doubles in time per step: \
                     cost 31 would hold every scrape for days)",
                    BCRYPT_COSTS.start(),
                    BCRYPT_COSTS.end()
                )));
            }
        }
        let tls = file.tls_server_config.map(|tls| tls_settings(tls, base)).transpose().map_err(invalid)?;
        Ok(Self {
            tls,
            http2: file.http_server_config.http2.unwrap_or(true),
            headers: file.http_server_config.headers,
            basic_auth_users: file.basic_auth_users,
        })
    }
}

fn tls_settings(tls: TlsServerConfigFile, base: &Path) -> Result<TlsSettings, String> {
    let unsupported = [
        ("cipher_suites", !tls.cipher_suites.is_empty()),
        ("curve_preferences", !tls.curve_preferences.is_empty()),
        ("prefer_server_cipher_suites", tls.prefer_server_cipher_suites.is_some()),
        ("client_allowed_sans", !tls.client_allowed_sans.is_empty()),
    ];
    if let Some((key, _)) = unsupported.iter().find(|(_, set)| *set) {
        return Err(format!("tls_server_config.{key} is not supported (rustls chooses suites and curves itself)"));
    }
    let resolve = |path: PathBuf| if path.is_absolute() { path } else { base.join(path) };
    let cert_file = tls.cert_file.map(resolve).ok_or("tls_server_config.cert_file is required")?;
    let key_file = tls.key_file.map(resolve).ok_or("tls_server_config.key_file is required")?;
    let client_ca_file = tls.client_ca_file.map(resolve);
    match tls.client_auth_type {
        ClientAuth::RequestClientCert | ClientAuth::RequireAnyClientCert => {
            return Err(format!(
                "tls_server_config.client_auth_type {:?} is not supported: use VerifyClientCertIfGiven or RequireAndVerifyClientCert",
                tls.client_auth_type
            ));
        }
        ClientAuth::VerifyClientCertIfGiven | ClientAuth::RequireAndVerifyClientCert if client_ca_file.is_none() => {
            return Err(format!("tls_server_config.client_auth_type {:?} needs client_ca_file", tls.client_auth_type));
        }
        _ => {}
    }
    let min_version = tls.min_version.unwrap_or(TlsVersion::Tls12);
    let max_version = tls.max_version.unwrap_or(TlsVersion::Tls13);
    for (key, version) in [("min_version", min_version), ("max_version", max_version)] {
        if matches!(version, TlsVersion::Tls10 | TlsVersion::Tls11) {
            return Err(format!("tls_server_config.{key}: TLS 1.0 and 1.1 are not offered; use TLS12 or TLS13"));
        }
    }
    if min_version > max_version {
        return Err("tls_server_config.min_version is above max_version".to_owned());
    }
    Ok(TlsSettings { cert_file, key_file, client_auth: tls.client_auth_type, client_ca_file, min_version, max_version })
}

/// The bcrypt costs a hash may carry: htpasswd's range (`htpasswd -B -C 4..17`). bcrypt itself accepts up to 31, but
/// the exporter checks the password of every scrape and hashes a decoy at start-up, so an out-of-range cost stalls
/// start-up and each scrape for hours or days (found by the `web_config` fuzz target).
pub const BCRYPT_COSTS: std::ops::RangeInclusive<u32> = 4..=17;

/// The cost digits of a bcrypt hash (`$2y$10$...` → 10); 0 where there are none.
pub(crate) fn bcrypt_cost(hash: &str) -> u32 {
    hash.get(4..6).and_then(|digits| digits.parse().ok()).unwrap_or(0)
}

/// Whether `hash` has the shape of a bcrypt hash: `$2a$`, `$2b$` or `$2y$`, two cost digits, `$`, 53 characters.
fn is_bcrypt_hash(hash: &str) -> bool {
    let valid_prefix = ["$2a$", "$2b$", "$2y$"].iter().any(|prefix| hash.starts_with(prefix));
    let bytes = hash.as_bytes();
    valid_prefix && bytes.len() == 60 && bytes[4].is_ascii_digit() && bytes[5].is_ascii_digit() && bytes[6] == b'$'
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "$2y$10$X0ZmUY5vYlyvJ3.jQUOvt.3Z7hViHHSqpg5CgbzXLBwC0Ndd0Ajs6";

    #[test]
    fn full_config_resolves_relative_paths() {
        let text = format!(
            "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: /abs/server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  min_version: TLS13\nhttp_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\nbasic_auth_users:\n  prometheus: {HASH}\n"
        );
        let config = WebConfig::parse(&text, Path::new("/etc/npu-exporter"), "web.yml").expect("valid config");
        let tls = config.tls.expect("tls configured");
        assert_eq!(tls.cert_file, PathBuf::from("/etc/npu-exporter/tls/server.crt"));
        assert_eq!(tls.key_file, PathBuf::from("/abs/server.key"));
        assert_eq!(tls.client_ca_file, Some(PathBuf::from("/etc/npu-exporter/ca.crt")));
        assert_eq!((tls.min_version, tls.max_version), (TlsVersion::Tls13, TlsVersion::Tls13));
        assert!(!config.http2);
        assert_eq!(config.headers.get("X-Frame-Options").map(String::as_str), Some("deny"));
        assert_eq!(config.basic_auth_users.get("prometheus").map(String::as_str), Some(HASH));
    }

    #[test]
    fn empty_file_means_plain_http() {
        assert_eq!(WebConfig::parse("", Path::new("/"), "web.yml").expect("valid"), WebConfig::plain());
    }

    #[test]
    fn rejections_name_the_key() {
        let cases = [
            ("tls_server_config:\n  cert_file: a\n", "key_file is required"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n", "min_version"),
            (
                "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                "cipher_suites",
            ),
            (
                "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n",
                "needs client_ca_file",
            ),
            ("basic_auth_users:\n  alice: secret\n", "basic_auth_users.alice: not a bcrypt hash"),
            (
                "basic_auth_users:\n  alice: $2y$31$X0ZmUY5vYlyvJ3.jQUOvt.3Z7hViHHSqpg5CgbzXLBwC0Ndd0Ajs6\n",
                "basic_auth_users.alice: bcrypt cost 31 is outside 4..=17",
            ),
            (
                "basic_auth_users:\n  alice: $2y$03$X0ZmUY5vYlyvJ3.jQUOvt.3Z7hViHHSqpg5CgbzXLBwC0Ndd0Ajs6\n",
                "bcrypt cost 3",
            ),
            ("tls_config:\n  cert_file: a\n", "unknown field `tls_config`"),
        ];
        for (text, expected) in cases {
            let message = WebConfig::parse(text, Path::new("/"), "/etc/web.yml").expect_err(text).to_string();
            assert!(message.contains("/etc/web.yml") && message.contains(expected), "{message}");
        }
    }
}
