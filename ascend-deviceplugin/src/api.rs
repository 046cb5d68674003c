//! The kubelet gRPC APIs, generated from `proto/` by `scripts/gen_protos.sh` (committed; builds need no protoc).

/// Device plugin API `v1beta1`: the `Registration` client and server, the `DevicePlugin` client and server.
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/v1beta1.rs"]
pub mod v1beta1;

/// PodResources API `v1`: the `PodResourcesLister` client (`List`, `GetAllocatableResources`, `Get`) and server.
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/v1.rs"]
pub mod v1;
