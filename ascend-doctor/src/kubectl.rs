//! Running `kubectl` for the checks that need the cluster's view. When it is not on `PATH` those checks report SKIP
//! with the reason; nothing else in the doctor needs it.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The most output read from one `kubectl` call.
const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;

/// A `kubectl` binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubectl {
    /// The executable.
    pub path: PathBuf,
    /// How long one call may take before it is killed.
    pub timeout: Duration,
}

/// Finds an executable called `name` in the directories of `path_variable` (a `PATH` value).
pub fn find_in_path(name: &str, path_variable: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let directories = path_variable?;
    std::env::split_paths(directories).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    })
}

impl Kubectl {
    /// `kubectl` from this process's `PATH`, if there is one.
    pub fn from_path(timeout: Duration) -> Option<Kubectl> {
        let path = find_in_path("kubectl", std::env::var_os("PATH").as_deref())?;
        Some(Kubectl { path, timeout })
    }

    /// Runs `kubectl <args>` and parses its standard output as JSON.
    ///
    /// # Errors
    /// A message naming the command line: it could not start, did not finish within the timeout, exited non-zero
    /// (with its standard error), or printed something that is not JSON.
    pub fn json(&self, args: &[&str]) -> Result<serde_json::Value, String> {
        let output = self.run(args)?;
        serde_json::from_str(&output).map_err(|error| format!("{}: output is not JSON: {error}", self.describe(args)))
    }

    fn describe(&self, args: &[&str]) -> String {
        format!("`kubectl {}`", args.join(" "))
    }

    fn run(&self, args: &[&str]) -> Result<String, String> {
        let mut child = Command::new(&self.path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| format!("{}: cannot run {}: {error}", self.describe(args), self.path.display()))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        // Read both pipes on their own threads so a chatty kubectl cannot fill a pipe and stall.
        let out_reader = thread::spawn(move || read_all(stdout));
        let err_reader = thread::spawn(move || read_all(stderr));
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{}: no answer within {:?}", self.describe(args), self.timeout));
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(error) => return Err(format!("{}: {error}", self.describe(args))),
            }
        };
        let stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        if !status.success() {
            // kubectl repeats its connection errors; the last line is the summary.
            let last = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
            return Err(format!("{} failed ({status}): {last}", self.describe(args)));
        }
        Ok(stdout)
    }
}

fn read_all(pipe: Option<impl Read>) -> String {
    let mut text = String::new();
    if let Some(pipe) = pipe {
        let _ = pipe.take(MAX_OUTPUT_BYTES).read_to_string(&mut text);
    }
    text
}

/// Why kubectl-based checks are skipped: it is not on `PATH`.
pub fn missing_reason() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    format!("kubectl is not on PATH ({path})")
}
