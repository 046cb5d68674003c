//! Unix sockets: binding over a stale file, telling a recreated socket from ours, and gRPC channels to a socket.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::{UnixListener, UnixStream};
use tonic::transport::{Channel, Endpoint, Uri};

use crate::error::{Error, Result};

/// Which file a path names: inode plus change time. A deleted file's inode number is often reused at once by the
/// next file created, so the inode alone cannot tell a recreated socket from the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    inode: u64,
    changed_seconds: i64,
    changed_nanoseconds: i64,
}

/// The identity of the file at `path`, or `None` when there is none.
pub fn identity(path: &Path) -> Option<FileIdentity> {
    std::fs::symlink_metadata(path).ok().map(|metadata| FileIdentity {
        inode: metadata.ino(),
        changed_seconds: metadata.ctime(),
        changed_nanoseconds: metadata.ctime_nsec(),
    })
}

/// Binds a listener at `path`, first removing a stale file a previous instance left behind (a unix socket cannot
/// be bound over an existing file), and returns it with the new socket's identity.
///
/// # Errors
/// [`Error::Io`] naming the path when the old file cannot be removed or the socket cannot be bound.
pub fn bind_fresh(path: &Path) -> Result<(UnixListener, FileIdentity)> {
    match std::fs::remove_file(path) {
        Ok(()) => tracing::debug!(path = %path.display(), "removed stale socket"),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(Error::io("removing stale socket", path, source)),
    }
    let listener = UnixListener::bind(path).map_err(|source| Error::io("binding socket", path, source))?;
    let identity = identity(path)
        .ok_or_else(|| Error::io("reading socket", path, std::io::Error::from(std::io::ErrorKind::NotFound)))?;
    Ok((listener, identity))
}

/// Removes the file at `path` if it is still the one with identity `expected`, so that a newer instance's socket
/// is left alone.
pub fn remove_if_same(path: &Path, expected: FileIdentity) {
    if identity(path) != Some(expected) {
        return;
    }
    if let Err(error) = std::fs::remove_file(path) {
        if error.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(path = %path.display(), %error, "cannot remove socket");
        }
    }
}

/// Opens a gRPC channel to the unix socket at `path`; fails if nothing listens there within `timeout`. Calls on
/// the channel time out after `timeout` too.
///
/// # Errors
/// [`Error::Grpc`] naming the socket and what failed.
pub async fn connect(path: &Path, timeout: Duration) -> Result<Channel> {
    let socket = path.to_owned();
    // tonic requires a URI but every connection goes to the socket.
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(timeout).timeout(timeout);
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        async move { UnixStream::connect(socket).await.map(TokioIo::new) }
    });
    match tokio::time::timeout(timeout, endpoint.connect_with_connector(connector)).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(error)) => Err(Error::grpc("connecting", path, error)),
        Err(_) => Err(Error::grpc("connecting", path, format!("no answer within {timeout:?}"))),
    }
}
