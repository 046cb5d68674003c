//! A daemon under measurement (`ascend-device-plugin`, `ascend-dra-driver`) as a child process of a `perf-*` helper:
//! its stderr kept for error messages, its resident memory read from `/proc`, stopped with SIGTERM (killed if that
//! fails, and on drop).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long a SIGTERM may take before the daemon is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A running daemon; killed on drop.
pub struct Daemon {
    name: String,
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// Starts `binary` with `args` and the environment variables `envs` (logging at `warn`).
    ///
    /// # Errors
    /// The spawn error, naming the binary.
    pub fn spawn<V: AsRef<OsStr>>(binary: &Path, args: &[String], envs: &[(&str, V)]) -> Result<Daemon> {
        let mut command = Command::new(binary);
        command.args(args).env("RUST_LOG", "warn").stdout(Stdio::null()).stderr(Stdio::piped());
        for (name, value) in envs {
            command.env(name, value);
        }
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
        let name = binary.file_name().map_or_else(|| binary.display().to_string(), |n| n.to_string_lossy().into());
        Ok(Daemon { name, child, log })
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

    /// SIGTERM, then waits; kills after ten seconds.
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
                    bail!("{} exited with {exit} after SIGTERM; log:\n{}", self.name, self.log());
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("{} did not exit within {STOP_GRACE:?} of SIGTERM", self.name)
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
///
/// # Errors
/// No loopback port can be bound.
pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    Ok(listener.local_addr()?.port())
}
