//! The registration call as the real kubelet's plugin watcher makes it: grpc-go, dialled with the bare socket path,
//! sends that path as HTTP/2 `:authority`. The bytes are written by hand (h2's client would refuse the path) over
//! the real unix socket.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dra_kubelet_plugin::api::registration::registration_server::{Registration, RegistrationServer};
use dra_kubelet_plugin::api::registration::{InfoRequest, PluginInfo, RegistrationStatus, RegistrationStatusResponse};
use dra_kubelet_plugin::{ClaimError, ClaimRef, DeviceHealth, Driver, KubeletPlugin, PluginConfig, PreparedDevice};
use kubelet_socket::AuthorityRewriter;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio_stream::wrappers::UnixListenerStream;
use tokio_stream::StreamExt;
use tonic::transport::Server;
use tonic::{Request, Response, Status};

const WAIT: Duration = Duration::from_secs(10);
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PROTOCOL_ERROR: u32 = 0x1;

/// How the server answered one call.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The response's messages (DATA payloads) up to the trailers.
    Answered(Vec<u8>),
    /// RST_STREAM with this error code.
    Reset(u32),
    /// GOAWAY with this error code.
    GoneAway(u32),
}

fn frame(frame_type: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = u32::try_from(payload.len()).unwrap().to_be_bytes()[1..].to_vec();
    bytes.extend_from_slice(&[frame_type, flags]);
    bytes.extend_from_slice(&stream.to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// An HPACK integer with a `prefix_bits`-bit prefix, the first byte's other bits from `first` (RFC 7541 §5.1).
fn integer(first: u8, prefix_bits: u32, mut value: usize, out: &mut Vec<u8>) {
    let limit = (1usize << prefix_bits) - 1;
    if value < limit {
        out.push(first | value as u8);
        return;
    }
    out.push(first | limit as u8);
    value -= limit;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// A raw (not Huffman-coded) string literal.
fn string(value: &[u8], out: &mut Vec<u8>) {
    integer(0, 7, value.len(), out);
    out.extend_from_slice(value);
}

/// A literal field without indexing, with a literal name.
fn literal(name: &[u8], value: &[u8], block: &mut Vec<u8>) {
    block.push(0x00);
    string(name, block);
    string(value, block);
}

/// How a request names its `:authority`.
enum AuthorityField<'a> {
    /// Literal without indexing, with a literal name.
    Literal(&'a [u8]),
    /// Literal with incremental indexing of static index 1, as grpc-go sends a new authority.
    Indexing(&'a [u8]),
    /// The dynamic-table entry at this index, as grpc-go sends an authority it sent before.
    Indexed(usize),
}

/// The frames of a `GetInfo` call on `stream`: HEADERS, then DATA with an empty message and END_STREAM.
fn get_info(stream: u32, authority: AuthorityField<'_>) -> Vec<u8> {
    let mut block = Vec::new();
    literal(b":method", b"POST", &mut block);
    literal(b":scheme", b"http", &mut block);
    literal(b":path", b"/pluginregistration.Registration/GetInfo", &mut block);
    match authority {
        AuthorityField::Literal(value) => literal(b":authority", value, &mut block),
        AuthorityField::Indexing(value) => {
            integer(0x40, 6, 1, &mut block);
            string(value, &mut block);
        }
        AuthorityField::Indexed(index) => integer(0x80, 7, index, &mut block),
    }
    literal(b"content-type", b"application/grpc", &mut block);
    literal(b"te", b"trailers", &mut block);
    let mut bytes = frame(HEADERS, END_HEADERS, stream, &block);
    bytes.extend_from_slice(&frame(DATA, END_STREAM, stream, &[0, 0, 0, 0, 0]));
    bytes
}

/// Opens an HTTP/2 connection to `socket`, sends `calls` (stream id, frames) and reads until each has an outcome.
async fn exchange(socket: &Path, calls: Vec<(u32, Vec<u8>)>) -> HashMap<u32, Outcome> {
    let mut connection = UnixStream::connect(socket).await.unwrap();
    let mut out = PREFACE.to_vec();
    out.extend_from_slice(&frame(SETTINGS, 0, 0, &[]));
    let mut answers: HashMap<u32, Vec<u8>> = HashMap::new();
    for (stream, frames) in calls {
        out.extend_from_slice(&frames);
        answers.insert(stream, Vec::new());
    }
    connection.write_all(&out).await.unwrap();
    let mut outcomes = HashMap::new();
    let reading = async {
        while outcomes.len() < answers.len() {
            let mut header = [0u8; 9];
            connection.read_exact(&mut header).await.unwrap();
            let length = usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
            let (frame_type, flags) = (header[3], header[4]);
            let stream = u32::from_be_bytes(header[5..9].try_into().unwrap()) & 0x7FFF_FFFF;
            let mut payload = vec![0; length];
            connection.read_exact(&mut payload).await.unwrap();
            let code = || u32::from_be_bytes(payload[..4].try_into().unwrap());
            match frame_type {
                SETTINGS if flags & 0x1 == 0 => connection.write_all(&frame(SETTINGS, 0x1, 0, &[])).await.unwrap(),
                RST_STREAM => {
                    outcomes.insert(stream, Outcome::Reset(code()));
                }
                GOAWAY if u32::from_be_bytes(payload[4..8].try_into().unwrap()) != 0 => {
                    for stream in answers.keys() {
                        outcomes
                            .entry(*stream)
                            .or_insert(Outcome::GoneAway(u32::from_be_bytes(payload[4..8].try_into().unwrap())));
                    }
                }
                DATA => answers.get_mut(&stream).expect("DATA on a stream we did not open").extend(payload),
                HEADERS if flags & END_STREAM != 0 => {
                    outcomes.insert(stream, Outcome::Answered(answers[&stream].clone()));
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(WAIT, reading).await.expect("the server answered every call");
    outcomes
}

/// The `PluginInfo` in a `GetInfo` answer (one length-prefixed gRPC message).
fn plugin_info(outcome: &Outcome) -> PluginInfo {
    let Outcome::Answered(messages) = outcome else { panic!("no answer: {outcome:?}") };
    assert!(messages.len() >= 5 && messages[0] == 0, "not one uncompressed gRPC message: {messages:?}");
    let length = u32::from_be_bytes(messages[1..5].try_into().unwrap()) as usize;
    PluginInfo::decode(&messages[5..5 + length]).expect("a PluginInfo")
}

struct FixedInfo;

#[tonic::async_trait]
impl Registration for FixedInfo {
    async fn get_info(&self, _: Request<InfoRequest>) -> Result<Response<PluginInfo>, Status> {
        Ok(Response::new(PluginInfo { name: "fixed.example.com".into(), ..PluginInfo::default() }))
    }

    async fn notify_registration_status(
        &self,
        _: Request<RegistrationStatus>,
    ) -> Result<Response<RegistrationStatusResponse>, Status> {
        Ok(Response::new(RegistrationStatusResponse {}))
    }
}

/// Serves [`FixedInfo`] at `socket`, through the adapter when `rewrite`.
fn serve_fixed_info(socket: &Path, rewrite: bool) {
    let incoming = UnixListenerStream::new(UnixListener::bind(socket).unwrap());
    let router = Server::builder().add_service(RegistrationServer::new(FixedInfo));
    if rewrite {
        tokio::spawn(router.serve_with_incoming(incoming.map(|accepted| accepted.map(AuthorityRewriter::new))));
    } else {
        tokio::spawn(router.serve_with_incoming(incoming));
    }
}

#[tokio::test]
async fn a_path_authority_is_refused_by_tonic_alone_and_answered_through_the_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, adapted) = (dir.path().join("plain.sock"), dir.path().join("adapted.sock"));
    serve_fixed_info(&plain, false);
    serve_fixed_info(&adapted, true);
    let path = b"/var/lib/kubelet/plugins_registry/x-reg.sock";

    // The cause: the very bytes grpc-go sends are refused by h2.
    let refused = exchange(&plain, vec![(1, get_info(1, AuthorityField::Literal(path)))]).await;
    assert_eq!(refused[&1], Outcome::Reset(PROTOCOL_ERROR));

    let answered = exchange(&adapted, vec![(1, get_info(1, AuthorityField::Literal(path)))]).await;
    assert_eq!(plugin_info(&answered[&1]).name, "fixed.example.com");

    // A valid authority is answered with or without the adapter.
    for socket in [&plain, &adapted] {
        let answered = exchange(socket, vec![(1, get_info(1, AuthorityField::Literal(b"localhost")))]).await;
        assert_eq!(plugin_info(&answered[&1]).name, "fixed.example.com");
    }
}

#[tokio::test]
async fn a_second_call_naming_the_rewritten_dynamic_table_entry_is_answered() {
    // grpc-go adds a new authority to the dynamic table and names it by index (62, the newest entry) afterwards,
    // as in the watcher's GetInfo then NotifyRegistrationStatus on one connection.
    let dir = tempfile::tempdir().unwrap();
    let adapted = dir.path().join("adapted.sock");
    serve_fixed_info(&adapted, true);
    let path = b"/var/lib/kubelet/plugins_registry/x-reg.sock";
    let calls = vec![(1, get_info(1, AuthorityField::Indexing(path))), (3, get_info(3, AuthorityField::Indexed(62)))];
    let answered = exchange(&adapted, calls).await;
    assert_eq!(plugin_info(&answered[&1]).name, "fixed.example.com");
    assert_eq!(plugin_info(&answered[&3]).name, "fixed.example.com");
}

struct Nothing;

impl Driver for Nothing {
    async fn prepare(&self, _: &ClaimRef) -> Result<Vec<PreparedDevice>, ClaimError> {
        Ok(Vec::new())
    }

    async fn unprepare(&self, _: &ClaimRef) -> Result<(), ClaimError> {
        Ok(())
    }

    fn health(&self) -> Option<watch::Receiver<Vec<DeviceHealth>>> {
        None
    }
}

#[tokio::test]
async fn a_kubelet_plugin_answers_the_watchers_get_info_at_its_registration_socket() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = PluginConfig::new("npu.example.com");
    config.registry_dir = dir.path().join("plugins_registry");
    config.plugins_dir = dir.path().join("plugins");
    let socket = config.registration_socket();
    let plugin = KubeletPlugin::start(config, Arc::new(Nothing)).await.unwrap();

    let authority = socket.to_str().unwrap().as_bytes();
    let calls =
        vec![(1, get_info(1, AuthorityField::Indexing(authority))), (3, get_info(3, AuthorityField::Indexed(62)))];
    let answered = exchange(&socket, calls).await;
    for stream in [1, 3] {
        let info = plugin_info(&answered[&stream]);
        assert_eq!((info.r#type.as_str(), info.name.as_str()), ("DRAPlugin", "npu.example.com"));
    }
    plugin.shutdown().await;
}
