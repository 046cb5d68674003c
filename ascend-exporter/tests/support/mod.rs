//! Shared helpers of the `exporter_*` integration tests: simulated topologies, the exporter process, a tiny HTTP
//! client, promtool.
#![allow(dead_code)]

pub mod kubelet;
pub mod prometheus;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A simulated host of `chips` Ascend 910B chips, four per card; chip `i` has logic id `i` and phy id
/// `chips - 1 - i` (so the two id spaces differ), temperature `40 + i % 40` °C, AI-core utilisation `i % 100` %,
/// power 280.0 W, 64 GiB HBM with `1024 * (i % 64)` MiB used. Every value is constant.
pub fn write_topology(dir: &Path, chips: usize, extra: &str) -> PathBuf {
    let mut text = String::from("[simulation]\nname = \"exporter-test\"\nseed = 7\nsample_period_ms = 100\nhang_ms = 600000\ndriver_version = \"24.1.rc2\"\n");
    for card in 0..chips.div_ceil(4) {
        text.push_str(&format!("\n[[card]]\ncard_id = {card}\n"));
        for device in 0..4 {
            let i = card * 4 + device;
            if i >= chips {
                break;
            }
            text.push_str(&format!(
                "\n[[card.chip]]\ndevice_id = {device}\nlogic_id = {i}\nphy_id = {phy}\nchip_type = \"Ascend910B\"\nchip_name = \"910B3\"\naicore_count = 20\npcie = {{ bdf = \"0000:{bus:02x}:00.{device}\" }}\ntelemetry = {{ temperature = {temperature}, power = 2800, voltage = 85, utilization = {{ aicore = {aicore} }} }}\nhbm = {{ size_mb = 65536, used_mb = {used} }}\n",
                phy = chips - 1 - i,
                bus = 0x10 + card,
                temperature = 40 + i % 40,
                aicore = i % 100,
                used = 1024 * (i % 64),
            ));
        }
    }
    text.push_str(extra);
    let path = dir.join("topology.toml");
    std::fs::write(&path, text).expect("write topology");
    path
}

/// The temperature `write_topology` gives chip `logic`.
pub fn expected_temperature(logic: usize) -> usize {
    40 + logic % 40
}

/// The built simulator library.
pub fn sim_library() -> PathBuf {
    dcmi_sim::library_path().expect("libdcmi_sim.so is built with the workspace (cargo build -p dcmi-sim)")
}

/// The environment variable that carries the exporter's arguments (separated by `\x1f`) into a child process.
const CHILD_ARGS_ENV: &str = "ASCEND_EXPORTER_TEST_CHILD_ARGS";
/// The name of the test that is the child's entry point (see [`child_entry`]).
const CHILD_TEST: &str = "exporter_child";

/// Declares the ignored test through which [`Exporter::start`] runs the library's exporter in a child process of this
/// test binary: each exporter gets its own process (the simulator's state is per process), its own signals and its
/// own resident memory, exactly as the `npu-exporter` binary runs it, without this crate depending on the binary's
/// package.
#[allow(unused_macros)]
macro_rules! child_entry {
    () => {
        #[test]
        #[ignore = "the exporter child process that the other tests of this file start"]
        fn exporter_child() {
            support::run_exporter_child();
        }
    };
}
#[allow(unused_imports)]
pub(crate) use child_entry;

/// The child's body: the exporter with the arguments its parent passed, JSON logs on stderr, until it is killed.
pub fn run_exporter_child() {
    let Some(joined) = std::env::var_os(CHILD_ARGS_ENV) else {
        eprintln!("{CHILD_TEST} runs only as the child process of the other tests");
        return;
    };
    let joined = joined.into_string().expect("UTF-8 arguments");
    let args = std::iter::once("npu-exporter").chain(joined.split('\x1f'));
    let args = <ascend_exporter::program::Args as clap::Parser>::parse_from(args);
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).json().init();
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    if let Err(error) = runtime.block_on(ascend_exporter::program::run(args, std::future::pending())) {
        eprintln!("Error: {error}");
        std::process::exit(1);
    }
}

/// A running `npu-exporter`, killed on drop.
pub struct Exporter {
    pub child: Child,
    pub address: SocketAddr,
    pub stderr_log: std::sync::Arc<parking_lot::Mutex<Vec<String>>>,
}

impl Exporter {
    /// Starts the exporter on a free loopback port against `topology`; waits until it listens.
    pub fn start(topology: &Path, extra_args: &[&str], extra_env: &[(&str, &Path)]) -> Exporter {
        let library = format!("--dcmi.library={}", sim_library().display());
        let mut args = vec!["--web.listen-address=127.0.0.1:0", "--log.format=json", "--dcmi.skip-ownership-check"];
        args.push(&library);
        args.extend_from_slice(extra_args);
        // NPU_EXPORTER_BINARY measures a build of the binary (for example target/release/npu-exporter) with the same
        // tests; without it the exporter runs from this library in a child process of the test binary.
        let mut command = match std::env::var_os("NPU_EXPORTER_BINARY") {
            Some(binary) => {
                let mut command = Command::new(binary);
                command.args(&args);
                command
            }
            None => {
                let mut command = Command::new(std::env::current_exe().expect("the test binary"));
                command.args(["--exact", CHILD_TEST, "--ignored", "--nocapture", "--test-threads=1"]);
                command.env(CHILD_ARGS_ENV, args.join("\x1f"));
                command
            }
        };
        command.env("DCMI_SIM_CONFIG", topology).env("RUST_LOG", "info").stdout(Stdio::null()).stderr(Stdio::piped());
        for (key, value) in extra_env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("start npu-exporter");
        let stderr = child.stderr.take().expect("piped stderr");
        let (address_sender, address_receiver) = std::sync::mpsc::channel();
        let log = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let log_writer = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) {
                    if let Some(address) = json["fields"]["address"].as_str() {
                        let _ = address_sender.send(address.to_owned());
                    }
                }
                log_writer.lock().push(line);
            }
        });
        let address = match address_receiver.recv_timeout(Duration::from_secs(30)) {
            Ok(address) => address.parse().expect("socket address in log"),
            Err(_) => {
                let _ = child.kill();
                panic!("exporter did not start listening; log:\n{}", log.lock().join("\n"));
            }
        };
        Exporter { child, address, stderr_log: log }
    }

    /// Waits until `/healthz` answers 200 (the sampler completed a round).
    pub fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if get(self.address, "/healthz", &[]).is_ok_and(|r| r.status == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("exporter never became healthy; log:\n{}", self.stderr_log.lock().join("\n"));
    }

    /// Waits until each of `chips` chips has been read by the fast driver groups (utilization, chip_state, memory),
    /// as the native sample ages show: the first snapshot, which makes `/healthz` answer, may hold only some chips'
    /// readings. Needs the native names (`--metrics.naming` native or both).
    pub fn wait_first_rounds(&self, chips: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let read = |body: &str, group: &str| {
            let label = format!("group=\"{group}\"");
            body.lines()
                .filter(|line| line.starts_with("ascend_npu_sample_age_seconds{") && line.contains(&label))
                .count()
        };
        while Instant::now() < deadline {
            let body = get(self.address, "/metrics", &[]).map(|response| response.body).unwrap_or_default();
            if ["utilization", "chip_state", "memory"].iter().all(|group| read(&body, group) == chips) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("not every chip was read within 30 s; log:\n{}", self.stderr_log.lock().join("\n"));
    }

    /// Waits until `status()` (a `/healthz` call over any transport) returns 200.
    pub fn wait_healthy_over(&self, status: impl Fn() -> std::io::Result<u16>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if status().is_ok_and(|code| code == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("exporter never became healthy; log:\n{}", self.stderr_log.lock().join("\n"));
    }

    /// The exporter's resident set size in KiB, from `/proc/<pid>/status`.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS line")
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy where it is not UTF-8, as a gzip body is).
    pub body: String,
    /// The body as sent (after de-chunking).
    pub bytes: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }
}

/// Sends `GET path` over any stream with `Connection: close` and reads the whole answer.
pub fn request_over(stream: &mut impl ReadWrite, path: &str, headers: &[(&str, &str)]) -> std::io::Result<Response> {
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
}

/// Read + Write.
pub trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// A TLS client configuration that trusts `ca_pem` (a CA, or a self-signed server certificate) and presents
/// `client` (certificate and key PEM) if given.
pub fn tls_client_config(ca_pem: &str, client: Option<(&str, &str)>) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("add root");
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
    let config = match client {
        Some((cert_pem, key_pem)) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_slice_iter(cert_pem.as_bytes()).collect::<Result<_, _>>().expect("client PEM");
            let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("client key");
            builder.with_client_auth_cert(chain, key).expect("client auth")
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// A TLS connection to `address` (server name `localhost`) with the handshake done, reads timing out after 10 s.
pub fn tls_connect(
    address: SocketAddr,
    config: &Arc<rustls::ClientConfig>,
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    let connection =
        rustls::ClientConnection::new(Arc::clone(config), ServerName::try_from("localhost").expect("name"))
            .map_err(std::io::Error::other)?;
    let mut tcp = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut connection = connection;
    while connection.is_handshaking() {
        connection.complete_io(&mut tcp)?;
    }
    Ok(rustls::StreamOwned::new(connection, tcp))
}

/// GET over TLS with `Connection: close`.
pub fn https_get(
    address: SocketAddr,
    config: &Arc<rustls::ClientConfig>,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    request_over(&mut tls_connect(address, config)?, path, headers)
}

/// An `Authorization` header value for basic auth.
pub fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

/// Plain-HTTP GET with a 10 s timeout.
pub fn get(address: SocketAddr, path: &str, headers: &[(&str, &str)]) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    request_over(&mut stream, path, headers)
}

fn parse_response(raw: &[u8]) -> std::io::Result<Response> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| invalid("no header end"))?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|_| invalid("head not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let body_raw = &raw[split + 4..];
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body_bytes =
        if chunked { dechunk(body_raw).ok_or_else(|| invalid("bad chunked body"))? } else { body_raw.to_vec() };
    Ok(Response { status, headers, body: String::from_utf8_lossy(&body_bytes).into_owned(), bytes: body_bytes })
}

fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..line_end]).ok()?.trim(), 16).ok()?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

/// The value of the first sample line starting with `series` (a metric name with its label set).
pub fn sample_value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Runs `promtool check metrics` on `text`; returns its exit code and output. Fails if promtool is missing.
pub fn promtool_check_metrics(text: &str) -> (i32, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool must be installed (Debian package `prometheus`, see scripts/deps/debian.txt)");
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("feed promtool");
    let output = child.wait_with_output().expect("promtool runs");
    let mut message = String::from_utf8_lossy(&output.stdout).into_owned();
    message.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), message)
}

/// The Accept header Prometheus 2.42 sends.
pub const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
