//! The node labeller against a fake Kubernetes API server on 127.0.0.1 with TLS (its own CA, made by rcgen): the
//! exact PATCH body and headers, the bearer token (re-read after rotation), idempotence, foreign labels left alone,
//! the on-demand trigger, and the error text when RBAC forbids the patch or the certificate is not trusted.

mod node_labels_support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_dcmi::ChipIdentity;
use ascend_deviceplugin::kube_client::{KubeClient, KubeClientConfig, KubeError};
use ascend_deviceplugin::node_labeller::{LabellerConfig, LabellerError, NodeLabeller, Reconciled};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use node_labels_support::{chip, shared_driver};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const NODE: &str = "worker-1";
const NODE_PATH: &str = "/api/v1/nodes/worker-1";

/// One request as the fake API server saw it.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: String,
}

/// What the fake API server knows and has seen.
#[derive(Default)]
struct ApiState {
    labels: BTreeMap<String, String>,
    requests: Vec<Recorded>,
    /// Answer every PATCH with 403 and a Status object, as the API does without RBAC.
    forbid_patch: bool,
}

/// A fake API server: serves one node, applies merge patches to its labels, records every request.
struct FakeApiServer {
    address: SocketAddr,
    ca_pem: String,
    state: Arc<Mutex<ApiState>>,
}

fn lock(state: &Mutex<ApiState>) -> std::sync::MutexGuard<'_, ApiState> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FakeApiServer {
    async fn start(labels: &[(&str, &str)]) -> FakeApiServer {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA");
        let server_key = KeyPair::generate().expect("server key");
        let server_cert = CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .expect("server params")
            .signed_by(&server_key, &ca)
            .expect("server certificate");
        let chain = vec![CertificateDer::from(server_cert.der().to_vec())];
        let key = PrivateKeyDer::from_pem_slice(server_key.serialize_pem().as_bytes()).expect("server key PEM");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server TLS config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let state = Arc::new(Mutex::new(ApiState {
            labels: labels.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect(),
            ..ApiState::default()
        }));
        let serving = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let state = Arc::clone(&serving);
                tokio::spawn(async move {
                    // A client that rejects the certificate aborts the handshake; nothing to serve then.
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |request| answer(Arc::clone(&state), request));
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
                });
            }
        });
        FakeApiServer { address, ca_pem: ca.pem(), state }
    }

    fn labels(&self) -> BTreeMap<String, String> {
        lock(&self.state).labels.clone()
    }

    fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    fn patches(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(|request| request.method == "PATCH").collect()
    }

    /// A client configuration trusting this server's CA, with the token in `dir/token`.
    fn client_config(&self, dir: &Path) -> KubeClientConfig {
        std::fs::write(dir.join("ca.crt"), &self.ca_pem).expect("write CA");
        KubeClientConfig {
            host: "127.0.0.1".into(),
            port: self.address.port(),
            token_path: dir.join("token"),
            ca_path: dir.join("ca.crt"),
            timeout: Duration::from_secs(10),
        }
    }
}

fn node_json(labels: &BTreeMap<String, String>) -> String {
    serde_json::json!({
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": NODE, "labels": labels},
        "status": {"capacity": {"cpu": "96"}},
    })
    .to_string()
}

fn status_json(code: StatusCode, reason: &str, message: &str) -> String {
    serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "details": {"name": NODE, "kind": "nodes"}, "code": code.as_u16(),
    })
    .to_string()
}

async fn answer(
    state: Arc<Mutex<ApiState>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let header = |name: hyper::header::HeaderName| {
        request.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned)
    };
    let recorded_head = (
        request.method().to_string(),
        request.uri().path().to_owned(),
        header(hyper::header::AUTHORIZATION),
        header(hyper::header::CONTENT_TYPE),
    );
    let body = request.into_body().collect().await?.to_bytes();
    let (method, path, authorization, content_type) = recorded_head;
    let mut state = lock(&state);
    state.requests.push(Recorded {
        method: method.clone(),
        path: path.clone(),
        authorization,
        content_type: content_type.clone(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let (status, text) = if path != NODE_PATH {
        (StatusCode::NOT_FOUND, status_json(StatusCode::NOT_FOUND, "NotFound", "nodes not found"))
    } else if method == "GET" {
        (StatusCode::OK, node_json(&state.labels))
    } else if method == "PATCH" && state.forbid_patch {
        let message =
            "nodes \"worker-1\" is forbidden: User \"system:serviceaccount:ascend-system:ascend-device-plugin\" \
                       cannot patch resource \"nodes\" in API group \"\" at the cluster scope";
        (StatusCode::FORBIDDEN, status_json(StatusCode::FORBIDDEN, "Forbidden", message))
    } else if method == "PATCH" && content_type.as_deref() == Some("application/merge-patch+json") {
        apply_merge_patch(&mut state.labels, &body);
        (StatusCode::OK, node_json(&state.labels))
    } else {
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            status_json(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType", "bad"),
        )
    };
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    Ok(response)
}

/// RFC 7386 on `metadata.labels`: a string sets the key, null removes it, absent keys stay.
fn apply_merge_patch(labels: &mut BTreeMap<String, String>, body: &[u8]) {
    let patch: serde_json::Value = serde_json::from_slice(body).expect("PATCH body is JSON");
    let changes = patch["metadata"]["labels"].as_object().expect("the patch names metadata.labels");
    for (key, value) in changes {
        match value.as_str() {
            Some(text) => labels.insert(key.clone(), text.to_owned()),
            None => {
                assert!(value.is_null(), "label values are strings or null: {value}");
                labels.remove(key)
            }
        };
    }
}

/// The test's node: chips the test can change, a token file, a labeller.
struct Setup {
    chips: Arc<Mutex<Vec<ChipIdentity>>>,
    dir: tempfile::TempDir,
    labeller: NodeLabeller,
}

fn setup(server: &FakeApiServer, chips: Vec<ChipIdentity>) -> Setup {
    let dir = tempfile::tempdir().expect("temporary directory");
    write_token(dir.path(), "token-1");
    let client = KubeClient::new(server.client_config(dir.path())).expect("client");
    let chips = Arc::new(Mutex::new(chips));
    let manager = Arc::new(shared_driver(Arc::clone(&chips), "24.1.rc2"));
    let config = LabellerConfig { interval: Duration::from_secs(3600), ..LabellerConfig::new(NODE) };
    Setup { chips, dir, labeller: NodeLabeller::new(manager, client, config) }
}

/// Rewrites the token the way the kubelet rotates projected tokens: a new file renamed over the old one.
fn write_token(dir: &Path, token: &str) {
    let temporary: PathBuf = dir.join("token.new");
    std::fs::write(&temporary, format!("{token}\n")).expect("write token");
    std::fs::rename(&temporary, dir.join("token")).expect("rotate token");
}

fn duo(count: u32) -> Vec<ChipIdentity> {
    (0..count).map(|logic| chip(logic, "310P3", Some("Atlas 300I Duo"), None)).collect()
}

const FOREIGN: [(&str, &str); 3] = [
    ("kubernetes.io/hostname", "worker-1"),
    ("topology.kubernetes.io/zone", "rack-7"),
    ("ascend.huawei.com/team", "vision"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_are_patched_once_with_the_exact_body_and_foreign_labels_survive() {
    let mut initial = FOREIGN.to_vec();
    initial.push(("ascend.huawei.com/chip-type", "310P")); // set by hand when the node joined the pool
    initial.push(("ascend.huawei.com/product", "Atlas-300I-Pro")); // stale
    let server = FakeApiServer::start(&initial).await;
    let node = setup(&server, duo(8));

    let first = node.labeller.reconcile().await.expect("first reconcile");
    let Reconciled::Patched(patch) = first else { panic!("expected a patch, got {first:?}") };
    assert_eq!(
        patch.to_string(),
        "accelerator=huawei-Ascend310P, ascend.huawei.com/chip-count=8, ascend.huawei.com/driver-version=24.1.rc2, \
         ascend.huawei.com/product=Atlas-300I-Duo, node.kubernetes.io/npu.chip.name=310P3"
    );
    let requests = server.requests();
    assert_eq!(
        requests.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect::<Vec<_>>(),
        [("GET", NODE_PATH), ("PATCH", NODE_PATH)]
    );
    let patch_request = &requests[1];
    assert_eq!(
        patch_request.body,
        r#"{"metadata":{"labels":{"accelerator":"huawei-Ascend310P","ascend.huawei.com/chip-count":"8","ascend.huawei.com/driver-version":"24.1.rc2","ascend.huawei.com/product":"Atlas-300I-Duo","node.kubernetes.io/npu.chip.name":"310P3"}}}"#
    );
    assert_eq!(patch_request.content_type.as_deref(), Some("application/merge-patch+json"));
    assert!(requests.iter().all(|r| r.authorization.as_deref() == Some("Bearer token-1")), "{requests:?}");

    let labels = server.labels();
    for (key, value) in FOREIGN {
        assert_eq!(labels.get(key).map(String::as_str), Some(value), "foreign label {key} changed");
    }
    assert_eq!(labels.get("ascend.huawei.com/chip-type").map(String::as_str), Some("310P"));
    assert_eq!(labels.len(), FOREIGN.len() + 6);

    // Idempotent: the node now matches, so the next reconcile only reads it.
    assert_eq!(node.labeller.reconcile().await.expect("second reconcile"), Reconciled::Unchanged);
    assert_eq!(server.patches().len(), 1, "no PATCH when nothing changed");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_is_read_for_the_next_request() {
    let server = FakeApiServer::start(&FOREIGN).await;
    let node = setup(&server, duo(2));
    node.labeller.reconcile().await.expect("reconcile with the first token");
    write_token(node.dir.path(), "token-2");
    node.chips.lock().expect("chips").pop(); // a card dropped: the count changes
    let outcome = node.labeller.reconcile().await.expect("reconcile with the rotated token");
    assert!(matches!(outcome, Reconciled::Patched(_)), "{outcome:?}");
    let tokens: Vec<_> =
        server.requests().into_iter().map(|r| (r.method, r.authorization.unwrap_or_default())).collect();
    assert_eq!(
        tokens,
        [
            ("GET".to_owned(), "Bearer token-1".to_owned()),
            ("PATCH".to_owned(), "Bearer token-1".to_owned()),
            ("GET".to_owned(), "Bearer token-2".to_owned()),
            ("PATCH".to_owned(), "Bearer token-2".to_owned()),
        ]
    );
    assert_eq!(server.patches()[1].body, r#"{"metadata":{"labels":{"ascend.huawei.com/chip-count":"1"}}}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_patch_names_the_status_the_api_message_and_the_fix() {
    let server = FakeApiServer::start(&FOREIGN).await;
    lock(&server.state).forbid_patch = true;
    let node = setup(&server, duo(1));
    let error = node.labeller.reconcile().await.expect_err("RBAC forbids the patch");
    let LabellerError::Kube(KubeError::Status { status, ref reason, .. }) = error else {
        panic!("expected a status error, got {error:?}")
    };
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(reason.as_deref(), Some("Forbidden"));
    let text = error.to_string();
    assert!(
        text.starts_with(
            "PATCH /api/v1/nodes/worker-1: HTTP 403 Forbidden: nodes \"worker-1\" is forbidden: User \
             \"system:serviceaccount:ascend-system:ascend-device-plugin\" cannot patch resource \"nodes\""
        ),
        "{text}"
    );
    assert!(text.contains("needs get and patch on nodes"), "{text}");
    assert_eq!(server.labels().len(), FOREIGN.len(), "nothing changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_certificate_from_another_ca_is_refused() {
    let server = FakeApiServer::start(&FOREIGN).await;
    let other = FakeApiServer::start(&[]).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    write_token(dir.path(), "token-1");
    let config = KubeClientConfig { port: server.address.port(), ..other.client_config(dir.path()) };
    let client = KubeClient::new(config).expect("client");
    let error = client.node_labels(NODE).await.expect_err("untrusted certificate");
    assert!(matches!(error, KubeError::Transport { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("TLS handshake") && text.contains(&format!("127.0.0.1:{}", server.address.port())), "{text}");
    assert!(server.requests().is_empty(), "no request may reach an untrusted server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_credentials_are_reported_with_their_path() {
    let server = FakeApiServer::start(&[]).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let error = KubeClient::new(server.client_config(dir.path())).expect_err("no token file");
    let text = error.to_string();
    assert!(
        text.starts_with("service-account token ") && text.contains(&dir.path().join("token").display().to_string()),
        "{text}"
    );
    write_token(dir.path(), "token-1");
    let config = server.client_config(dir.path());
    std::fs::write(&config.ca_path, "not a certificate").expect("overwrite CA");
    let error = KubeClient::new(config).expect_err("no certificate");
    assert!(error.to_string().starts_with("cluster CA "), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reconciles_at_start_on_demand_and_stops_on_shutdown() {
    let server = FakeApiServer::start(&FOREIGN).await;
    let node = Arc::new(setup(&server, duo(4)));
    let trigger = node.labeller.trigger();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = Arc::clone(&node);
    let task = tokio::spawn(async move {
        running
            .labeller
            .run(async {
                let _ = stopped.await;
            })
            .await;
    });
    wait_for(|| server.labels().get("ascend.huawei.com/chip-count").map(String::as_str) == Some("4")).await;

    // Someone removes a label by hand and a card is added; the interval is an hour, the trigger acts now.
    lock(&server.state).labels.remove("ascend.huawei.com/chip-type");
    node.chips.lock().expect("chips").push(chip(4, "310P3", Some("Atlas 300I Duo"), None));
    trigger.request();
    wait_for(|| {
        let labels = server.labels();
        labels.get("ascend.huawei.com/chip-count").map(String::as_str) == Some("5")
            && labels.get("ascend.huawei.com/chip-type").map(String::as_str) == Some("310P")
    })
    .await;
    assert_eq!(server.patches().len(), 2);

    stop.send(()).expect("labeller still running");
    tokio::time::timeout(Duration::from_secs(5), task).await.expect("run returns on shutdown").expect("no panic");
    for (key, value) in FOREIGN {
        assert_eq!(server.labels().get(key).map(String::as_str), Some(value));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_driver_fails_the_reconcile_without_piling_up_threads() {
    let server = FakeApiServer::start(&FOREIGN).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    write_token(dir.path(), "token-1");
    let client = KubeClient::new(server.client_config(dir.path())).expect("client");
    let mut manager = ascend_dcmi::MockDeviceManager::new();
    // The first chip list blocks like a dropped card; the ones after it answer at once.
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    manager.expect_chips().returning(move || {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(600));
        }
        Ok(vec![chip(0, "910B3", None, None).ids])
    });
    manager.expect_identity().returning(|_| Ok(chip(0, "910B3", None, None)));
    manager.expect_driver_version().returning(|| Ok("24.1.rc2".into()));
    let config = LabellerConfig { driver_deadline: Duration::from_millis(100), ..LabellerConfig::new(NODE) };
    let labeller = NodeLabeller::new(Arc::new(manager), client, config);

    let late = labeller.reconcile().await.expect_err("the driver blocks");
    assert!(matches!(late, LabellerError::DriverDeadline(_)), "{late:?}");
    let busy = labeller.reconcile().await.expect_err("the blocked read is still running");
    assert!(matches!(busy, LabellerError::DriverBusy), "{busy:?}");
    assert!(busy.to_string().contains("left unchanged"), "{busy}");
    assert!(server.requests().is_empty(), "nothing is read or patched without the chips");

    tokio::time::sleep(Duration::from_millis(700)).await;
    let outcome = labeller.reconcile().await.expect("the driver answers again");
    assert!(matches!(outcome, Reconciled::Patched(_)), "{outcome:?}");
}

async fn wait_for(condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "condition not met within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
