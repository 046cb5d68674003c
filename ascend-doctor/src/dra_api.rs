//! Section 4: the API server's DRA API against what the Ascend DRA driver writes. The driver publishes its
//! ResourceSlices and reads its ResourceClaims in `resource.k8s.io/v1` (Kubernetes 1.34+); a 1.32 or 1.33 control
//! plane serves only `v1beta1`/`v1beta2` (and only with `DynamicResourceAllocation` on), an older one no
//! `resource.k8s.io` at all. The API server's discovery document (`/apis`) says which, read through kube-rs
//! ([`super::context::ClusterApi::served_versions`]); the node's kubelet version alone cannot, since the control
//! plane may be older or newer than the node.
//!
//! DRA is optional: a miss is a failure only when the Ascend DRA driver is registered on this node (its socket in
//! the kubelet's plugin registry); otherwise a cluster serving an older DRA API gets a warning (DRA is in use there,
//! but the Ascend driver could not join) and one without DRA is evidence.

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};

/// The DRA API group.
pub const DRA_GROUP: &str = "resource.k8s.io";
/// The version of it the Ascend DRA driver writes.
pub const DRA_DRIVER_VERSION: &str = "v1";
/// The Ascend DRA driver's registration socket under its default driver name (`npu.huawei.com`).
pub const DRA_DRIVER_SOCKET: &str = "/var/lib/kubelet/plugins_registry/npu.huawei.com-reg.sock";

/// kubernetes.dra_api: the API server serves `resource.k8s.io/v1`, the version the Ascend DRA driver writes.
pub fn dra_api(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.dra_api",
        Section::Kubernetes,
        "API server serves the DRA driver's resource.k8s.io/v1",
        Status::Ok,
    );
    let api = match options.cluster() {
        Ok(api) => api,
        Err(reason) => return check.evidence(format!("API discovery not read: {reason}")).with_status(Status::Skip),
    };
    let served = match api.served_versions(DRA_GROUP) {
        Ok(served) => served,
        Err(error) => {
            return check
                .evidence(format!("API discovery not read: {error}"))
                .advise(Advice::DraDiscoveryAccess)
                .with_status(Status::Warn)
        }
    };
    let driver_here = options.host.exists(DRA_DRIVER_SOCKET);
    let check = check.evidence(if driver_here {
        format!("{DRA_DRIVER_SOCKET}: the Ascend DRA driver is registered on this node")
    } else {
        format!("{DRA_DRIVER_SOCKET} absent: the Ascend DRA driver is not registered on this node")
    });
    let (check, status) = match served {
        Some(versions) if versions.iter().any(|version| version == DRA_DRIVER_VERSION) => {
            return check.evidence(format!(
                "the API server serves {DRA_GROUP} {}: the DRA driver's ResourceSlices and ResourceClaims are served",
                versions.join(", ")
            ))
        }
        Some(versions) => (
            check.evidence(format!(
                "the API server serves {DRA_GROUP} {} but not {DRA_DRIVER_VERSION} (a Kubernetes 1.32 or 1.33 control \
                 plane): the DRA driver cannot publish its ResourceSlices",
                versions.join(", ")
            )),
            Status::Warn,
        ),
        None => (
            check.evidence(format!(
                "the API server does not serve {DRA_GROUP}: DRA is off in this cluster (a control plane before 1.32, \
                 or the DynamicResourceAllocation gate and the API group off)"
            )),
            Status::Ok,
        ),
    };
    if driver_here {
        return check.advise(Advice::DraUpgrade).with_status(Status::Fail);
    }
    if status == Status::Ok {
        return check;
    }
    check.advise(Advice::DraUpgrade).with_status(status)
}
