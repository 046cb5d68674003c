//! The exporter-toolkit web config: TLS (rustls), client certificates, basic auth with bcrypt, extra headers.

mod support;

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use support::{basic, get, write_topology, Exporter, Response};

support::child_entry!();

struct Pki {
    ca_pem: String,
    server_pem: String,
    server_key_pem: String,
    client_pem: String,
    client_key_pem: String,
}

fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA");
    let leaf = |name: &str, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(vec![name.to_owned()]).expect("params");
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &ca).expect("sign");
        (cert.pem(), key.serialize_pem())
    };
    let (server_pem, server_key_pem) = leaf("localhost", ExtendedKeyUsagePurpose::ServerAuth);
    let (client_pem, client_key_pem) = leaf("prometheus", ExtendedKeyUsagePurpose::ClientAuth);
    Pki { ca_pem: ca.pem(), server_pem, server_key_pem, client_pem, client_key_pem }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write file");
}

/// GET over TLS from `exporter`, trusting `ca_pem`, optionally presenting a client certificate.
fn https_get(
    exporter: &Exporter,
    ca_pem: &str,
    client: Option<(&str, &str)>,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    support::https_get(exporter.address, &support::tls_client_config(ca_pem, client), path, headers)
}

#[test]
fn tls_with_basic_auth_protects_metrics_but_not_healthz() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), 2, "");
    let pki = pki();
    write(dir.path(), "server.crt", &pki.server_pem);
    write(dir.path(), "server.key", &pki.server_key_pem);
    let hash = bcrypt::hash("scrape-me", 4).expect("bcrypt");
    // Relative paths are relative to the config file, as in the exporter-toolkit.
    write(
        dir.path(),
        "web.yml",
        &format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\nbasic_auth_users:\n  prometheus: '{hash}'\n"),
    );
    let exporter = Exporter::start(
        &topology,
        &[&format!("--web.config.file={}", dir.path().join("web.yml").display()), "--pod-resources.disable"],
        &[],
    );

    let healthz = https_get(&exporter, &pki.ca_pem, None, "/healthz", &[]).expect("TLS healthz");
    assert_eq!(healthz.header("x-frame-options"), Some("deny"));
    assert!(healthz.status == 200 || healthz.status == 503, "healthz needs no auth: {}", healthz.status);

    let anonymous = https_get(&exporter, &pki.ca_pem, None, "/metrics", &[]).expect("TLS scrape");
    assert_eq!(anonymous.status, 401);
    assert!(anonymous.header("www-authenticate").is_some_and(|v| v.starts_with("Basic")));
    let wrong = https_get(&exporter, &pki.ca_pem, None, "/metrics", &[("Authorization", &basic("prometheus", "nope"))])
        .expect("TLS scrape");
    assert_eq!(wrong.status, 401);
    let unknown = https_get(&exporter, &pki.ca_pem, None, "/", &[("Authorization", &basic("mallory", "scrape-me"))])
        .expect("TLS index");
    assert_eq!(unknown.status, 401, "the index is protected too");

    exporter.wait_healthy_over(|| https_get(&exporter, &pki.ca_pem, None, "/healthz", &[]).map(|r| r.status));
    let allowed =
        https_get(&exporter, &pki.ca_pem, None, "/metrics", &[("Authorization", &basic("prometheus", "scrape-me"))])
            .expect("TLS scrape");
    assert_eq!(allowed.status, 200);
    assert!(allowed.body.contains("ascend_npu_temperature_celsius{"));

    let plain = get(exporter.address, "/metrics", &[]);
    assert!(plain.map(|r| r.status != 200).unwrap_or(true), "plain HTTP must not get metrics from the TLS port");
}

#[test]
fn client_certificates_are_required_and_verified() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), 2, "");
    let pki = pki();
    write(dir.path(), "server.crt", &pki.server_pem);
    write(dir.path(), "server.key", &pki.server_key_pem);
    write(dir.path(), "ca.crt", &pki.ca_pem);
    let config = dir.path().join("web.yml");
    std::fs::write(
        &config,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  min_version: TLS13\n",
    )
    .expect("write web.yml");
    let exporter = Exporter::start(
        &topology,
        &[&format!("--web.config.file={}", config.display()), "--pod-resources.disable"],
        &[],
    );
    let client = Some((pki.client_pem.as_str(), pki.client_key_pem.as_str()));
    exporter.wait_healthy_over(|| https_get(&exporter, &pki.ca_pem, client, "/healthz", &[]).map(|r| r.status));
    let with_cert = https_get(&exporter, &pki.ca_pem, client, "/metrics", &[]).expect("mutual TLS scrape");
    assert_eq!(with_cert.status, 200);
    let without_cert = https_get(&exporter, &pki.ca_pem, None, "/metrics", &[]);
    assert!(without_cert.is_err(), "a client without a certificate is refused: {without_cert:?}");
}

#[tokio::test]
async fn invalid_web_config_stops_start_up_naming_the_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("web.yml");
    std::fs::write(&config, "basic_auth_users:\n  prometheus: plaintext\n").expect("write");
    let flag = format!("--web.config.file={}", config.display());
    let args = <ascend_exporter::program::Args as clap::Parser>::parse_from(["npu-exporter", &flag]);
    let error = ascend_exporter::program::Exporter::start(&args).await.expect_err("start-up refused").to_string();
    assert!(error.contains("basic_auth_users.prometheus: not a bcrypt hash"), "{error}");
}
