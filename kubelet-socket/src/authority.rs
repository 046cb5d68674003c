//! [`AuthorityRewriter`]: lets an HTTP/2 server built on hyperium/h2 (tonic) accept a request whose `:authority` is
//! a socket path, as the kubelet's plugin watcher sends it.
//!
//! The kubelet dials a plugin's registration socket with the bare socket path as gRPC target
//! (k8s.io/kubernetes `pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go`, `dial()`, up to at least
//! 1.34: `grpc.DialContext(ctx, unixSocketPath, ...)` with no `WithAuthority`), so grpc-go sends that path as the
//! HTTP/2 `:authority`. h2 parses `:authority` as a URI authority and answers a path there with `RST_STREAM
//! PROTOCOL_ERROR` (hyperium/h2#487; kubernetes/kubernetes#109081, #112597), and the registration never happens.
//!
//! The adapter sits on the server's side of the connection and rewrites the bytes the server reads: it follows the
//! HTTP/2 framing (the 24-byte client preface, then frames with a 9-byte header), holds back only HEADERS frames,
//! and in their header block walks the HPACK representations (RFC 7541 §6) without decoding them. A literal field
//! whose name is `:authority` (static-table index 1, or the literal name `:authority` sent raw) gets the raw value
//! `localhost` when its value is not a valid authority, or is Huffman-coded (a Huffman string is skipped by its
//! length, never decoded, so its content cannot be checked; on a unix socket the authority names nothing and
//! `localhost` is what the kubelet's other dials send). The length prefix and the frame length are re-encoded.
//! Every other frame, and everything the server writes, passes through untouched, and nothing is copied outside a
//! HEADERS frame.
//!
//! # Why the rest of the connection still decodes
//!
//! A literal with incremental indexing (grpc-go's encoding of a new `:authority`) adds the field to the dynamic
//! table, and later requests on the connection refer to it by index. After the rewrite the server's decoder holds
//! the entry `:authority: localhost` where the client's encoder holds the path: the same position, a smaller size
//! (an entry's size is its name and value lengths plus 32, RFC 7541 §4.1). Entries are numbered from the newest
//! (§2.3.3), and a table evicts its oldest entries only while its size exceeds the maximum (§4.4). Every entry in
//! the decoder's table is at most as large as the client's copy, so the decoder evicts no earlier than the client:
//! it holds every entry the client holds, in the same order, and maybe some older ones the client has already
//! evicted and can no longer name. So every index the client sends names the same field on both sides, the
//! rewritten one included, which now decodes to `localhost`. Size updates (§6.3) apply to both tables alike.
//!
//! # Limits
//!
//! - A HEADERS frame without END_HEADERS (its header block continued in CONTINUATION frames) passes unchanged: a
//!   representation may straddle the frames. grpc-go's header block for a call fits in one frame.
//! - A literal whose name is a dynamic-table entry, or the name `:authority` Huffman-coded, is not recognised:
//!   without decoding, the name is unknown. grpc-go names `:authority` by its static index, and sends an unchanged
//!   value as a fully indexed field.
//! - A HEADERS frame longer than 16 384 bytes (HTTP/2's initial maximum frame size, RFC 9113 §6.5.2) passes
//!   unchanged, so that a peer cannot make the adapter hold more than that per connection.
//! - Malformed framing or HPACK passes unchanged: the server reports its own error.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// The HTTP/2 client connection preface (RFC 9113 §3.4).
const PREFACE_LENGTH: usize = 24;
const FRAME_HEADER_LENGTH: usize = 9;
const HEADERS: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The largest HEADERS frame the adapter holds back to rewrite.
const LARGEST_REWRITTEN_FRAME: usize = 16_384;
/// The static-table index of `:authority` (RFC 7541 Appendix A).
const AUTHORITY_INDEX: usize = 1;
const AUTHORITY_NAME: &[u8] = b":authority";
/// What a rewritten `:authority` says.
const REPLACEMENT: &[u8] = b"localhost";
/// How much is read from the inner stream at once while a frame header or a HEADERS frame is being collected.
const SCRATCH_LENGTH: usize = 4096;

/// A server-side connection (any [`AsyncRead`] + [`AsyncWrite`], typically an accepted
/// [`UnixStream`](tokio::net::UnixStream)) whose HTTP/2 requests get `localhost` as `:authority` where the client
/// sent something that is not an authority, such as the socket path the kubelet's plugin watcher sends. Serve a
/// kubelet plugin's registration socket through it, or tonic refuses the kubelet's `GetInfo` call with
/// `RST_STREAM PROTOCOL_ERROR`.
///
/// Writes pass through; reads pass through except HEADERS frames, which are held until complete and rewritten.
/// What it does to the byte stream, why that is safe, and its limits are in the source's module documentation.
///
/// ```no_run
/// # async fn serve(listener: tokio::net::UnixListener) -> std::io::Result<()> {
/// let (stream, _) = listener.accept().await?;
/// let connection = kubelet_socket::AuthorityRewriter::new(stream);
/// // ... hand `connection` to the gRPC server ...
/// # drop(connection);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct AuthorityRewriter<S> {
    inner: S,
    frames: FrameRewriter,
    scratch: Box<[u8]>,
}

impl<S> AuthorityRewriter<S> {
    /// Wraps the server's side of a connection, from its first byte.
    pub fn new(inner: S) -> Self {
        AuthorityRewriter { inner, frames: FrameRewriter::new(), scratch: vec![0; SCRATCH_LENGTH].into_boxed_slice() }
    }

    /// The wrapped connection.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for AuthorityRewriter<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.frames.has_ready() {
                this.frames.take_ready(buf);
                return Poll::Ready(Ok(()));
            }
            if buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let budget = this.frames.pass_through_budget();
            if budget > 0 {
                // Preface or the payload of a frame that is not rewritten: straight into the caller's buffer.
                let mut direct = ReadBuf::new(buf.initialize_unfilled_to(budget.min(buf.remaining())));
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut direct))?;
                let read = direct.filled().len();
                buf.advance(read);
                this.frames.passed(read);
                return Poll::Ready(Ok(()));
            }
            let wanted = this.frames.wanted().min(this.scratch.len());
            let mut scratch = ReadBuf::new(&mut this.scratch[..wanted]);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut scratch))?;
            let read = scratch.filled().len();
            if read == 0 {
                // End of stream inside a frame header or a held HEADERS frame: hand over what was held, unchanged.
                this.frames.end_of_stream();
                if !this.frames.has_ready() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            this.frames.feed(&this.scratch[..read]);
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for AuthorityRewriter<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: Connected> Connected for AuthorityRewriter<S> {
    type ConnectInfo = S::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

/// Where in the client's byte stream the reader is.
#[derive(Debug)]
enum Stage {
    /// Passing this many more bytes unchanged: the preface, or the payload of a frame that is not rewritten.
    Passing(usize),
    /// Collecting a frame header.
    FrameHeader,
    /// Collecting a HEADERS frame's payload; the header is in `held`.
    HeadersPayload { length: usize },
}

/// The byte-stream state machine of [`AuthorityRewriter`], independent of I/O.
#[derive(Debug)]
struct FrameRewriter {
    stage: Stage,
    /// Bytes of the current frame header or HEADERS frame, not yet handed over.
    held: Vec<u8>,
    /// Bytes ready for the reader, from `ready_from` on.
    ready: Vec<u8>,
    ready_from: usize,
}

impl FrameRewriter {
    fn new() -> Self {
        FrameRewriter { stage: Stage::Passing(PREFACE_LENGTH), held: Vec::new(), ready: Vec::new(), ready_from: 0 }
    }

    fn has_ready(&self) -> bool {
        self.ready_from < self.ready.len()
    }

    fn take_ready(&mut self, buf: &mut ReadBuf<'_>) {
        let count = buf.remaining().min(self.ready.len() - self.ready_from);
        buf.put_slice(&self.ready[self.ready_from..self.ready_from + count]);
        self.ready_from += count;
        if self.ready_from == self.ready.len() {
            self.ready.clear();
            self.ready_from = 0;
        }
    }

    /// How many bytes may go from the connection to the reader unexamined (0 while collecting).
    fn pass_through_budget(&self) -> usize {
        match self.stage {
            Stage::Passing(count) if !self.has_ready() => count,
            _ => 0,
        }
    }

    /// `count` bytes (at most the budget) went to the reader unexamined.
    fn passed(&mut self, count: usize) {
        if let Stage::Passing(left) = self.stage {
            let left = left - count.min(left);
            self.stage = if left == 0 { Stage::FrameHeader } else { Stage::Passing(left) };
        }
    }

    /// How many bytes the collecting stage still needs (at least 1).
    fn wanted(&self) -> usize {
        match self.stage {
            Stage::Passing(count) => count.max(1),
            Stage::FrameHeader => FRAME_HEADER_LENGTH - self.held.len(),
            Stage::HeadersPayload { length } => FRAME_HEADER_LENGTH + length - self.held.len(),
        }
    }

    /// Examines bytes read from the connection.
    fn feed(&mut self, mut input: &[u8]) {
        while !input.is_empty() {
            match self.stage {
                Stage::Passing(left) => {
                    let count = left.min(input.len());
                    self.ready.extend_from_slice(&input[..count]);
                    input = &input[count..];
                    self.passed(count);
                }
                Stage::FrameHeader | Stage::HeadersPayload { .. } => {
                    let count = self.wanted().min(input.len());
                    self.held.extend_from_slice(&input[..count]);
                    input = &input[count..];
                    if self.wanted() == 0 || self.held.len() == FRAME_HEADER_LENGTH {
                        self.advance();
                    }
                }
            }
        }
    }

    /// Acts on a complete frame header or HEADERS frame in `held`.
    fn advance(&mut self) {
        match self.stage {
            Stage::FrameHeader if self.held.len() == FRAME_HEADER_LENGTH => {
                let length =
                    usize::from(self.held[0]) << 16 | usize::from(self.held[1]) << 8 | usize::from(self.held[2]);
                let frame_type = self.held[3];
                if frame_type == HEADERS && length <= LARGEST_REWRITTEN_FRAME {
                    self.stage = Stage::HeadersPayload { length };
                    if length == 0 {
                        self.release();
                    }
                } else {
                    self.ready.append(&mut self.held);
                    self.stage = if length == 0 { Stage::FrameHeader } else { Stage::Passing(length) };
                }
            }
            Stage::HeadersPayload { length } if self.held.len() == FRAME_HEADER_LENGTH + length => self.release(),
            _ => {}
        }
    }

    /// Hands over the complete HEADERS frame in `held`, rewritten if needed.
    fn release(&mut self) {
        match rewrite_headers_frame(&self.held) {
            Some(rewritten) => self.ready.extend_from_slice(&rewritten),
            None => self.ready.extend_from_slice(&self.held),
        }
        self.held.clear();
        self.stage = Stage::FrameHeader;
    }

    /// The connection ended: whatever is held goes to the reader unchanged.
    fn end_of_stream(&mut self) {
        self.ready.append(&mut self.held);
        self.stage = Stage::Passing(0);
    }
}

/// The HEADERS frame `frame` (header and payload) with every rewritten `:authority`, or `None` to pass it unchanged.
fn rewrite_headers_frame(frame: &[u8]) -> Option<Vec<u8>> {
    let flags = frame[4];
    if flags & END_HEADERS == 0 {
        return None;
    }
    let payload = &frame[FRAME_HEADER_LENGTH..];
    let (padding, mut block_start) = if flags & PADDED != 0 { (usize::from(*payload.first()?), 1) } else { (0, 0) };
    if flags & PRIORITY != 0 {
        block_start += 5;
    }
    let block_end = payload.len().checked_sub(padding)?;
    if block_start > block_end {
        return None;
    }
    let block = &payload[block_start..block_end];
    let replacements = authority_values_to_replace(block)?;
    if replacements.is_empty() {
        return None;
    }
    let mut rewritten = Vec::with_capacity(frame.len() + replacements.len() * (REPLACEMENT.len() + 1));
    rewritten.extend_from_slice(&frame[..FRAME_HEADER_LENGTH + block_start]);
    let mut copied = 0;
    for value in replacements {
        rewritten.extend_from_slice(&block[copied..value.start]);
        // A raw string: H bit clear, a 7-bit length prefix (9 fits).
        rewritten.push(REPLACEMENT.len() as u8);
        rewritten.extend_from_slice(REPLACEMENT);
        copied = value.end;
    }
    rewritten.extend_from_slice(&block[copied..]);
    rewritten.extend_from_slice(&payload[block_end..]);
    let length = rewritten.len() - FRAME_HEADER_LENGTH;
    if length >= 1 << 24 {
        return None;
    }
    rewritten[..3].copy_from_slice(&(length as u32).to_be_bytes()[1..]);
    Some(rewritten)
}

/// The byte ranges (string prefix included) of the `:authority` values in an HPACK header block that must be
/// replaced, in order; `None` when the block is malformed.
fn authority_values_to_replace(block: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < block.len() {
        let first = block[at];
        let name_index_prefix = if first & 0x80 != 0 {
            // Indexed field (§6.1).
            at = skip_integer(block, at, 7)?;
            continue;
        } else if first & 0xC0 == 0x40 {
            // Literal with incremental indexing (§6.2.1).
            6
        } else if first & 0xE0 == 0x20 {
            // Dynamic table size update (§6.3).
            at = skip_integer(block, at, 5)?;
            continue;
        } else {
            // Literal without indexing (0000xxxx, §6.2.2) or never indexed (0001xxxx, §6.2.3).
            4
        };
        let (name_index, after_index) = read_integer(block, at, name_index_prefix)?;
        at = after_index;
        let is_authority = if name_index == 0 {
            let name = read_string(block, at)?;
            at = name.end;
            !name.huffman && &block[name.content.clone()] == AUTHORITY_NAME
        } else {
            name_index == AUTHORITY_INDEX
        };
        let value = read_string(block, at)?;
        if is_authority && (value.huffman || !is_valid_authority(&block[value.content.clone()])) {
            found.push(at..value.end);
        }
        at = value.end;
    }
    Some(found)
}

/// Whether h2 accepts `value` as `:authority`: it parses it as an `http::uri::Authority`, which is what builds here.
fn is_valid_authority(value: &[u8]) -> bool {
    tonic::transport::Uri::builder().scheme("http").authority(value).path_and_query("/").build().is_ok()
}

/// A string literal (§5.2) in a header block.
struct HpackString {
    huffman: bool,
    content: std::ops::Range<usize>,
    /// Where the next representation starts.
    end: usize,
}

fn read_string(block: &[u8], at: usize) -> Option<HpackString> {
    let huffman = block.get(at)? & 0x80 != 0;
    let (length, start) = read_integer(block, at, 7)?;
    let end = start.checked_add(length).filter(|end| *end <= block.len())?;
    Some(HpackString { huffman, content: start..end, end })
}

fn skip_integer(block: &[u8], at: usize, prefix_bits: u32) -> Option<usize> {
    read_integer(block, at, prefix_bits).map(|(_, next)| next)
}

/// An integer with an N-bit prefix (§5.1) starting at `block[at]`, and the offset after it.
fn read_integer(block: &[u8], at: usize, prefix_bits: u32) -> Option<(usize, usize)> {
    let mask = (1u8 << prefix_bits) - 1;
    let mut value = usize::from(block.get(at)? & mask);
    let mut next = at + 1;
    if value < usize::from(mask) {
        return Some((value, next));
    }
    let mut shift = 0u32;
    loop {
        let byte = *block.get(next)?;
        next += 1;
        // Header blocks are bounded by the frame size: more than 28 bits of continuation is malformed.
        if shift > 21 {
            return None;
        }
        value += usize::from(byte & 0x7F) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Some((value, next));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    const PATH: &[u8] = b"/var/lib/kubelet/plugins_registry/x-reg.sock";

    fn frame(frame_type: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        bytes.extend_from_slice(&[frame_type, flags]);
        bytes.extend_from_slice(&stream.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    /// `:authority` as a literal with incremental indexing of static index 1, raw value.
    fn authority_with_indexing(value: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0x40 | 1, value.len() as u8];
        bytes.extend_from_slice(value);
        bytes
    }

    /// A typical rest of a gRPC request block: `:method POST` (indexed 3), `:scheme http` (indexed 6), and a
    /// literal without indexing with a literal name.
    fn other_fields() -> Vec<u8> {
        let mut bytes = vec![0x83, 0x86, 0x00, 2, b't', b'e', 8];
        bytes.extend_from_slice(b"trailers");
        bytes
    }

    /// Reads everything the adapter produces from `input`, one byte per inner read when `trickle`.
    async fn through_adapter(input: Vec<u8>, trickle: bool) -> Vec<u8> {
        let mut adapter =
            AuthorityRewriter::new(Trickle { bytes: input, at: 0, step: if trickle { 1 } else { 1 << 20 } });
        let mut output = Vec::new();
        adapter.read_to_end(&mut output).await.unwrap();
        output
    }

    /// An in-memory connection that hands out at most `step` bytes per read.
    struct Trickle {
        bytes: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl AsyncRead for Trickle {
        fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            let count = self.step.min(buf.remaining()).min(self.bytes.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.bytes[at..at + count]);
            self.at += count;
            Poll::Ready(Ok(()))
        }
    }

    fn connection(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = PREFACE.to_vec();
        for frame in frames {
            bytes.extend_from_slice(frame);
        }
        bytes
    }

    fn request_block(authority: &[u8]) -> Vec<u8> {
        let mut block = vec![0x83];
        block.extend_from_slice(&authority_with_indexing(authority));
        block.extend_from_slice(&other_fields());
        block
    }

    #[tokio::test]
    async fn a_path_authority_becomes_localhost_and_the_frame_length_follows() {
        let settings = frame(0x4, 0, 0, &[]);
        let input = connection(&[settings.clone(), frame(HEADERS, END_HEADERS, 1, &request_block(PATH))]);
        let expected = connection(&[settings, frame(HEADERS, END_HEADERS, 1, &request_block(b"localhost"))]);
        assert_eq!(through_adapter(input.clone(), false).await, expected);
        assert_eq!(through_adapter(input, true).await, expected, "one byte per read");
    }

    #[tokio::test]
    async fn a_huffman_coded_authority_is_replaced_by_a_raw_localhost() {
        // Any bytes with the H bit: they are skipped by length, never decoded.
        let huffman = [0xAA; 7];
        let mut block = vec![0x41, 0x80 | huffman.len() as u8];
        block.extend_from_slice(&huffman);
        block.extend_from_slice(&other_fields());
        let mut expected = authority_with_indexing(b"localhost");
        expected.extend_from_slice(&other_fields());
        let output = through_adapter(connection(&[frame(HEADERS, END_HEADERS, 1, &block)]), false).await;
        assert_eq!(output, connection(&[frame(HEADERS, END_HEADERS, 1, &expected)]));
    }

    #[tokio::test]
    async fn padding_and_priority_are_kept_around_the_rewritten_block() {
        let priority = [0x80, 0, 0, 0, 16];
        let padding = [0u8; 3];
        let payload = |authority: &[u8]| {
            let mut payload = vec![padding.len() as u8];
            payload.extend_from_slice(&priority);
            payload.extend_from_slice(&request_block(authority));
            payload.extend_from_slice(&padding);
            payload
        };
        let flags = END_HEADERS | PADDED | PRIORITY | 0x1;
        let input = connection(&[frame(HEADERS, flags, 3, &payload(PATH))]);
        let expected = connection(&[frame(HEADERS, flags, 3, &payload(b"localhost"))]);
        assert_eq!(through_adapter(input.clone(), false).await, expected);
        assert_eq!(through_adapter(input, true).await, expected, "one byte per read");
    }

    #[tokio::test]
    async fn literal_names_never_indexed_and_long_lengths_are_recognised() {
        // `:authority` as a never-indexed literal with a literal name, and a value of 200 bytes (length 127 + 73).
        let long_path = [b'/'; 200];
        let block = |value: &[u8]| {
            let mut block = vec![0x10, AUTHORITY_NAME.len() as u8];
            block.extend_from_slice(AUTHORITY_NAME);
            if value.len() >= 127 {
                block.extend_from_slice(&[0x7F, (value.len() - 127) as u8]);
            } else {
                block.push(value.len() as u8);
            }
            block.extend_from_slice(value);
            block.extend_from_slice(&other_fields());
            block
        };
        let input = connection(&[frame(HEADERS, END_HEADERS, 1, &block(&long_path))]);
        let output = through_adapter(input, true).await;
        assert_eq!(output, connection(&[frame(HEADERS, END_HEADERS, 1, &block(b"localhost"))]));
    }

    #[tokio::test]
    async fn a_valid_authority_and_other_frames_pass_unchanged() {
        let mut data = vec![0, 0, 0, 0, 5];
        data.extend_from_slice(b"\x0a\x03/x/");
        let input = connection(&[
            frame(0x4, 0, 0, &[0, 4, 0, 0, 0xFF, 0xFF]),
            frame(HEADERS, END_HEADERS, 1, &request_block(b"localhost:8080")),
            // A DATA frame whose payload looks like a header block with a path authority.
            frame(0x0, 0x1, 1, &request_block(PATH)),
            frame(0x8, 0, 0, &[0, 1, 0, 0]),
            frame(0x0, 0x1, 1, &data),
            frame(0x3, 0, 1, &[0, 0, 0, 8]),
        ]);
        assert_eq!(through_adapter(input.clone(), false).await, input);
        assert_eq!(through_adapter(input.clone(), true).await, input, "one byte per read");
    }

    #[tokio::test]
    async fn a_header_block_continued_in_continuation_frames_passes_unchanged() {
        let block = request_block(PATH);
        let (first, rest) = block.split_at(4);
        let input = connection(&[frame(HEADERS, 0x1, 1, first), frame(0x9, END_HEADERS, 1, rest)]);
        assert_eq!(through_adapter(input.clone(), true).await, input);
    }

    #[tokio::test]
    async fn a_connection_ending_inside_a_headers_frame_hands_over_what_came() {
        let mut input = connection(&[frame(HEADERS, END_HEADERS, 1, &request_block(PATH))]);
        input.truncate(input.len() - 5);
        assert_eq!(through_adapter(input.clone(), true).await, input);
        let mut header_only = PREFACE.to_vec();
        header_only.extend_from_slice(&[0, 0]);
        assert_eq!(through_adapter(header_only.clone(), false).await, header_only);
    }

    #[test]
    fn a_malformed_block_is_left_alone() {
        // The value's length runs past the block.
        let mut block = vec![0x41, 40];
        block.extend_from_slice(PATH);
        block.truncate(20);
        assert_eq!(rewrite_headers_frame(&frame(HEADERS, END_HEADERS, 1, &block)), None);
        // Padding longer than the payload.
        assert_eq!(rewrite_headers_frame(&frame(HEADERS, END_HEADERS | PADDED, 1, &[200, 0x83])), None);
        // An integer that never ends.
        assert_eq!(rewrite_headers_frame(&frame(HEADERS, END_HEADERS, 1, &[0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])), None);
    }

    #[test]
    fn authorities_are_judged_as_h2_judges_them() {
        for valid in [&b"localhost"[..], b"localhost:443", b"[::1]:8080", b"user@host"] {
            assert!(is_valid_authority(valid), "{}", String::from_utf8_lossy(valid));
        }
        for invalid in [PATH, b"", b"a b", b"host?x"] {
            assert!(!is_valid_authority(invalid), "{}", String::from_utf8_lossy(invalid));
        }
    }
}
