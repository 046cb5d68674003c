//! A plain TCP connection whose writes of cached scrape bodies go out with `sendfile(2)`.
//!
//! hyper writes a response as a vectored write of its own buffers (the status line and headers) followed by the body
//! [`Bytes`](bytes::Bytes) it was given, so a write of a cached body reaches this stream as a slice of that body.
//! [`SendfileStream`] looks each slice up in [`BodyFiles`]: a slice inside a body with a sealed file copy is sent
//! from the file at the same offset, with the slices before it sent first under `MSG_MORE` so that headers and body
//! leave in the same segments; any other write goes to the socket unchanged. The kernel then references the file's
//! pages instead of copying the body into the socket, as nginx's `sendfile on` does (`body_files.rs` has the
//! measurement). hyper keeps the protocol (parsing, keep-alive, pipelining, partial writes): a write here may, as
//! any write, take fewer bytes than offered, and hyper offers the rest again.
//!
//! TLS connections do not use it: their bytes are encrypted copies.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustix::net::{SendAncillaryBuffer, SendFlags};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

use crate::body_files::{BodyFiles, FileRange};

/// A TCP stream that sends registered bodies from their files.
#[derive(Debug)]
pub struct SendfileStream {
    stream: TcpStream,
    bodies: Arc<BodyFiles>,
}

impl SendfileStream {
    /// Wraps an accepted connection.
    pub fn new(stream: TcpStream, bodies: Arc<BodyFiles>) -> Self {
        Self { stream, bodies }
    }
}

/// What one write took: in all, and of that from a body's pages.
struct Sent {
    total: usize,
    from_file: usize,
}

/// Sends `prefix` (flagged as followed by more) and then `len` bytes of `range`'s body from its file. A failure after
/// part of it went out reports that part; the failure shows again on the next write.
fn send_prefix_then_body(
    socket: &TcpStream,
    prefix: &[IoSlice<'_>],
    range: &FileRange,
    len: usize,
) -> io::Result<Sent> {
    let prefix_len: usize = prefix.iter().map(|slice| slice.len()).sum();
    let mut total = 0;
    if prefix_len > 0 {
        let flags = SendFlags::MORE | SendFlags::NOSIGNAL;
        total = rustix::net::sendmsg(socket, prefix, &mut SendAncillaryBuffer::default(), flags)?;
        if total < prefix_len {
            return Ok(Sent { total, from_file: 0 });
        }
    }
    let mut offset = range.offset;
    match rustix::fs::sendfile(socket, range.file.as_ref(), Some(&mut offset), len) {
        Ok(from_file) => Ok(Sent { total: total + from_file, from_file }),
        Err(_) if total > 0 => Ok(Sent { total, from_file: 0 }),
        Err(error) => Err(error.into()),
    }
}

impl AsyncRead for SendfileStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for SendfileStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let found = bufs.iter().enumerate().find_map(|(index, slice)| this.bodies.file_of(slice).map(|r| (index, r)));
        let Some((index, range)) = found else {
            return Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        };
        let (prefix, len) = (&bufs[..index], bufs[index].len());
        loop {
            ready!(this.stream.poll_write_ready(cx))?;
            let attempt =
                this.stream.try_io(Interest::WRITABLE, || send_prefix_then_body(&this.stream, prefix, &range, len));
            match attempt {
                Ok(sent) => {
                    this.bodies.record_sent(sent.from_file);
                    return Poll::Ready(Ok(sent.total));
                }
                // Readiness was cleared: the next poll waits for the socket to drain.
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    async fn pair(bodies: Arc<BodyFiles>) -> (SendfileStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("address")).await.expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        (SendfileStream::new(server, bodies), client)
    }

    fn registered(bodies: &BodyFiles, len: usize) -> Bytes {
        let body = Bytes::from((0..len).map(|i| (i * 7 % 256) as u8).collect::<Vec<_>>());
        bodies.offer(&body);
        bodies.offer(&body);
        assert!(bodies.file_of(&body).is_some());
        body
    }

    /// Writes `slices` whole, as hyper does: offering what is left after each partial write.
    async fn write_all_vectored(stream: &mut SendfileStream, slices: &[&[u8]]) {
        let mut slices: Vec<&[u8]> = slices.to_vec();
        while !slices.is_empty() {
            let iovs: Vec<IoSlice<'_>> = slices.iter().map(|slice| IoSlice::new(slice)).collect();
            let mut n = stream.write_vectored(&iovs).await.expect("write");
            assert!(n > 0, "a write that sends nothing");
            while n > 0 {
                let take = n.min(slices[0].len());
                slices[0] = &slices[0][take..];
                n -= take;
                if slices[0].is_empty() {
                    slices.remove(0);
                }
            }
            while slices.first().is_some_and(|slice| slice.is_empty()) {
                slices.remove(0);
            }
        }
    }

    #[tokio::test]
    async fn headers_then_a_registered_body_arrive_whole_and_the_body_came_from_its_file() {
        let bodies = Arc::new(BodyFiles::new());
        // Larger than a loopback socket takes at once, so that writes are partial and wait for the reader.
        let body = registered(&bodies, 8 << 20);
        let (mut server, mut client) = pair(Arc::clone(&bodies)).await;
        let reader = tokio::spawn(async move {
            let mut received = Vec::new();
            client.read_to_end(&mut received).await.expect("read");
            received
        });
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 8388608\r\n\r\n".to_vec();
        let second_head = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        write_all_vectored(&mut server, &[&head, &body, &second_head, &body[100..]]).await;
        server.shutdown().await.expect("shutdown");
        drop(server);
        let received = reader.await.expect("reader");
        let expected = [&head[..], &body, &second_head, &body[100..]].concat();
        assert_eq!(received.len(), expected.len());
        assert!(received == expected, "the bytes differ from what was written");
        assert_eq!(bodies.sent_bytes(), (2 * body.len() - 100) as u64, "both bodies went out of the file");
    }

    #[tokio::test]
    async fn other_bytes_are_written_as_they_are() {
        let bodies = Arc::new(BodyFiles::new());
        let (mut server, mut client) = pair(Arc::clone(&bodies)).await;
        let unregistered = vec![3u8; 100_000];
        write_all_vectored(&mut server, &[b"head\r\n", &unregistered]).await;
        server.shutdown().await.expect("shutdown");
        let mut received = Vec::new();
        client.read_to_end(&mut received).await.expect("read");
        assert_eq!(received, [&b"head\r\n"[..], &unregistered].concat());
        assert_eq!(bodies.sent_bytes(), 0);
    }
}
