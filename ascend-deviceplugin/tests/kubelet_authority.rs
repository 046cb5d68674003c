//! The kubelet floor of docs/compatibility.md, kept true: a client that sends the plugin socket's path as the
//! HTTP/2 `:authority` (what kubelets before 1.26 sent, kubernetes/kubernetes#112597) or that path %-encoded (Python
//! grpc from 1.57) has its `GetDevicePluginOptions` call reset with PROTOCOL_ERROR, the error an old kubelet logs;
//! the same call with `localhost` (kubelet 1.26+) is answered. If a tonic/h2 upgrade ever starts accepting such
//! authorities, the first assertion fails and the floor in the docs can come down.
//!
//! No gRPC client library can send such a request: `http::Uri`, under hyper, h2 and tonic alike, refuses the
//! authority before anything is sent, which is the very check the server applies. So this client writes the
//! HTTP/2 frames itself over the unix socket: the connection preface, SETTINGS, one HEADERS frame whose header
//! block is HPACK literals (no Huffman, no table), one DATA frame with the empty request, and reads frames until
//! the stream ends.

mod support;

use std::path::Path;
use std::time::Duration;

use support::{FakeHost, Harness};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

const RESOURCE: &str = "huawei.com/Ascend910";
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

const PROTOCOL_ERROR: u32 = 0x1;
const STREAM: u32 = 1;

/// How the server dealt with the one request.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The stream was reset with this HTTP/2 error code.
    Reset(u32),
    /// The whole connection was closed with GOAWAY and this code.
    GoAway(u32),
    /// The stream ended normally; `message_bytes` of response DATA came (a gRPC error has none).
    Answered { message_bytes: usize },
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let length = u32::try_from(payload.len()).expect("small frame").to_be_bytes();
    let mut bytes = vec![length[1], length[2], length[3], kind, flags];
    bytes.extend_from_slice(&stream.to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// An HPACK integer with a 7-bit prefix (RFC 7541 §5.1), as used for string lengths.
fn hpack_length(length: usize, out: &mut Vec<u8>) {
    if length < 127 {
        out.push(u8::try_from(length).expect("below 127"));
        return;
    }
    out.push(127);
    let mut rest = length - 127;
    while rest >= 128 {
        out.push(u8::try_from(rest % 128).expect("below 128") | 0x80);
        rest /= 128;
    }
    out.push(u8::try_from(rest).expect("below 128"));
}

/// A header block of "literal header field without indexing, new name" entries (RFC 7541 §6.2.2).
fn header_block(headers: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(0x00);
        hpack_length(name.len(), &mut block);
        block.extend_from_slice(name.as_bytes());
        hpack_length(value.len(), &mut block);
        block.extend_from_slice(value.as_bytes());
    }
    block
}

async fn read_frame(stream: &mut UnixStream) -> std::io::Result<(u8, u8, u32, Vec<u8>)> {
    let mut header = [0u8; 9];
    stream.read_exact(&mut header).await?;
    let length = usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
    let stream_id = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff;
    let mut payload = vec![0u8; length];
    stream.read_exact(&mut payload).await?;
    Ok((header[3], header[4], stream_id, payload))
}

fn code_of(payload: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(payload[at..at + 4].try_into().expect("4 bytes"))
}

/// Calls `GetDevicePluginOptions` on the plugin socket with `authority` as the `:authority`.
async fn get_options_with_authority(socket: &Path, authority: &str) -> Outcome {
    let mut stream = UnixStream::connect(socket).await.expect("connect to the plugin socket");
    let headers = header_block(&[
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/v1beta1.DevicePlugin/GetDevicePluginOptions"),
        (":authority", authority),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]);
    let mut request = PREFACE.to_vec();
    request.extend(frame(SETTINGS, 0, 0, &[]));
    request.extend(frame(HEADERS, END_HEADERS, STREAM, &headers));
    // The gRPC message: not compressed, zero bytes long (an `Empty`).
    request.extend(frame(DATA, END_STREAM, STREAM, &[0, 0, 0, 0, 0]));
    stream.write_all(&request).await.expect("send the request");
    let mut message_bytes = 0;
    loop {
        let (kind, flags, stream_id, payload) = read_frame(&mut stream).await.expect("the server answers");
        match kind {
            SETTINGS if flags & ACK == 0 => stream.write_all(&frame(SETTINGS, ACK, 0, &[])).await.expect("ack"),
            PING if flags & ACK == 0 => stream.write_all(&frame(PING, ACK, 0, &payload)).await.expect("pong"),
            RST_STREAM if stream_id == STREAM => return Outcome::Reset(code_of(&payload, 0)),
            GOAWAY => return Outcome::GoAway(code_of(&payload, 4)),
            DATA if stream_id == STREAM => {
                message_bytes += payload.len();
                if flags & END_STREAM != 0 {
                    return Outcome::Answered { message_bytes };
                }
            }
            HEADERS if stream_id == STREAM && flags & END_STREAM != 0 => return Outcome::Answered { message_bytes },
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_socket_path_as_authority_is_reset_like_a_pre_1_26_kubelet_and_localhost_is_answered() {
    let harness = Harness::start(FakeHost::eight_910b(), |_| {}).await;
    harness.wait_devices(RESOURCE, "the plugin registered", |devices| !devices.is_empty()).await;
    let endpoint = harness
        .kubelet
        .registrations()
        .into_iter()
        .find(|registered| registered.request.resource_name == RESOURCE)
        .expect("registration")
        .request
        .endpoint;
    let socket = harness.dir.path().join(endpoint);
    let path = socket.to_str().expect("UTF-8 path").to_owned();
    let encoded = path.replace('/', "%2F");
    let call = |authority: String| {
        let socket = socket.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(10), get_options_with_authority(&socket, &authority))
                .await
                .unwrap_or_else(|_| panic!("no answer for :authority {authority}"))
        }
    };

    assert_eq!(call(path.clone()).await, Outcome::Reset(PROTOCOL_ERROR), ":authority {path}");
    assert_eq!(call(encoded.clone()).await, Outcome::Reset(PROTOCOL_ERROR), ":authority {encoded}");
    let answered = call("localhost".to_owned()).await;
    assert!(
        matches!(answered, Outcome::Answered { message_bytes } if message_bytes >= 5),
        "kubelet 1.26+ sends localhost and gets the options: {answered:?}"
    );
}
