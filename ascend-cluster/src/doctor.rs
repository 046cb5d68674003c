//! `kubectl ascend doctor NODE`: runs `ascend-doctor` in the node's Ascend daemon pod through the API's exec
//! subresource (as `kubectl exec` does) and returns its report and exit code.
//!
//! The daemon pod is the running pod on the node labelled `app.kubernetes.io/name` [`DAEMON_NAMES`] (our
//! DaemonSets in deploy/kubernetes): it sees the host's driver, device nodes and kubelet sockets, which is what the
//! doctor checks. One list call finds it (field `spec.nodeName`, the label), then one exec.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, ListParams};
use serde::Serialize;
use tokio::io::AsyncReadExt;

use ascend_kube::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT};

use crate::error::{Error, Result};

/// The `app.kubernetes.io/name` values of the pods the doctor may run in, in order of preference.
pub const DAEMON_NAMES: [&str; 2] = ["ascend-device-plugin", "ascend-dra-driver"];
/// The containers that carry `ascend-doctor`, by daemon (deploy/kubernetes: `device-plugin`, `driver`).
pub const DAEMON_CONTAINERS: [&str; 2] = ["device-plugin", "driver"];
/// The command run.
pub const DOCTOR_COMMAND: &str = "ascend-doctor";

/// Where the doctor ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DaemonPod {
    /// Namespace.
    pub namespace: String,
    /// Pod.
    pub pod: String,
    /// Container.
    pub container: String,
}

/// The doctor's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorRun {
    /// The node.
    pub node: String,
    /// Where it ran.
    pub daemon: DaemonPod,
    /// Its standard output: the report.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Its exit code (0: no check failed, 1: a check failed, 2: bad command line); `None` when the API did not say.
    pub exit_code: Option<i32>,
}

/// The running daemon pod of `node`, found with one list call.
///
/// # Errors
/// [`crate::Error::Kube`] for an invalid node name or a failed list, [`Error::NoDaemonPod`].
pub async fn daemon_pod(client: &kube::Client, node: &str) -> Result<DaemonPod> {
    check_node_name(node)?;
    let labels = format!("app.kubernetes.io/name in ({})", DAEMON_NAMES.join(","));
    let params = ListParams::default().fields(&format!("spec.nodeName={node},status.phase=Running")).labels(&labels);
    let pods: Api<Pod> = Api::all(client.clone());
    let listed = request("list", "pods", DEFAULT_REQUEST_TIMEOUT, pods.list(&params)).await?;
    choose_daemon(&listed.items)
        .ok_or_else(|| Error::NoDaemonPod { node: node.to_owned(), labels: DAEMON_NAMES.join(",") })
}

/// The preferred daemon pod of a node's pods: the device plugin's before the DRA driver's, and a container of
/// [`DAEMON_CONTAINERS`] (else the pod's first). A pod being deleted is never chosen: during a rollout the old pod
/// still runs for its grace period, and an exec into it ends without an exit status when it stops.
fn choose_daemon(pods: &[Pod]) -> Option<DaemonPod> {
    let daemon_rank = |pod: &Pod| {
        let name = pod.metadata.labels.as_ref()?.get("app.kubernetes.io/name")?;
        DAEMON_NAMES.iter().position(|known| known == name)
    };
    let pod = pods
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none() && daemon_rank(pod).is_some())
        .min_by_key(|pod| daemon_rank(pod))?;
    let containers = &pod.spec.as_ref()?.containers;
    let container = containers
        .iter()
        .find(|container| DAEMON_CONTAINERS.contains(&container.name.as_str()))
        .or(containers.first())?;
    Some(DaemonPod {
        namespace: pod.metadata.namespace.clone().unwrap_or_else(|| "default".into()),
        pod: pod.metadata.name.clone()?,
        container: container.name.clone(),
    })
}

/// How often the doctor is run when its exec is interrupted ([`exec_interrupted`]), and the wait in between.
const DOCTOR_ATTEMPTS: usize = 3;
const DOCTOR_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `ascend-doctor ARGS...` in `node`'s daemon pod and collects its output and exit code. An exec that ended with
/// neither an exit status nor any output is run again, up to 3 times 2 s apart (the doctor only reads), the daemon
/// pod chosen anew each time; the last run is returned as it ended.
///
/// # Errors
/// The errors of [`daemon_pod`]; [`Error::Exec`] when the exec request or its streams fail (a container without
/// `ascend-doctor` fails here, with the runtime's message).
pub async fn doctor_report(client: &kube::Client, node: &str, args: &[String]) -> Result<DoctorRun> {
    let mut run = doctor_run(client, node, args).await?;
    for _ in 1..DOCTOR_ATTEMPTS {
        if !exec_interrupted(&run) {
            break;
        }
        tokio::time::sleep(DOCTOR_RETRY_AFTER).await;
        run = doctor_run(client, node, args).await?;
    }
    Ok(run)
}

/// An exec that ended with neither an exit status nor a line of output: the doctor (whose report always begins with a
/// header) did not run to its end. Seen right after the node's container engine restarted (the migration guide's
/// runtime step): the kubelet's connection to the engine was not back yet.
fn exec_interrupted(run: &DoctorRun) -> bool {
    run.exit_code.is_none() && run.stdout.is_empty()
}

/// One run of the doctor in `node`'s daemon pod ([`doctor_report`]).
async fn doctor_run(client: &kube::Client, node: &str, args: &[String]) -> Result<DoctorRun> {
    let daemon = daemon_pod(client, node).await?;
    let mut command = vec![DOCTOR_COMMAND.to_owned()];
    command.extend(args.iter().cloned());
    let exec_error = |reason: String| Error::Exec {
        namespace: daemon.namespace.clone(),
        pod: daemon.pod.clone(),
        container: daemon.container.clone(),
        command: command.join(" "),
        reason,
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), &daemon.namespace);
    let params = AttachParams::default().container(daemon.container.clone()).stdout(true).stderr(true);
    let mut process =
        pods.exec(&daemon.pod, command.clone(), &params).await.map_err(|error| exec_error(error.to_string()))?;
    let status = process.take_status();
    let (mut stdout, mut stderr) = (process.stdout(), process.stderr());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let read_out = async {
        match stdout.as_mut() {
            Some(stream) => stream.read_to_end(&mut out).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let read_err = async {
        match stderr.as_mut() {
            Some(stream) => stream.read_to_end(&mut err).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let (read_out, read_err) = tokio::join!(read_out, read_err);
    read_out.and(read_err).map_err(|error| exec_error(format!("reading the output: {error}")))?;
    let status = match status {
        Some(status) => status.await,
        None => None,
    };
    process.join().await.map_err(|error| exec_error(error.to_string()))?;
    Ok(DoctorRun {
        node: node.to_owned(),
        daemon,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        exit_code: status.as_ref().and_then(exit_code),
    })
}

/// The exit code of an exec's final Status: 0 on `Success`, else the `ExitCode` cause.
fn exit_code(status: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Status) -> Option<i32> {
    if status.status.as_deref() == Some("Success") {
        return Some(0);
    }
    status
        .details
        .as_ref()?
        .causes
        .iter()
        .flatten()
        .find(|cause| cause.reason.as_deref() == Some("ExitCode"))
        .and_then(|cause| cause.message.as_deref()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};

    fn daemon(name: &str, app: &str, deleting: bool) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name, "namespace": "ascend-system", "labels": {"app.kubernetes.io/name": app},
                "deletionTimestamp": deleting.then_some("2026-12-05T11:53:34Z"),
            },
            "spec": {"containers": [{"name": "node-labeller"}, {"name": "device-plugin"}]},
        }))
        .expect("pod")
    }

    #[test]
    fn the_daemon_is_the_device_plugins_pod_that_is_not_being_deleted() {
        let old = daemon("plugin-old", "ascend-device-plugin", true);
        let new = daemon("plugin-new", "ascend-device-plugin", false);
        let dra = daemon("dra", "ascend-dra-driver", false);
        let chosen = choose_daemon(&[old.clone(), dra.clone(), new]).expect("a daemon");
        assert_eq!((chosen.pod.as_str(), chosen.container.as_str()), ("plugin-new", "device-plugin"));
        assert_eq!(choose_daemon(&[old.clone(), dra]).expect("a daemon").pod, "dra");
        assert_eq!(choose_daemon(&[old]), None, "only a pod being deleted: none");
    }

    #[test]
    fn an_exec_with_neither_status_nor_output_was_interrupted() {
        let daemon = DaemonPod { namespace: "ns".into(), pod: "plugin-x".into(), container: "c".into() };
        let mut run =
            DoctorRun { node: "n".into(), daemon, stdout: String::new(), stderr: String::new(), exit_code: Some(1) };
        assert!(!exec_interrupted(&run), "the doctor ended with a status");
        run.exit_code = None;
        assert!(exec_interrupted(&run), "no status and no report: interrupted");
        run.stdout = "ascend-doctor 0.1.0: host root /\n".into();
        assert!(!exec_interrupted(&run), "a report came: not run again");
    }

    #[test]
    fn the_exit_code_comes_from_the_final_status() {
        let success = Status { status: Some("Success".into()), ..Status::default() };
        assert_eq!(exit_code(&success), Some(0));
        let failed = Status {
            status: Some("Failure".into()),
            reason: Some("NonZeroExitCode".into()),
            details: Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    reason: Some("ExitCode".into()),
                    message: Some("1".into()),
                    ..StatusCause::default()
                }]),
                ..StatusDetails::default()
            }),
            ..Status::default()
        };
        assert_eq!(exit_code(&failed), Some(1));
        assert_eq!(exit_code(&Status::default()), None);
    }
}
