//! gRPC channels over unix sockets (the kubelet's and the plugin's own), and socket identity checks.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::error::{Error, Result};

/// Opens a gRPC channel to the unix socket at `path`; fails if nothing listens there within `timeout`.
///
/// # Errors
/// [`Error::Grpc`] naming the socket and what failed.
pub async fn connect(path: &Path, timeout: Duration) -> Result<Channel> {
    let socket = path.to_owned();
    // The URI is required by tonic but unused: every connection goes to the socket.
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(timeout).timeout(timeout);
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        async move { UnixStream::connect(socket).await.map(TokioIo::new) }
    });
    let connecting = endpoint.connect_with_connector(connector);
    match tokio::time::timeout(timeout, connecting).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(error)) => Err(grpc_error("connecting", path, error.to_string())),
        Err(_) => Err(grpc_error("connecting", path, format!("no answer within {timeout:?}"))),
    }
}

/// Which file a path names: inode plus change time. A deleted file's inode number is often reused at once by the
/// next file created, so the inode alone cannot tell a recreated socket from the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Removes the file at `path` if it is still the one with identity `expected` (so a newer socket is left alone).
///
/// # Errors
/// [`Error::Io`] when removal fails for another reason than the file being gone already.
pub fn remove_if_same(path: &Path, expected: FileIdentity) -> Result<()> {
    if identity(path) != Some(expected) {
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Io { operation: "removing socket", path: path.to_owned(), source }),
    }
}

pub(crate) fn grpc_error(operation: impl Into<String>, path: &Path, detail: String) -> Error {
    Error::Grpc { operation: operation.into(), path: PathBuf::from(path), detail }
}
