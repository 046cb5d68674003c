//! Reaching a pod's port from the host as an operator does, through `kubectl port-forward`: the API server and the
//! kubelet carry the stream and containerd connects inside the pod's network namespace, so the test itself only
//! talks to 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `kubectl port-forward` to one pod's port; stopped when dropped.
#[derive(Debug)]
pub struct PortForward {
    child: Child,
    /// The local port on 127.0.0.1.
    pub local_port: u16,
}

impl PortForward {
    /// Forwards `127.0.0.1:<a free port>` to `port` of `pod` in `namespace`.
    pub fn start(kubectl: &std::path::Path, namespace: &str, pod: &str, port: u16) -> PortForward {
        let mut child = Command::new(kubectl)
            .args([
                "port-forward",
                "--address",
                "127.0.0.1",
                "-n",
                namespace,
                &format!("pod/{pod}"),
                &format!(":{port}"),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kubectl port-forward");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        reader.read_line(&mut line).expect("port-forward's first line");
        // "Forwarding from 127.0.0.1:41235 -> 8082"
        let local_port = line
            .split_whitespace()
            .nth(2)
            .and_then(|address| address.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("kubectl port-forward said {line:?}"));
        // Keep reading its output so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        PortForward { child, local_port }
    }

    /// GETs `path` over HTTP/1.0 and returns the body; an error names the status or the failure.
    pub fn get(&self, path: &str) -> Result<String, String> {
        http_get(SocketAddr::from(([127, 0, 0, 1], self.local_port)), path)
    }
}

/// GETs `path` from `address` over HTTP/1.0 and returns the body; an error names the status or the failure.
pub(crate) fn http_get(address: SocketAddr, path: &str) -> Result<String, String> {
    let mut stream = TcpStream::connect(address).map_err(|error| format!("connect: {error}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|error| error.to_string())?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\nAccept: text/plain\r\n\r\n")
        .map_err(|error| format!("send: {error}"))?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(|error| format!("read: {error}"))?;
    let (head, body) = response.split_once("\r\n\r\n").ok_or_else(|| format!("no HTTP response: {response:?}"))?;
    if head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200") {
        Ok(body.to_owned())
    } else {
        Err(head.lines().next().unwrap_or_default().to_owned())
    }
}

impl Drop for PortForward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
