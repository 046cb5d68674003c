//! Running `hccn_tool`: one child process per query, with a deadline, a limit on concurrent children shared by every
//! clone of the runner, one query at a time per device, and a bound on what the child may write.
//!
//! Huawei's exporter runs the tool the same way, one process per chip and query, with stdout and stderr capped at
//! 1 MiB (Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go, getInfoFromHccnTool), but with
//! no deadline: a tool that hangs there stalls the collector for good.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::{Mutex as AsyncMutex, Semaphore};

use crate::bandwidth::{parse_bandwidth, parse_ub_bandwidth, Bandwidth};
use crate::error::{Error, ParseError};
use crate::link::{parse_link_state, parse_link_up_count, parse_ub_link_state, LinkState};
use crate::optical::{parse_optical, OpticalInfo};
use crate::speed::{parse_speed_mbps, parse_ub_speed};
use crate::stat::{parse_stat, parse_ub_stat, StatCounters};
use crate::ub_optical::{parse_ub_optical, UbOpticalInfo};
use crate::ub_port::{parse_ub_ports, UbPortInfo};

/// Where the driver installs the tool.
pub const DEFAULT_PATH: &str = "/usr/local/Ascend/driver/tools/hccn_tool";

/// How long one call may take by default before the child is killed.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);

/// How many children run at once by default.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// The most standard output one call accepts by default (Huawei's exporter's limit).
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

/// How much standard error is kept to report the first line of a failure.
const STDERR_KEPT: usize = 4096;

/// The sampling window of `-g -bandwidth` in ms, as Huawei's exporter asks for it (GetNPUInterfaceTrafficNpu).
const UB_BANDWIDTH_WINDOW_MS: u32 = 100;

/// One UB port of an Ascend950 chip, as `-i <logic_id> -u <udie> -p <port>` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UbPort {
    /// The chip's logic id.
    pub logic_id: u32,
    /// The die of the chip (`UdieID` of `-g -dev_info`).
    pub udie: u32,
    /// The port on the die (`PortID`).
    pub port: u32,
}

/// Settings of an [`HccnTool`]; start from [`HccnTool::builder`].
#[derive(Debug, Clone)]
pub struct HccnToolBuilder {
    path: PathBuf,
    deadline: Duration,
    concurrency: usize,
    output_limit: usize,
}

impl HccnToolBuilder {
    /// The tool to run (default [`DEFAULT_PATH`]).
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = path.into();
        self
    }

    /// How long one call may take, from the start of the child to its exit (default [`DEFAULT_DEADLINE`]); the
    /// time a call waits for its turn (its device's previous query, the concurrency limit) does not count.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How many children may run at once, over every clone of the runner (default [`DEFAULT_CONCURRENCY`]; at
    /// least 1).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// The most standard output one call accepts, in bytes (default [`DEFAULT_OUTPUT_LIMIT`]).
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// The runner.
    pub fn build(self) -> HccnTool {
        HccnTool {
            inner: Arc::new(Inner {
                permits: Semaphore::new(self.concurrency),
                devices: Mutex::default(),
                path: self.path,
                deadline: self.deadline,
                output_limit: self.output_limit,
            }),
        }
    }
}

/// Runs `hccn_tool` and parses its answers. Cheap to clone; clones share the concurrency limit.
///
/// The queries about one device (a chip's port, or an Ascend950 chip's ports) run one at a time, each taking a place
/// under the concurrency limit only once its turn comes: a device whose tool hangs holds one place until the
/// deadline, never all of them, and the other devices' queries go on. (The network group's four queries of a training
/// chip, started together, took all four default places while one chip's tool hung: every other chip's queries waited
/// for the deadline.) When a query times out, those that were waiting for their turn on the same device end at once
/// with [`Error::DeviceTimedOut`] instead of each waiting for a deadline of its own.
///
/// Methods taking a `phy_id` are the training cards' queries (910, 910B, A3: one RoCE port per chip, named by its
/// physical id as Huawei's exporter does); methods taking a [`UbPort`] are Ascend950's. The child inherits the
/// caller's environment.
///
/// ```no_run
/// # async fn example() -> Result<(), ascend_hccn::Error> {
/// let tool = ascend_hccn::HccnTool::builder().deadline(std::time::Duration::from_secs(2)).build();
/// let link = tool.link_state(0).await?;
/// let counters = tool.stat(0).await?;
/// println!("{link}, {:?} RoCE packets received", counters.get("roce_rx_all_pkt_num"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HccnTool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    permits: Semaphore,
    /// The turns of each device a query has named.
    devices: Mutex<HashMap<u32, Arc<DeviceTurns>>>,
    path: PathBuf,
    deadline: Duration,
    output_limit: usize,
}

impl Default for HccnTool {
    fn default() -> Self {
        HccnTool::builder().build()
    }
}

impl HccnTool {
    /// Settings with their defaults.
    pub fn builder() -> HccnToolBuilder {
        HccnToolBuilder {
            path: PathBuf::from(DEFAULT_PATH),
            deadline: DEFAULT_DEADLINE,
            concurrency: DEFAULT_CONCURRENCY,
            output_limit: DEFAULT_OUTPUT_LIMIT,
        }
    }

    /// The tool this runner starts.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The deadline of each call.
    pub fn deadline(&self) -> Duration {
        self.inner.deadline
    }

    /// Runs the tool with `args` and returns its standard output (invalid UTF-8 replaced). Unlike the typed queries,
    /// it names no device, so it waits only for the concurrency limit.
    ///
    /// # Errors
    /// [`Error::Spawn`], [`Error::Io`], [`Error::TimedOut`] (the child was killed), [`Error::OutputTooLarge`] (the
    /// child was killed), [`Error::Failed`] for a failure status, with the first line of its standard error.
    pub async fn run<S: AsRef<str>>(&self, args: &[S]) -> Result<String, Error> {
        self.run_child(args).await
    }

    /// The turns of queries about `device`.
    fn device_turns(&self, device: u32) -> Arc<DeviceTurns> {
        let mut devices = self.inner.devices.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(devices.entry(device).or_default())
    }

    async fn run_child<S: AsRef<str>>(&self, args: &[S]) -> Result<String, Error> {
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let command = format!("{} {}", self.inner.path.display(), args.join(" "));
        // The semaphore lives as long as the runner and is never closed.
        let _permit = self.inner.permits.acquire().await.map_err(|_| Error::Io {
            command: command.clone(),
            source: std::io::Error::other("the runner's concurrency limit was closed"),
        })?;
        let mut child = Command::new(&self.inner.path)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| Error::Spawn { command: command.clone(), source })?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(Error::Io { command, source: std::io::Error::other("the child's pipes are missing") });
        };
        let limit = self.inner.output_limit;
        let finished = async {
            let (stdout, stderr) = tokio::join!(
                read_at_most(stdout, limit + 1, AtLimit::Stop),
                read_at_most(stderr, STDERR_KEPT, AtLimit::Drain)
            );
            let io = |source| Error::Io { command: command.clone(), source };
            let stdout = stdout.map_err(io)?;
            if stdout.len() > limit {
                return Err(Error::OutputTooLarge { command: command.clone(), limit });
            }
            let status = child.wait().await.map_err(io)?;
            if !status.success() {
                let stderr = stderr.unwrap_or_default();
                let first = String::from_utf8_lossy(&stderr);
                let first = first.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
                return Err(Error::Failed { command: command.clone(), status, stderr: first.to_owned() });
            }
            Ok(String::from_utf8_lossy(&stdout).into_owned())
        };
        // On any early return the child is dropped, which kills it (kill_on_drop); tokio reaps it.
        match tokio::time::timeout(self.inner.deadline, finished).await {
            Ok(result) => result,
            Err(_) => Err(Error::TimedOut { command, deadline: self.inner.deadline }),
        }
    }

    /// Runs a query about `device` once the device's previous query has ended, and parses its answer.
    async fn query<T>(
        &self,
        device: u32,
        args: &[String],
        parse: fn(&str) -> Result<T, ParseError>,
    ) -> Result<T, Error> {
        let turns = self.device_turns(device);
        let timeouts_before = turns.timeouts.load(Ordering::Acquire);
        let _turn = turns.turn.lock().await;
        if turns.timeouts.load(Ordering::Acquire) != timeouts_before {
            return Err(Error::DeviceTimedOut { command: format!("{} {}", self.inner.path.display(), args.join(" ")) });
        }
        let output = self.run_child(args).await.inspect_err(|error| {
            if matches!(error, Error::TimedOut { .. }) {
                turns.timeouts.fetch_add(1, Ordering::AcqRel);
            }
        })?;
        parse(&output).map_err(|source| Error::Parse {
            command: format!("{} {}", self.inner.path.display(), args.join(" ")),
            source,
        })
    }

    /// The link state of a training card's port (`-i <phy_id> -link -g`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn link_state(&self, phy_id: u32) -> Result<LinkState, Error> {
        self.query(phy_id, &chip_args(phy_id, "-link"), parse_link_state).await
    }

    /// The link speed in Mb/s (`-i <phy_id> -speed -g`); `None` when the tool says it is unknown.
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn link_speed_mbps(&self, phy_id: u32) -> Result<Option<u64>, Error> {
        self.query(phy_id, &chip_args(phy_id, "-speed"), parse_speed_mbps).await
    }

    /// How often the link came up (`-i <phy_id> -link_stat -g`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn link_up_count(&self, phy_id: u32) -> Result<u64, Error> {
        self.query(phy_id, &chip_args(phy_id, "-link_stat"), parse_link_up_count).await
    }

    /// The MAC and RoCE counters (`-i <phy_id> -stat -g`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn stat(&self, phy_id: u32) -> Result<StatCounters, Error> {
        self.query(phy_id, &chip_args(phy_id, "-stat"), parse_stat).await
    }

    /// The optical module's readings (`-i <phy_id> -optical -g`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn optical(&self, phy_id: u32) -> Result<OpticalInfo, Error> {
        self.query(phy_id, &chip_args(phy_id, "-optical"), parse_optical).await
    }

    /// The port's bandwidth (`-i <phy_id> -bandwidth -g`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn bandwidth(&self, phy_id: u32) -> Result<Bandwidth, Error> {
        self.query(phy_id, &chip_args(phy_id, "-bandwidth"), parse_bandwidth).await
    }

    /// The ports of an Ascend950 chip (`-g -dev_info -i <logic_id>`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_ports(&self, logic_id: u32) -> Result<Vec<UbPortInfo>, Error> {
        let args = ["-g", "-dev_info", "-i"].map(str::to_owned).into_iter().chain([logic_id.to_string()]);
        self.query(logic_id, &args.collect::<Vec<_>>(), parse_ub_ports).await
    }

    /// A UB port's link state (`-g -link -i <logic_id> -u <udie> -p <port>`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_link_state(&self, port: UbPort) -> Result<LinkState, Error> {
        self.query(port.logic_id, &port_args("-link", port), parse_ub_link_state).await
    }

    /// A UB port's speed in G (`-g -speed ...`); `None` when the port is down.
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_speed(&self, port: UbPort) -> Result<Option<u64>, Error> {
        self.query(port.logic_id, &port_args("-speed", port), parse_ub_speed).await
    }

    /// A UB port's bandwidth, sampled over 100 ms as Huawei's exporter asks (`-g -bandwidth ... -time 100`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_bandwidth(&self, port: UbPort) -> Result<Bandwidth, Error> {
        let mut args = port_args("-bandwidth", port);
        args.extend(["-time".to_owned(), UB_BANDWIDTH_WINDOW_MS.to_string()]);
        self.query(port.logic_id, &args, parse_ub_bandwidth).await
    }

    /// A UB port's optical readings (`-g -optical ...`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_optical(&self, port: UbPort) -> Result<UbOpticalInfo, Error> {
        self.query(port.logic_id, &port_args("-optical", port), parse_ub_optical).await
    }

    /// A UB port's packet counters (`-g -stat ...`).
    ///
    /// # Errors
    /// As [`HccnTool::run`], and [`Error::Parse`].
    pub async fn ub_stat(&self, port: UbPort) -> Result<StatCounters, Error> {
        self.query(port.logic_id, &port_args("-stat", port), parse_ub_stat).await
    }
}

/// One device's queries: the lock they take turns on, and how many of them have timed out.
#[derive(Debug, Default)]
struct DeviceTurns {
    turn: AsyncMutex<()>,
    timeouts: AtomicU64,
}

/// What reading does once it holds `limit` bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AtLimit {
    /// Return: standard output, whose caller then kills the child.
    Stop,
    /// Keep reading and drop the rest: standard error, so the child never blocks on a full pipe.
    Drain,
}

/// Reads to the end, keeping at most `limit` bytes.
async fn read_at_most(mut reader: impl AsyncRead + Unpin, limit: usize, at_limit: AtLimit) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = reader.read(&mut buffer).await?;
        if read == 0 {
            return Ok(kept);
        }
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..read.min(room)]);
        if read > room && at_limit == AtLimit::Stop {
            return Ok(kept);
        }
    }
}

/// `-i <phy_id> <query> -g`: the training cards' argument order.
fn chip_args(phy_id: u32, query: &str) -> Vec<String> {
    vec!["-i".to_owned(), phy_id.to_string(), query.to_owned(), "-g".to_owned()]
}

/// `-g <query> -i <logic_id> -u <udie> -p <port>`: Ascend950's argument order.
fn port_args(query: &str, port: UbPort) -> Vec<String> {
    vec![
        "-g".to_owned(),
        query.to_owned(),
        "-i".to_owned(),
        port.logic_id.to_string(),
        "-u".to_owned(),
        port.udie.to_string(),
        "-p".to_owned(),
        port.port.to_string(),
    ]
}
