//! Shared pieces of every test that runs a bundled daemon (device plugin, DRA driver, node labeller, doctor) as a
//! child process: the process with its log captured, and a kubeconfig naming the fake API server.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any awaited state may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(15);

/// A daemon process with its stderr collected; killed if a test fails before stopping it.
pub struct Daemon {
    /// The process.
    pub child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Daemon {
    /// Starts `program` with `args`, `RUST_LOG=info` and `envs`.
    pub fn spawn(program: &str, args: &[String], envs: &[(&str, &Path)]) -> Daemon {
        let mut command = Command::new(program);
        command.args(args).env("RUST_LOG", "info").stdout(Stdio::null());
        for (name, value) in envs {
            command.env(name, value);
        }
        Daemon::spawn_command(command)
    }

    /// Spawns a prepared command (its stderr is captured).
    pub fn spawn_command(mut command: Command) -> Daemon {
        command.stderr(Stdio::piped());
        let mut child = command.spawn().unwrap_or_else(|error| panic!("{command:?} starts: {error}"));
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

    /// Waits until the log contains `text` at least `count` times.
    pub fn wait_log(&self, text: &str, count: usize) {
        let started = Instant::now();
        while self.log().matches(text).count() < count {
            assert!(started.elapsed() < WAIT, "{text:?} not logged {count} times:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether it has not exited yet.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }

    /// Resident memory of the process in KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// SIGKILL, as the OOM killer or a node agent would: no shutdown path runs.
    pub fn kill_hard(&mut self) {
        self.child.kill().expect("SIGKILL delivered");
        self.child.wait().expect("reaped");
    }

    /// Sends a signal by name (`TERM`, `STOP`, `CONT`).
    pub fn signal(&self, name: &str) {
        let status =
            Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status().expect("kill runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// SIGTERM, and its exit status within [`WAIT`].
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("TERM");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(started.elapsed() < WAIT, "daemon did not exit after SIGTERM; log:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
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
