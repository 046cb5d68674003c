//! The kubelet's device plugin gRPC API, generated from `proto/` by `scripts/gen_protos.sh` (committed; builds need
//! no protoc). The PodResources API is `ascend_node::pod_resources::api`.

/// Device plugin API `v1beta1`: the `Registration` client and server, the `DevicePlugin` client and server.
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/v1beta1.rs"]
pub mod v1beta1;
