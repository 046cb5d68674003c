//! The environment variables the runtime role reads its settings from (public as `runtime_exec::*_ENV`): engines
//! start the runtime without letting us choose its flags, so every setting has one.

/// The environment variable naming the host root.
pub const HOST_ROOT_ENV: &str = "ASCEND_CTK_HOST_ROOT";
/// The environment variable naming the directory of mount lists.
pub const MOUNT_LIST_DIR_ENV: &str = "ASCEND_CTK_MOUNT_LIST_DIR";
/// The environment variable naming the chip type (skips DCMI).
pub const CHIP_TYPE_ENV: &str = "ASCEND_CTK_CHIP_TYPE";
/// The environment variable naming the CDI kind.
pub const CDI_KIND_ENV: &str = "ASCEND_CTK_CDI_KIND";
/// The environment variable naming the low-level runtime.
pub const RUNC_ENV: &str = "ASCEND_CTK_RUNC";
/// The environment variable choosing how driver mounts reach the container (`spec` or `hook`).
pub const MOUNT_DELIVERY_ENV: &str = "ASCEND_CTK_MOUNT_DELIVERY";
/// The environment variable naming the chip cache file, or `off`.
pub const CHIP_CACHE_ENV: &str = "ASCEND_CTK_CHIP_CACHE";
