//! The unix-socket plumbing every kubelet plugin needs, whatever gRPC API it serves (device plugin, DRA, plugin
//! registration).
//!
//! - [`bind_fresh`] binds a listener where a previous instance left its socket file behind (a unix socket cannot be
//!   bound over an existing file, and a plugin killed with SIGKILL never removes its own).
//! - [`identity`] and [`remove_if_same`] tell a socket recreated by someone else from one's own: the kubelet wipes
//!   its plugin directory when it restarts, and a second instance may already own the path, so a stopping plugin
//!   removes its socket only if the file is still the one it bound.
//! - [`connect`] opens a tonic [`Channel`] to a socket, failing within a deadline when nothing listens there.
//! - [`AuthorityRewriter`] wraps an accepted connection so that a tonic server accepts the socket path the
//!   kubelet's plugin watcher sends as HTTP/2 `:authority` (h2 refuses it): serve registration sockets through it.
//!
//! ```no_run
//! # async fn serve() -> Result<(), kubelet_socket::Error> {
//! use std::path::Path;
//! let path = Path::new("/var/lib/kubelet/plugins_registry/example.sock");
//! let (listener, mine) = kubelet_socket::bind_fresh(path)?;
//! // ... serve on `listener` until asked to stop ...
//! # drop(listener);
//! kubelet_socket::remove_if_same(path, mine)?;
//! # Ok(())
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod authority;

pub use authority::AuthorityRewriter;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::{UnixListener, UnixStream};
use tonic::transport::{Channel, Endpoint, Uri};

/// A socket operation that failed, naming the socket.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file-system operation on the socket failed.
    #[error("{operation} {path}: {source}")]
    Io {
        /// What was being done, for example `"binding socket"`.
        operation: &'static str,
        /// The socket.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Nothing answered on the socket, or the gRPC connection could not be set up.
    #[error("connecting via {path}: {detail}")]
    Connect {
        /// The socket.
        path: PathBuf,
        /// What failed, as tonic or the deadline said.
        detail: String,
    },
}

/// Which file a path names: inode plus change time. A deleted file's inode number is often reused at once by the
/// next file created, so the inode alone cannot tell a recreated socket from the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    inode: u64,
    changed_seconds: i64,
    changed_nanoseconds: i64,
}

/// The identity of the file at `path` (not following a symlink), or `None` when there is none.
pub fn identity(path: &Path) -> Option<FileIdentity> {
    std::fs::symlink_metadata(path).ok().map(|metadata| FileIdentity {
        inode: metadata.ino(),
        changed_seconds: metadata.ctime(),
        changed_nanoseconds: metadata.ctime_nsec(),
    })
}

/// Binds a listener at `path`, first removing a stale file a previous instance left behind, and returns it with the
/// new socket's identity. Needs a tokio runtime.
///
/// # Errors
/// [`Error::Io`] naming the path when the old file cannot be removed or the socket cannot be bound.
pub fn bind_fresh(path: &Path) -> Result<(UnixListener, FileIdentity), Error> {
    let failed = |operation, source| Error::Io { operation, path: path.to_owned(), source };
    match std::fs::remove_file(path) {
        Ok(()) => tracing::debug!(path = %path.display(), "removed stale socket"),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(failed("removing stale socket", source)),
    }
    let listener = UnixListener::bind(path).map_err(|source| failed("binding socket", source))?;
    let identity =
        identity(path).ok_or_else(|| failed("reading socket", std::io::Error::from(std::io::ErrorKind::NotFound)))?;
    Ok((listener, identity))
}

/// Removes the file at `path` if it is still the one with identity `expected`, so that a socket someone else created
/// there since is left alone. A file already gone is not an error.
///
/// # Errors
/// [`Error::Io`] when removal fails for another reason.
pub fn remove_if_same(path: &Path, expected: FileIdentity) -> Result<(), Error> {
    if identity(path) != Some(expected) {
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Io { operation: "removing socket", path: path.to_owned(), source }),
    }
}

/// Opens a gRPC channel to the unix socket at `path`; fails if nothing listens there within `timeout`. Calls on the
/// channel time out after `timeout` too.
///
/// The channel sends `localhost` as the HTTP/2 `:authority`, as kubelets since 1.26 do: a socket path there is not a
/// valid authority, and tonic's HTTP/2 layer refuses it.
///
/// # Errors
/// [`Error::Connect`] naming the socket and what failed.
pub async fn connect(path: &Path, timeout: Duration) -> Result<Channel, Error> {
    let socket = path.to_owned();
    // tonic requires a URI but every connection goes to the socket.
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(timeout).timeout(timeout);
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        async move { UnixStream::connect(socket).await.map(TokioIo::new) }
    });
    let failed = |detail| Error::Connect { path: path.to_owned(), detail };
    match tokio::time::timeout(timeout, endpoint.connect_with_connector(connector)).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(error)) => Err(failed(error.to_string())),
        Err(_) => Err(failed(format!("no answer within {timeout:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn binds_over_a_stale_file_and_removes_only_its_own_socket() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("plugin.sock");
        std::fs::write(&path, b"left by a killed instance").unwrap();

        let (listener, mine) = bind_fresh(&path).unwrap();
        assert_eq!(identity(&path), Some(mine));
        drop(listener);

        // Someone else recreated the socket: ours is gone, theirs must survive our shutdown.
        std::fs::remove_file(&path).unwrap();
        let (_theirs, theirs) = bind_fresh(&path).unwrap();
        assert_ne!(mine, theirs, "a recreated socket must not look like ours");
        remove_if_same(&path, mine).unwrap();
        assert!(path.exists(), "another instance's socket was removed");

        remove_if_same(&path, theirs).unwrap();
        assert!(!path.exists());
        remove_if_same(&path, theirs).expect("a socket already gone is not an error");
    }

    #[tokio::test]
    async fn binding_where_the_directory_is_missing_names_the_path() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("missing").join("plugin.sock");
        let error = bind_fresh(&path).unwrap_err();
        assert!(error.to_string().contains("binding socket") && error.to_string().contains("missing/plugin.sock"));
    }

    #[tokio::test]
    async fn connecting_where_nothing_listens_fails_within_the_deadline() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("nobody.sock");
        let error = connect(&path, Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(error, Error::Connect { .. }), "{error:?}");
        assert!(error.to_string().contains("nobody.sock"), "{error}");
    }
}
