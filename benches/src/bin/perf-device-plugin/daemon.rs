//! The `ascend-device-plugin` process under test: started against a fake host and a fake kubelet directory,
//! stopped with SIGTERM (killed if that fails), its resident memory read from `/proc`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use dcmi_sim::fake_host::FakeHost;

/// How long a SIGTERM may take before the daemon is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A running daemon; killed on drop.
pub struct Daemon {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// Starts `binary` for `host`, registering with the kubelet in `plugin_dir`; `extra` are more flags.
    ///
    /// # Errors
    /// The spawn error, naming the binary.
    pub fn start(binary: &Path, host: &FakeHost, plugin_dir: &Path, overlay: &Path, extra: &[&str]) -> Result<Daemon> {
        let mut command = Command::new(binary);
        command
            .arg(format!("--plugin-dir={}", plugin_dir.display()))
            .arg(format!("--host-root={}", host.root.display()))
            .arg(format!("--dcmi-library={}", host.library.display()))
            .arg("--skip-library-ownership-check")
            .arg(format!("--listen=127.0.0.1:{}", free_port()?))
            .args(extra)
            .env("DCMI_SIM_CONFIG", &host.topology)
            .env("DCMI_SIM_OVERLAY", overlay)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().with_context(|| format!("cannot start {}", binary.display()))?;
        let log = Arc::new(Mutex::new(Vec::new()));
        if let Some(stderr) = child.stderr.take() {
            let sink = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Ok(mut lines) = sink.lock() {
                        lines.push(line);
                    }
                }
            });
        }
        Ok(Daemon { child, log })
    }

    /// Everything the daemon wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|lines| lines.join("\n")).unwrap_or_default()
    }

    /// Resident set size and its high-water mark in KiB (`VmRSS`, `VmHWM` of `/proc/<pid>/status`).
    ///
    /// # Errors
    /// The file cannot be read or lacks the fields (the process has exited).
    pub fn resident_kib(&self) -> Result<(u64, u64)> {
        resident_kib(self.child.id())
    }

    /// SIGTERM, then waits; kills after [`STOP_GRACE`].
    ///
    /// # Errors
    /// `kill` cannot be run, or the daemon did not exit cleanly.
    pub fn stop(mut self) -> Result<()> {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status()?;
        if !status.success() {
            bail!("kill -TERM {} failed", self.child.id());
        }
        let started = Instant::now();
        while started.elapsed() < STOP_GRACE {
            if let Some(exit) = self.child.try_wait()? {
                if !exit.success() {
                    bail!("ascend-device-plugin exited with {exit} after SIGTERM; log:\n{}", self.log());
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("ascend-device-plugin did not exit within {STOP_GRACE:?} of SIGTERM")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
///
/// # Errors
/// The status file cannot be read or lacks the fields.
pub fn resident_kib(pid: u32) -> Result<(u64, u64)> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let status = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .with_context(|| format!("{}: no {name} line", path.display()))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// A loopback port free at the time of the call, for the daemon's own HTTP endpoint.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    Ok(listener.local_addr()?.port())
}
