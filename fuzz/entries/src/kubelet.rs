//! What a kubelet plugin's registration socket reads from its peer: the HTTP/2 byte stream that
//! `kubelet_socket::AuthorityRewriter` follows frame by frame, walking the HPACK of each HEADERS frame to replace an
//! `:authority` that is not an authority.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use kubelet_socket::AuthorityRewriter;
use tokio::io::{AsyncRead, ReadBuf};

/// The HTTP/2 client preface's length (RFC 9113 §3.4).
const PREFACE_LENGTH: usize = 24;
const FRAME_HEADER_LENGTH: usize = 9;
const HEADERS: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
/// The largest HEADERS frame the rewriter holds back.
const LARGEST_REWRITTEN_FRAME: usize = 16_384;

/// A peer that hands out at most `step` bytes per read, always at once.
struct Peer<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl AsyncRead for Peer<'_> {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let count = self.step.min(buf.remaining()).min(self.bytes.len());
        let (now, later) = self.bytes.split_at(count);
        buf.put_slice(now);
        self.bytes = later;
        Poll::Ready(Ok(()))
    }
}

/// Everything the server reads through the rewriter from a peer sending `input` in reads of at most `inner_step`
/// bytes, into reads of `outer_step` bytes. The peer never blocks, so every poll completes.
///
/// # Panics
/// When a read makes no progress while input is left (the server would wait for ever), or fails.
fn read_through(input: &[u8], inner_step: usize, outer_step: usize) -> Vec<u8> {
    let mut rewriter = AuthorityRewriter::new(Peer { bytes: input, step: inner_step });
    let mut context = Context::from_waker(Waker::noop());
    let mut output = Vec::new();
    let mut scratch = vec![0u8; outer_step];
    loop {
        let mut buf = ReadBuf::new(&mut scratch);
        match Pin::new(&mut rewriter).poll_read(&mut context, &mut buf) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => panic!("an in-memory read failed: {error}"),
            Poll::Pending => panic!("the rewriter waits on a peer that never blocks"),
        }
        if buf.filled().is_empty() {
            assert!(rewriter.get_ref().bytes.is_empty(), "a read returned nothing with input left (end of stream)");
            return output;
        }
        output.extend_from_slice(buf.filled());
    }
}

/// A frame's 9-byte header and its payload.
type Frame<'a> = (&'a [u8], &'a [u8]);

/// The frames of an HTTP/2 client stream after the preface, then whatever trailing bytes do not make a whole frame.
fn frames(stream: &[u8]) -> (Vec<Frame<'_>>, &[u8]) {
    let mut rest = stream.get(PREFACE_LENGTH..).unwrap_or_default();
    let mut found = Vec::new();
    while rest.len() >= FRAME_HEADER_LENGTH {
        let length = usize::from(rest[0]) << 16 | usize::from(rest[1]) << 8 | usize::from(rest[2]);
        if rest.len() < FRAME_HEADER_LENGTH + length {
            break;
        }
        let (frame, after) = rest.split_at(FRAME_HEADER_LENGTH + length);
        found.push(frame.split_at(FRAME_HEADER_LENGTH));
        rest = after;
    }
    (found, rest)
}

/// A client's byte stream (the first byte picks the read sizes, the rest is the stream) through the rewriter.
///
/// # Panics
/// When the output depends on how the stream was cut into reads; when the preface, a frame other than a complete
/// HEADERS frame of at most 16 384 bytes, or a frame's type, flags or stream changes, or the framing itself (frames
/// keep their boundaries, only rewritten HEADERS frames their lengths); or when a second pass changes the output
/// again (every `:authority` left is one the rewriter accepts).
pub fn authority_rewrite(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else { return };
    let output = read_through(input, usize::MAX, 1 << 16);
    let inner_step = 1 + usize::from(selector & 0x0F);
    let outer_step = 1 + usize::from(selector >> 4) * 97;
    assert_eq!(read_through(input, inner_step, outer_step), output, "the output depends on the reads' sizes");
    assert_eq!(read_through(input, 1, 1), output, "one byte at a time");

    let preface = input.len().min(PREFACE_LENGTH);
    assert_eq!(output.get(..preface), Some(&input[..preface]), "the preface changed");
    let (input_frames, input_tail) = frames(input);
    let (output_frames, output_tail) = frames(&output);
    assert_eq!(input_frames.len(), output_frames.len(), "the number of frames changed");
    for ((header, payload), (new_header, new_payload)) in input_frames.iter().zip(&output_frames) {
        assert_eq!(header[3..], new_header[3..], "a frame's type, flags or stream changed");
        let rewritable =
            header[3] == HEADERS && header[4] & END_HEADERS != 0 && payload.len() <= LARGEST_REWRITTEN_FRAME;
        if !rewritable {
            assert_eq!(payload, new_payload, "a frame that is not a rewritable HEADERS frame changed");
        }
    }
    assert_eq!(input_tail, output_tail, "an incomplete last frame changed");

    assert_eq!(read_through(&output, usize::MAX, 1 << 16), output, "a second pass changed the output");
}
