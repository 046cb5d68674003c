//! Where the kubelet's device-plugin sockets are (see
//! <https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/#device-plugin-registration>).

/// The kubelet's device-plugin directory: its registration socket and every plugin's socket.
pub const DEFAULT_PLUGIN_DIR: &str = "/var/lib/kubelet/device-plugins";

/// The kubelet's registration socket inside the plugin directory.
pub const KUBELET_SOCKET: &str = "kubelet.sock";
