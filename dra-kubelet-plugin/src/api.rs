//! The kubelet gRPC APIs, generated from `proto/` by `scripts/gen_protos.sh` (committed; builds need no protoc).

/// Plugin registration (package `pluginregistration`): the `Registration` service a plugin serves in the kubelet's
/// `plugins_registry` directory.
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/registration.rs"]
pub mod registration;

/// DRA plugin API `v1` (package `k8s.io.kubelet.pkg.apis.dra.v1`, kubelet 1.34 and newer).
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/dra_v1.rs"]
pub mod dra_v1;

/// DRA plugin API `v1beta1` (package `k8s.io.kubelet.pkg.apis.dra.v1beta1`, kubelet 1.32 and newer).
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/dra_v1beta1.rs"]
pub mod dra_v1beta1;

/// DRA resource health `v1alpha1` (package `v1alpha1`, KEP-4680, kubelet 1.34 and newer with the
/// `ResourceHealthStatus` gate).
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/health_v1alpha1.rs"]
pub mod health_v1alpha1;
