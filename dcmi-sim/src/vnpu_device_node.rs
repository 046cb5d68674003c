//! The host's `/dev/vdavinci<id>` of a vNPU. On an Atlas server the driver makes that node when DCMI creates a vNPU
//! and removes it when the vNPU is destroyed; container runtimes and DRA drivers then hand it to containers as
//! `/dev/davinci<id>`. The simulator does the same on a host laid out by [`crate::fake_host`]: when it runs as the
//! `libdcmi.so` of such a host (at [`crate::fake_host::LIBRARY_PATH`] below a root), the node goes in that root's
//! `/dev`, a character device where the kernel allows it and an empty file otherwise. Loaded from anywhere else (a
//! build directory), it makes no node.

use crate::fake_host::{
    loaded_host_root as host_root, make_character_device, vnpu_node_path as node_path, DAVINCI_MAJOR,
};

/// Makes the node of a created vNPU; a failure leaves the vNPU made (the DCMI call succeeded) without its node,
/// as a driver that could not create the node would.
pub fn created(vdev_id: u32) {
    let Some(root) = host_root() else { return };
    let path = node_path(&root, vdev_id);
    let _ = std::fs::remove_file(&path);
    if !make_character_device(&path, DAVINCI_MAJOR, vdev_id) {
        let _ = std::fs::write(&path, b"");
    }
}

/// Removes the node of a destroyed vNPU.
pub fn destroyed(vdev_id: u32) {
    if let Some(root) = host_root() {
        let _ = std::fs::remove_file(node_path(&root, vdev_id));
    }
}
