//! The rustls server configuration built from the web configuration's `tls_server_config`.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use crate::error::Error;
use crate::web_config::{ClientAuth, TlsSettings, TlsVersion};

fn pem_error(what: &'static str, path: &Path, message: impl ToString) -> Error {
    Error::Pem { what, path: path.display().to_string(), message: message.to_string() }
}

fn load_certificates(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| pem_error(what, path, error))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| pem_error(what, path, error))?;
    if certificates.is_empty() {
        return Err(pem_error(what, path, "no CERTIFICATE block"));
    }
    Ok(certificates)
}

/// Builds the server configuration: certificate chain and key, optional client verification, protocol versions,
/// and ALPN for HTTP/2 (if enabled) and HTTP/1.1.
///
/// # Errors
/// [`Error::Pem`] or [`Error::Tls`] naming the file that cannot be read or parsed, or rustls' reason for refusing the set-up.
pub fn server_config(settings: &TlsSettings, http2: bool) -> Result<Arc<ServerConfig>, Error> {
    let chain = load_certificates("certificate chain", &settings.cert_file)?;
    let key = PrivateKeyDer::from_pem_file(&settings.key_file)
        .map_err(|error| pem_error("private key", &settings.key_file, error))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [(TlsVersion::Tls12, &rustls::version::TLS12), (TlsVersion::Tls13, &rustls::version::TLS13)]
            .into_iter()
            .filter(|(version, _)| (settings.min_version..=settings.max_version).contains(version))
            .map(|(_, protocol)| protocol)
            .collect();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|error| Error::Tls(error.to_string()))?;
    let builder = match (&settings.client_auth, &settings.client_ca_file) {
        (ClientAuth::VerifyClientCertIfGiven | ClientAuth::RequireAndVerifyClientCert, Some(ca_file)) => {
            let mut roots = RootCertStore::empty();
            for certificate in load_certificates("client CA bundle", ca_file)? {
                roots.add(certificate).map_err(|error| pem_error("client CA bundle", ca_file, error))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if settings.client_auth == ClientAuth::VerifyClientCertIfGiven {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(verifier.build().map_err(|error| Error::Tls(error.to_string()))?)
        }
        _ => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|error| Error::Tls(error.to_string()))?;
    config.alpn_protocols = if http2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    Ok(Arc::new(config))
}
