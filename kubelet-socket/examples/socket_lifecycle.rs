//! What a kubelet plugin's socket lives through, in order: a stale file from a killed instance, a fresh bind over it,
//! the kubelet wiping the directory and another instance binding the same path, and a stopping plugin that must not
//! remove the newcomer's socket. Then `connect` failing fast where nothing listens.
//!
//! ```text
//! cargo run -p kubelet-socket --example socket_lifecycle
//! ```
//!
//! The example fails if any step does not behave as a plugin relies on.

use std::time::{Duration, Instant};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let directory = tempfile::tempdir()?;
    let path = directory.path().join("example.sock");

    // A plugin killed with SIGKILL leaves its socket file behind; a plain bind over it would fail (EADDRINUSE).
    drop(std::os::unix::net::UnixListener::bind(&path)?);
    println!("stale socket left at {}", path.display());
    let (first_listener, first) = kubelet_socket::bind_fresh(&path)?;
    println!("bound over it: {first:?}");

    // The kubelet restarts and wipes its plugin directory; a second instance binds the same path meanwhile.
    std::fs::remove_file(&path)?;
    let (second_listener, second) = kubelet_socket::bind_fresh(&path)?;
    println!("another instance bound the path: {second:?}");
    if first == second {
        return Err("a recreated socket has the identity of the old one".into());
    }

    // The first instance stops: removing "its" socket by path would take the second instance's away.
    drop(first_listener);
    kubelet_socket::remove_if_same(&path, first)?;
    if kubelet_socket::identity(&path) != Some(second) {
        return Err("the stopping instance removed the other instance's socket".into());
    }
    println!("the first instance stopped and left the second one's socket alone");
    drop(second_listener);
    kubelet_socket::remove_if_same(&path, second)?;
    if path.exists() {
        return Err("the second instance's own socket was not removed".into());
    }
    println!("the second instance stopped and removed its own socket");

    // Nothing listens any more: connecting fails within the deadline, naming the socket.
    let started = Instant::now();
    match kubelet_socket::connect(&path, Duration::from_secs(2)).await {
        Ok(_) => return Err("connected to a socket that does not exist".into()),
        Err(error) => println!("connect after {:?}: {error}", started.elapsed()),
    }
    Ok(())
}
