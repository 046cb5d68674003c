//! Section 4: the kubelet's version against the floors of the components that talk to it (docs/compatibility.md).
//!
//! The version comes from the Node object when the API server answers (the kubelet's own report, and the only
//! source when the kubelet runs from a binary elsewhere), else from files under the host root: the kubelet
//! binary's recorded build settings, then the dpkg database ([`super::installed_version`] says why the doctor
//! reads files instead of running `kubelet --version`).

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};
use super::installed_version::{dpkg_version, first_binary, major_minor, FoundVersion};
use super::kubernetes_checks::node_name;

/// Where kubelet binaries are installed: packages, manual installs, Flatcar/CoreOS.
pub const KUBELET_BINARIES: [&str; 3] = ["/usr/bin/kubelet", "/usr/local/bin/kubelet", "/opt/bin/kubelet"];

/// The build settings that carry the kubelet's version (`kubelet --version` prints the first).
pub const KUBELET_VERSION_SETTINGS: [&str; 2] =
    ["k8s.io/component-base/version.gitVersion", "k8s.io/client-go/pkg/version.gitVersion"];

/// One kubelet floor of a component or feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KubeletFloor {
    /// What needs it.
    pub feature: &'static str,
    /// The oldest kubelet that works, `(major, minor)`.
    pub minimum: (u32, u32),
    /// Why.
    pub reason: &'static str,
    /// Whether every installation needs it (a miss fails the check) or only those that use the feature.
    pub required: bool,
}

/// The floors, as docs/compatibility.md states them.
pub const KUBELET_FLOORS: [KubeletFloor; 4] = [
    KubeletFloor {
        feature: "device plugin",
        minimum: (1, 26),
        reason: "older kubelets send the plugin socket's path as the gRPC :authority, which the plugin's HTTP/2 \
                 layer rejects (PROTOCOL_ERROR): registration never completes (kubernetes/kubernetes#112597)",
        required: true,
    },
    KubeletFloor {
        feature: "device plugin --cdi-delivery field",
        minimum: (1, 29),
        reason: "DevicePluginCDIDevices is on by default from 1.29 (alpha, behind the gate, in 1.28)",
        required: false,
    },
    KubeletFloor {
        feature: "DRA driver, resource.k8s.io/v1beta1",
        minimum: (1, 32),
        reason: "with the DynamicResourceAllocation feature gate",
        required: false,
    },
    KubeletFloor {
        feature: "DRA driver, resource.k8s.io/v1",
        minimum: (1, 34),
        reason: "DRA is GA and on by default from 1.34",
        required: false,
    },
];

/// The kubelet's version and where it came from, with what was tried before.
fn find_version(options: &DoctorOptions) -> (Option<FoundVersion>, Vec<String>) {
    let mut tried = Vec::new();
    match (options.cluster(), node_name(options)) {
        (Ok(api), Some(node)) => match api.kubelet_version(&node) {
            Ok(Some(version)) => {
                let source = format!("Node {node} status.nodeInfo.kubeletVersion");
                return (Some(FoundVersion { version, source }), tried);
            }
            Ok(None) => tried.push(format!("Node {node} has no status.nodeInfo.kubeletVersion yet")),
            Err(error) => tried.push(format!("Node object not read: {error}")),
        },
        (Ok(_), None) => tried.push("Node object not read: the node name is unknown (pass --node)".to_owned()),
        (Err(reason), _) => tried.push(format!("Node object not read: {reason}")),
    }
    if let Some((path, found)) = first_binary(&options.host, &KUBELET_BINARIES, &KUBELET_VERSION_SETTINGS) {
        match found {
            Some(found) => return (Some(found), tried),
            None => tried.push(format!("{path} records no version in its build settings")),
        }
    }
    (dpkg_version(&options.host, &["kubelet"]), tried)
}

/// kubernetes.kubelet_version: the kubelet is new enough for the device plugin; which optional features it allows.
pub fn kubelet_version(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("kubernetes.kubelet_version", Section::Kubernetes, "kubelet version supported", Status::Ok);
    let (found, tried) = find_version(options);
    let check = check.evidence_lines(tried);
    let Some(found) = found else {
        if !options.host.exists("/var/lib/kubelet") {
            return check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip);
        }
        return check
            .evidence("no kubelet binary with a recorded version and no kubelet package found")
            .advise(Advice::KubeletVersionUnknown)
            .with_status(Status::Skip);
    };
    facts.kubelet_version = Some(found.version.clone());
    let check = check.evidence(format!("kubelet {} (from {})", found.version, found.source));
    let Some(version) = major_minor(&found.version) else {
        return check.evidence(format!("{:?} is not a version", found.version)).with_status(Status::Skip);
    };
    let mut check = check;
    let mut missed = Vec::new();
    for floor in KUBELET_FLOORS {
        let (major, minor) = floor.minimum;
        let met = version >= floor.minimum;
        check = check.evidence(format!(
            "{}: needs {major}.{minor}+, {}",
            floor.feature,
            if met { "met" } else { "NOT met" }
        ));
        if !met && floor.required {
            missed.push(floor);
        }
    }
    let Some(floor) = missed.first() else { return check };
    let (major, minor) = floor.minimum;
    check
        .evidence(format!("{}: {}", floor.feature, floor.reason))
        .advise(Advice::KubeletTooOld {
            floor: format!("{major}.{minor}"),
            feature: floor.feature.to_owned(),
            version: found.version.clone(),
        })
        .with_status(Status::Fail)
}
