//! The OCI hook (`createRuntime` or `prestart`): reads the container state from stdin, loads the
//! bundle's `config.json`, enters the container's mount namespace and bind-mounts the driver
//! files read-only under the container's root filesystem.
//!
//! Runc runs these hooks after it has set up the new mount namespace and the root filesystem
//! but before `pivot_root`, so inside the namespace both the host's paths and the rootfs are
//! visible. Every path is resolved through descriptors: sources beneath the host root without
//! symlinks, destinations beneath the rootfs with `RESOLVE_IN_ROOT` so an image's symlinks cannot
//! point a mount outside it. The hook takes its settings from its arguments only; the inherited
//! environment (including `LD_PRELOAD`, which the container image could have chosen) is ignored.
//!
//! The runtime has resolved the mounts already when it writes the hook into the spec, and hands them over as
//! `--mount` arguments ([`crate::MountDelivery::ByHookWithMounts`]): the hook then reads only `root.path` of
//! the spec and checks each of those paths as it would check what a mount list names (no symlink unless the request
//! allowed them, never out of the host root, root-owned and not writable by group or others down the whole tree),
//! without reading the request, the mount lists or the driver's directories for wildcards again. A path that fails
//! a check fails the container's creation as before. Whoever can write `config.json` chooses the arguments, but
//! could as well add bind mounts of their choice to the spec, which runc would perform: the arguments carry no
//! more trust than the spec itself. A hook entry without `--mount` (written by an older runtime, or by hand) reads
//! the request and the lists as it always did.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use oci_spec::runtime::{ContainerState, State};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::mount::{MountFlags, MoveMountFlags, OpenTreeFlags};

use crate::bounded_read::read_limited;
use crate::bundle_config::{load_root_path, load_spec};
use crate::error::{Error, Result};
use crate::hook_arguments::{ALLOW_LINK_ARGUMENT, MOUNT_ARGUMENT};
use crate::inject::{request_from_spec, DEFAULT_CDI_KIND};
use crate::mount_list::{resolve_given_sources, resolve_sources, MountList, DEFAULT_MOUNT_LIST_DIR};
use crate::request::RuntimeOptions;
use crate::secure_path::{checked_relative, openat2_retrying, HostRoot, TrustedSource};
use crate::start_error::StartError;

/// The largest container state accepted on stdin.
pub const MAX_STATE_BYTES: u64 = 1024 * 1024;

/// Settings of the hook, all from its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookConfig {
    /// The host root (as seen inside the container's mount namespace before `pivot_root`,
    /// which is the host's view).
    pub host_root: PathBuf,
    /// The directory of `.list` files beneath the host root.
    pub mount_list_dir: PathBuf,
    /// The CDI kind whose names in annotations also count as requests.
    pub cdi_kind: String,
    /// The mounts the runtime resolved and checked when it wrote this hook into the spec (paths in the container,
    /// each checked again before it is mounted); `None` for a hook entry without them, which reads the request and
    /// the mount lists itself.
    pub mounts: Option<Vec<PathBuf>>,
    /// Whether symlinks in those mounts are followed (confined to the host root), as the request allowed.
    pub allow_link: bool,
}

impl HookConfig {
    /// The settings from the hook's arguments after `hook` (as [`crate::hook_entry`] and
    /// [`crate::MountDelivery::ByHookWithMounts`] write them): `--host-root`, `--mount-list-dir`,
    /// `--cdi-kind` and any number of `--mount`, each as `--flag value` or `--flag=value`, each missing one at its
    /// default; and `--allow-link` without a value. Read by hand because runc starts the hook on every container
    /// start (see [`crate::hook_program_main`]).
    ///
    /// # Errors
    /// [`Error::RuntimeArgs`] for any other argument, a flag without its value, a value that is not UTF-8 and
    /// `--allow-link` without any `--mount`.
    pub fn from_args(args: &[std::ffi::OsString]) -> Result<Self> {
        let mut config = HookConfig::default();
        let mut remaining = args.iter();
        while let Some(arg) = remaining.next() {
            let arg = arg.to_str().ok_or_else(|| Error::RuntimeArgs(format!("hook argument {arg:?} is not UTF-8")))?;
            if arg == ALLOW_LINK_ARGUMENT {
                config.allow_link = true;
                continue;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_owned())),
                None => (arg, None),
            };
            // An unknown flag is named as such, before its value is looked for.
            if !["--host-root", "--mount-list-dir", "--cdi-kind", MOUNT_ARGUMENT].contains(&flag) {
                return Err(Error::RuntimeArgs(format!("unknown hook argument {flag:?}")));
            }
            let value = match inline {
                Some(value) => value,
                None => remaining
                    .next()
                    .and_then(|value| value.to_str())
                    .map(str::to_owned)
                    .ok_or_else(|| Error::RuntimeArgs(format!("hook argument {flag} needs a UTF-8 value")))?,
            };
            match flag {
                "--host-root" => config.host_root = PathBuf::from(value),
                "--mount-list-dir" => config.mount_list_dir = PathBuf::from(value),
                "--cdi-kind" => config.cdi_kind = value,
                // MOUNT_ARGUMENT, the one flag left.
                _ => config.mounts.get_or_insert_with(Vec::new).push(PathBuf::from(value)),
            }
        }
        if config.allow_link && config.mounts.is_none() {
            // The request's own ASCEND_ALLOW_LINK decides when the hook reads the request: a flag that would be
            // ignored is refused rather than silently dropped.
            return Err(Error::RuntimeArgs(format!("hook argument {ALLOW_LINK_ARGUMENT} needs {MOUNT_ARGUMENT}")));
        }
        Ok(config)
    }
}

impl Default for HookConfig {
    fn default() -> Self {
        HookConfig {
            host_root: PathBuf::from("/"),
            mount_list_dir: PathBuf::from(DEFAULT_MOUNT_LIST_DIR),
            cdi_kind: DEFAULT_CDI_KIND.to_owned(),
            mounts: None,
            allow_link: false,
        }
    }
}

/// What the hook did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookOutcome {
    /// The container paths mounted.
    pub mounted: Vec<PathBuf>,
}

/// Parses the container state that runc writes to a hook's stdin.
///
/// # Errors
/// [`Error::TooLarge`] beyond [`MAX_STATE_BYTES`], [`Error::Json`] for malformed state.
pub fn read_state(reader: impl Read) -> Result<State> {
    let bytes = read_limited(reader, MAX_STATE_BYTES, "container state on stdin")?;
    serde_json::from_slice(&bytes).map_err(|source| Error::Json { what: "container state on stdin".to_owned(), source })
}

/// The whole hook as runc starts it: leaves the directory runc started it in (it may be the container's rootfs;
/// nothing is resolved relative to it), reads the state from stdin and runs [`run_hook`] for that container.
///
/// # Errors
/// As [`read_state`] and [`run_hook`], the latter with the container's id as context.
pub fn run_from_stdin(config: &HookConfig) -> std::result::Result<HookOutcome, StartError> {
    std::env::set_current_dir("/").map_err(|source| StartError::Io { context: "chdir /".to_owned(), source })?;
    let state = read_state(std::io::stdin().lock())?;
    run_hook(&state, config).map_err(|source| StartError::Step {
        context: format!("hook for container {}", state.id()),
        source: Box::new(source),
    })
}

/// Runs the hook for one container.
///
/// # Errors
/// [`Error::InvalidConfig`] for a state at the wrong stage or without a pid, and every error of
/// loading the spec, parsing the request, checking sources and mounting. An error makes runc
/// abort container creation, which is the point: no half-equipped container starts.
pub fn run_hook(state: &State, config: &HookConfig) -> Result<HookOutcome> {
    let state_path = PathBuf::from("-");
    if !matches!(state.status(), ContainerState::Creating | ContainerState::Created) {
        return Err(Error::InvalidConfig {
            path: state_path,
            reason: format!("status is {}; the hook runs at createRuntime/prestart", state.status()),
        });
    }
    let pid = state.pid().filter(|pid| *pid > 0).ok_or_else(|| Error::InvalidConfig {
        path: state_path.clone(),
        reason: "no container pid in the state".to_owned(),
    })?;
    let bundle = state.bundle();
    if !bundle.is_absolute() {
        return Err(Error::unsafe_path(bundle, "bundle path in the state is not absolute"));
    }
    let config_path = bundle.join("config.json");
    let (rootfs, wanted) = match &config.mounts {
        Some(paths) => (load_root_path(&config_path)?, Wanted::Given(paths)),
        None => {
            let spec = load_spec(&config_path)?;
            let request = request_from_spec(&spec, &config.cdi_kind)?;
            if request.devices.is_nothing() || request.options.contains(RuntimeOptions::NODRV) {
                return Ok(HookOutcome::default());
            }
            let rootfs = spec.root().as_ref().map(|root| root.path().clone());
            (rootfs, Wanted::Lists { names: request.mount_lists, allow_link: request.allow_link })
        }
    };
    let rootfs = rootfs
        .ok_or_else(|| Error::InvalidConfig { path: config_path.clone(), reason: "root.path is missing".to_owned() })?;
    let rootfs = if rootfs.is_absolute() { rootfs } else { bundle.join(rootfs) };

    enter_mount_namespace(pid)?;
    let root = HostRoot::open(&config.host_root)?;
    let sources = match wanted {
        Wanted::Given(paths) => resolve_given_sources(&root, paths, config.allow_link)?,
        Wanted::Lists { names, allow_link } => {
            let mut lists = Vec::new();
            for name in &names {
                lists.push(MountList::load(&root, &config.mount_list_dir, name)?);
            }
            resolve_sources(&root, &lists, allow_link)?
        }
    };
    let mut rootfs = RootfsDirs::open(rootfs)?;
    let mut outcome = HookOutcome::default();
    for source in &sources {
        mount_read_only(&mut rootfs, source)?;
        outcome.mounted.push(source.container_path.clone());
    }
    Ok(outcome)
}

/// What the hook mounts: the paths the runtime handed over, or what the request's mount lists name.
enum Wanted<'a> {
    /// `--mount` arguments.
    Given(&'a [PathBuf]),
    /// The request's lists (`ASCEND_RUNTIME_MOUNTS`) and its `ASCEND_ALLOW_LINK`.
    Lists { names: Vec<String>, allow_link: bool },
}

/// Moves this (single-threaded) process into the mount namespace of `pid`.
fn enter_mount_namespace(pid: i32) -> Result<()> {
    let pid_max_path = Path::new("/proc/sys/kernel/pid_max");
    let pid_max: i64 =
        std::fs::read_to_string(pid_max_path).map_err(|e| Error::io("read", pid_max_path, e))?.trim().parse().map_err(
            |_| Error::InvalidConfig { path: pid_max_path.to_path_buf(), reason: "not a number".to_owned() },
        )?;
    if i64::from(pid) >= pid_max {
        return Err(Error::InvalidConfig {
            path: PathBuf::from("-"),
            reason: format!("container pid {pid} is not below pid_max {pid_max}"),
        });
    }
    let ns_path = PathBuf::from(format!("/proc/{pid}/ns/mnt"));
    let ns = rustix::fs::open(&ns_path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| Error::errno("open", &ns_path, e))?;
    rustix::thread::move_into_link_name_space(ns.as_fd(), Some(rustix::thread::LinkNameSpaceType::Mount))
        .map_err(|e| Error::errno("setns", &ns_path, e))
}

/// Creates the mount point under the rootfs (directories 0755, files 0644) and moves a
/// read-only, nosuid, nodev clone of the source onto it.
fn mount_read_only(rootfs: &mut RootfsDirs, source: &TrustedSource) -> Result<()> {
    let relative = checked_relative(&source.container_path)?;
    let shown = rootfs.path.join(&relative);
    let target = rootfs.mount_point(&relative, source.is_dir)?;
    let tree = rustix::mount::open_tree(
        &source.fd,
        "",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_EMPTY_PATH
            | OpenTreeFlags::AT_RECURSIVE,
    )
    .map_err(|e| Error::errno("open_tree", &source.host_path, e))?;
    rustix::mount::move_mount(
        &tree,
        "",
        &target,
        "",
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
    )
    .map_err(|e| Error::errno("move_mount", &shown, e))?;
    rootfs.covered_by_mount(&relative);
    // The moved tree's descriptor names the new mount; remounting through its /proc link changes
    // only that mount's flags, not the source filesystem.
    let tree_link = format!("/proc/self/fd/{}", tree.as_raw_fd());
    rustix::mount::mount_remount(
        tree_link.as_str(),
        MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        "",
    )
    .map_err(|e| Error::errno("remount read-only", &shown, e))
}

/// The container's root filesystem and the directories below it this hook has opened or created, so that mount points
/// sharing a parent (`/usr/local/Ascend/driver/lib64` and `.../include`) find it without walking to it again: the
/// hook is on the path of every container start.
struct RootfsDirs {
    path: PathBuf,
    fd: OwnedFd,
    /// Directories beneath the rootfs (relative paths), each opened with `O_PATH`: usable as the `dirfd` of `mkdirat`
    /// and `openat` (open(2), `O_PATH`), so no second descriptor is opened to create an entry in it.
    known: Vec<(PathBuf, OwnedFd)>,
}

impl RootfsDirs {
    fn open(path: PathBuf) -> Result<Self> {
        let fd = rustix::fs::open(&path, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| Error::errno("open rootfs", &path, e))?;
        Ok(RootfsDirs { path, fd, known: Vec::new() })
    }

    /// Forgets the directories at and below a new mount: their descriptors name what the mount now hides.
    fn covered_by_mount(&mut self, relative: &Path) {
        self.known.retain(|(known, _)| !known.starts_with(relative));
    }

    /// `relative` resolved inside the rootfs (the image's symlinks followed, but never out of it), opened `O_PATH`.
    fn open_in_root(&self, relative: &Path) -> rustix::io::Result<OwnedFd> {
        openat2_retrying(
            &self.fd,
            if relative.as_os_str().is_empty() { Path::new(".") } else { relative },
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
        )
    }

    /// Creates what is missing of `relative` below the rootfs, one component at a time, every lookup confined to the
    /// rootfs, and returns the target opened with `O_PATH`. Each existing component costs one lookup, each missing one
    /// a lookup, a `mkdirat` and an open of what was made (before: two lookups, a directory open and closes).
    fn mount_point(&mut self, relative: &Path, is_dir: bool) -> Result<OwnedFd> {
        let shown = &self.path.join(relative);
        let components: Vec<_> = relative.components().collect();
        // Start below the deepest directory already known on the way.
        let mut depth = 0;
        let mut parent_index: Option<usize> = None;
        for (index, (known, _)) in self.known.iter().enumerate() {
            let known_depth = known.components().count();
            if known_depth > depth && known_depth < components.len() && relative.starts_with(known) {
                depth = known_depth;
                parent_index = Some(index);
            }
        }
        let mut prefix: PathBuf = components[..depth].iter().collect();
        for (index, component) in components.iter().enumerate().skip(depth) {
            prefix.push(component);
            let last = index + 1 == components.len();
            let opened = match self.open_in_root(&prefix) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) => self.create(parent_index, &prefix, last && !is_dir)?,
                Err(other) => return Err(Error::errno("open", shown, other)),
            };
            if last {
                return check_mount_point(opened, shown, is_dir);
            }
            self.known.push((prefix.clone(), opened));
            parent_index = Some(self.known.len() - 1);
        }
        // An empty relative path is the rootfs itself, which checked_relative never returns; refuse it all the same.
        Err(Error::unsafe_path(shown, "is the container's root filesystem itself"))
    }

    /// Creates the last component of `prefix` in its parent (`parent_index` into `known`, or the rootfs) and opens it.
    fn create(&self, parent_index: Option<usize>, prefix: &Path, file: bool) -> Result<OwnedFd> {
        let shown = self.path.join(prefix);
        let parent = parent_index.map_or(&self.fd, |index| &self.known[index].1);
        let name = prefix.file_name().unwrap_or_default();
        let created = if file {
            rustix::fs::openat(
                parent,
                name,
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
            .map(drop)
            .map_err(|e| ("create mount point", e))
        } else {
            rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o755)).map_err(|e| ("mkdir", e))
        };
        match created {
            Ok(()) => {}
            // The name exists but does not resolve inside the rootfs: a symlink of the image that leads nowhere
            // (or is swapped while we work). Creating through it is what a symlink attack wants; refuse instead.
            Err((_, rustix::io::Errno::EXIST)) => {
                return Err(Error::unsafe_path(
                    shown,
                    "the image has an entry here that does not resolve inside its root filesystem (a dangling or \
                     changing symlink); no mount point is created through it",
                ))
            }
            Err((what, other)) => return Err(Error::errno(what, &shown, other)),
        }
        // What was just made, named in its parent without following anything: it cannot be a symlink.
        openat2_retrying(
            parent,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        )
        .map_err(|e| Error::errno("open", &shown, e))
    }
}

/// Checks that the mount point is of the source's kind (directory or file).
fn check_mount_point(target: OwnedFd, shown: &Path, is_dir: bool) -> Result<OwnedFd> {
    let stat = rustix::fs::fstat(&target).map_err(|e| Error::errno("stat", shown, e))?;
    let target_is_dir = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
    if target_is_dir != is_dir {
        return Err(Error::WrongFileType {
            path: shown.to_path_buf(),
            reason: format!(
                "the image has a {} where the driver has a {}",
                if target_is_dir { "directory" } else { "file" },
                if is_dir { "directory" } else { "file" }
            ),
        });
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_arguments_are_read_in_both_spellings_and_unknown_ones_refused() -> Result<()> {
        let args = |text: &str| text.split_whitespace().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(HookConfig::from_args(&[])?, HookConfig::default());
        let config = HookConfig::from_args(&args("--host-root /h --mount-list-dir=/l --cdi-kind k/npu"))?;
        assert_eq!(config.host_root, PathBuf::from("/h"));
        assert_eq!(config.mount_list_dir, PathBuf::from("/l"));
        assert_eq!(config.cdi_kind, "k/npu");
        for refused in ["--help", "--host-root", "--prestart /x"] {
            assert!(matches!(HookConfig::from_args(&args(refused)), Err(Error::RuntimeArgs(_))), "{refused}");
        }
        Ok(())
    }

    #[test]
    fn mounts_handed_over_by_the_runtime_are_read_in_order_and_allow_link_needs_them() -> Result<()> {
        let args = |text: &str| text.split_whitespace().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(HookConfig::from_args(&args("--host-root /h"))?.mounts, None, "no --mount: the lists are read");
        let config = HookConfig::from_args(&args("--mount=/usr/b --host-root /h --mount /usr/a --allow-link"))?;
        assert_eq!(config.mounts, Some(vec![PathBuf::from("/usr/b"), PathBuf::from("/usr/a")]));
        assert!(config.allow_link);
        assert!(!HookConfig::from_args(&args("--mount=/usr/a"))?.allow_link);
        let alone = HookConfig::from_args(&args("--host-root /h --allow-link")).map(|_| ()).unwrap_err().to_string();
        assert!(alone.contains("--allow-link needs --mount"), "{alone}");
        assert!(matches!(HookConfig::from_args(&args("--mount")), Err(Error::RuntimeArgs(_))));
        Ok(())
    }

    #[test]
    fn oversized_state_is_refused() {
        let big = vec![b' '; (MAX_STATE_BYTES + 1) as usize];
        assert!(matches!(read_state(&big[..]), Err(Error::TooLarge { .. })));
    }

    #[test]
    fn state_from_runc_parses_and_wrong_stage_is_refused() -> Result<()> {
        let text = r#"{"ociVersion":"1.0.2-dev","id":"c1","status":"running","pid":42,"bundle":"/b"}"#;
        let state = read_state(text.as_bytes())?;
        assert_eq!(state.pid(), &Some(42));
        let err = run_hook(&state, &HookConfig::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("status is running"), "{err}");
        Ok(())
    }
}
