//! The hook's own arguments that the runtime writes into hook mode's spec entry (`inject.rs`) and the hook reads
//! (`hook.rs`): the mounts the runtime already resolved, so the hook checks and mounts them without reading the
//! mount lists again.

/// The hook argument naming one mount the runtime resolved (`--mount=<path in the container>`), written by
/// [`crate::MountDelivery::ByHookWithMounts`].
pub const MOUNT_ARGUMENT: &str = "--mount";

/// The hook argument (no value) saying that the request allows symlinks in the mount sources.
pub const ALLOW_LINK_ARGUMENT: &str = "--allow-link";
