//! Shared pieces of the tests that run a bundled daemon as a child process: the process with its log captured, and
//! a kubeconfig naming the fake API server.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A daemon with its stderr collected; killed if a test fails before it ends.
pub struct Daemon {
    /// The process.
    pub child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Daemon {
    /// Starts `program` with `args`, `RUST_LOG=info` and `envs`.
    pub fn spawn(program: &str, args: &[String], envs: &[(&str, &Path)]) -> Daemon {
        let mut command = Command::new(program);
        command.args(args).env("RUST_LOG", "info").stdout(Stdio::null()).stderr(Stdio::piped());
        for (name, value) in envs {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap_or_else(|error| panic!("{program} starts: {error}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().expect("stderr piped");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Ok(mut text) = sink.lock() {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
        });
        Daemon { child, stderr }
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        self.stderr.lock().map(|text| text.clone()).unwrap_or_default()
    }

    /// SIGTERM, and its exit status within `wait`.
    pub fn terminate(&mut self, wait: Duration) -> ExitStatus {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill runs");
        assert!(status.success(), "kill -TERM failed");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(started.elapsed() < wait, "daemon did not exit after SIGTERM; log:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, as a crash or an OOM kill would end it.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `<dir>/kubeconfig` naming the API server at `url` (no credentials: the fake allows every request).
pub fn kubeconfig(dir: &Path, url: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{url}\"}}}}]\n\
             users: [{{name: fake, user: {{}}}}]\ncontexts: [{{name: fake, context: {{cluster: fake, user: fake}}}}]\n\
             current-context: fake\n"
        ),
    )
    .expect("kubeconfig written");
    path
}
