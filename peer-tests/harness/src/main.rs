//! `peer-node`: the node a device plugin under comparison runs on (peer-tests/README.md).
//!
//! It serves what a device plugin talks to, the same way for Huawei's and ours: the kubelet's `Registration` on
//! `<dir>/device-plugins/kubelet.sock` (the in-repo fake kubelet, which follows each plugin's `ListAndWatch`), and an
//! API server over TLS with the in-cluster files a pod gets (`<dir>/serviceaccount/{ca.crt,token,namespace}`;
//! Huawei's plugin reaches the API server only that way). The Node exists with the labels and an annotation a kubelet
//! gives it (Huawei's plugin panics on a Node without annotations). Once every plugin's device lists have stayed the
//! same for `--settle-seconds`, it calls `Allocate` for the first N healthy devices of each resource (`--allocate N`,
//! repeatable) and writes what the plugins told the kubelet and the API server to `--out` as JSON: registrations,
//! device lists, Allocate responses, the Node's labels and annotations, and every ConfigMap. With
//! `--recover-signal` it then waits while the comparison clears the host's faults, and reads the device lists, the
//! Node and the ConfigMaps again once the lists have settled. With `--follow-seconds` it instead follows the device
//! lists after the record, noting each device's health as it changes (the record's `timeline`), until every device
//! has been healthy for `--settle-seconds` or the time is up: what a chip recovery did and when (`follow.rs`; with
//! `--pod-resources` the node also serves the kubelet's PodResources, listing no pod).
//!
//! `<dir>/ready` holds the API server's port once everything serves.
//!
//! With `--perf` it keeps no record: it serves one plugin under measurement and keeps the files the performance
//! report's comparison with Huawei's programs reads (`perf.rs`).

mod follow;
mod perf;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest, Device};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use clap::Parser;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// A stand-in node for comparing device plugins.
#[derive(Debug, Parser)]
struct Args {
    /// The node's directory: device-plugins/, serviceaccount/, ready.
    #[arg(long)]
    dir: PathBuf,
    /// The Node's name (the plugin's NODE_NAME).
    #[arg(long)]
    node_name: String,
    /// Allocate the first N healthy devices of each resource (repeatable).
    #[arg(long = "allocate")]
    allocate: Vec<usize>,
    /// Before each Allocate, create the pending pod Volcano would have bound: requesting the devices, with the
    /// scheduler's annotations naming them (`<resource>: <ids>`, `predicate-time`), as Volcano-mode plugins need.
    #[arg(long)]
    volcano: bool,
    /// How long every device list must stay unchanged before the record is taken.
    #[arg(long, default_value_t = 3)]
    settle_seconds: u64,
    /// How long to wait for a registration and settled device lists.
    #[arg(long, default_value_t = 90)]
    timeout_seconds: u64,
    /// Where to write the record.
    #[arg(long, required_unless_present = "perf")]
    out: Option<PathBuf>,
    /// Measure instead of recording (`perf.rs`): registration and health-change times, Allocate latencies on
    /// request, until `<dir>/stop` appears.
    #[arg(long, conflicts_with_all = ["allocate", "volcano", "recover_signal"])]
    perf: bool,
    /// After the record's first part, write `<dir>/faulted` and wait for this file: the comparison then clears the
    /// host's faults and creates it. The device lists, Node and ConfigMaps are read again once the lists have
    /// settled, as the record's `recovered` part.
    #[arg(long)]
    recover_signal: Option<PathBuf>,
    /// After the record, follow the device lists for at most this long (the record's `timeline`, `follow.rs`).
    #[arg(long, conflicts_with_all = ["recover_signal", "perf"])]
    follow_seconds: Option<u64>,
    /// Serve the kubelet's PodResources on `<dir>/pod-resources/kubelet.sock`, listing no pod.
    #[arg(long)]
    pod_resources: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let api = FakeApiServer::start().await.context("starting the fake API server")?;
    seed(&api, &args.node_name);
    let tls_port = serve_tls(&api, &args.dir.join("serviceaccount")).await?;
    let plugins = args.dir.join("device-plugins");
    std::fs::create_dir_all(&plugins).with_context(|| format!("creating {}", plugins.display()))?;
    let kubelet = FakeKubelet::start(&plugins).await.context("starting the fake kubelet")?;
    let _pod_resources =
        if args.pod_resources { Some(follow::serve_pod_resources(&args.dir.join("pod-resources"))?) } else { None };
    // Written whole, then renamed into place: the runner polls for `ready` and reads the port from it at once, and
    // a file written in place can be seen empty (which handed Huawei's plugin an empty KUBERNETES_SERVICE_PORT once).
    let pending = args.dir.join("ready.pending");
    std::fs::write(&pending, tls_port.to_string()).context("writing ready")?;
    std::fs::rename(&pending, args.dir.join("ready")).context("renaming ready into place")?;
    let ready = Instant::now();
    if args.perf {
        return perf::serve(&args.dir, kubelet, Duration::from_secs(args.timeout_seconds)).await;
    }
    let Some(out) = &args.out else { bail!("--out is required without --perf") };

    let devices =
        settled_devices(&kubelet, Duration::from_secs(args.settle_seconds), Duration::from_secs(args.timeout_seconds))
            .await?;
    let mut allocations = Vec::new();
    for (resource, list) in &devices {
        let mut healthy: Vec<String> = match args.volcano.then(|| volcano_free_chips(&api, &args.node_name, resource)) {
            Some(Some(free)) => free,
            _ => list.iter().filter(|d| d.health == "Healthy").map(|d| d.id.clone()).collect(),
        };
        healthy.sort_by_key(|id| natural(id));
        for &count in &args.allocate {
            if count == 0 || count > healthy.len() {
                continue;
            }
            let ids: Vec<String> = healthy[..count].to_vec();
            let pod = args.volcano.then(|| bound_pod(&api, &args.node_name, resource, &ids));
            let mut allocation = allocate(&kubelet, resource, ids).await;
            if let Some(pod) = pod {
                // The plugin writes what it handed out on the pod; give it a moment to land.
                tokio::time::sleep(Duration::from_secs(1)).await;
                let stored: Option<Pod> = api.get(Some("default"), &pod);
                allocation["pod_annotations"] = json!(stored.and_then(|p| p.metadata.annotations));
                // Its containers have run: the next pod's chips are free again.
                finish_pod(&api, &pod);
            }
            allocations.push(allocation);
        }
    }
    let mut record = json!({
        "registrations": kubelet.registrations().iter().map(|r| json!({
            "resource": r.request.resource_name,
            "pre_start_required": r.options.pre_start_required,
            "get_preferred_allocation_available": r.options.get_preferred_allocation_available,
        })).collect::<Vec<_>>(),
        "allocations": allocations,
    });
    merge(&mut record, state_record(&api, &args.node_name, &devices));
    if let Some(signal) = &args.recover_signal {
        std::fs::write(args.dir.join("faulted"), "").context("writing faulted")?;
        let deadline = Instant::now() + Duration::from_secs(args.timeout_seconds);
        while !signal.exists() {
            if Instant::now() > deadline {
                bail!("no recovery signal {} within {}s", signal.display(), args.timeout_seconds);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let settle = Duration::from_secs(args.settle_seconds);
        let devices = settled_devices(&kubelet, settle, Duration::from_secs(args.timeout_seconds)).await?;
        record["recovered"] = state_record(&api, &args.node_name, &devices);
    }
    if let Some(seconds) = args.follow_seconds {
        let settle = Duration::from_secs(args.settle_seconds);
        record["timeline"] = follow::follow(&kubelet, ready, settle, Duration::from_secs(seconds)).await;
    }
    std::fs::write(out, serde_json::to_vec_pretty(&record)?).with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}

/// What the plugins have told the kubelet and the API server about the chips: device lists, the Node, ConfigMaps.
fn state_record(api: &FakeApiServer, node_name: &str, devices: &BTreeMap<String, Vec<Device>>) -> Value {
    json!({
        "devices": devices.iter().map(|(resource, list)| (resource.clone(), list.iter().map(|d| json!({
            "id": d.id, "health": d.health,
            "numa": d.topology.as_ref().map(|t| t.nodes.iter().map(|n| n.id).collect::<Vec<_>>()),
        })).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
        "node": node_record(api, node_name),
        "configmaps": api.list::<ConfigMap>().iter().map(|map| json!({
            "namespace": map.metadata.namespace, "name": map.metadata.name, "labels": map.metadata.labels,
            "data": map.data,
        })).collect::<Vec<_>>(),
    })
}

/// `extra`'s keys set on `record` (both objects).
fn merge(record: &mut Value, extra: Value) {
    if let (Some(record), Value::Object(extra)) = (record.as_object_mut(), extra) {
        record.extend(extra);
    }
}

/// The Node as the kubelet registers it, and the namespace the device-info ConfigMap goes to.
fn seed(api: &FakeApiServer, node_name: &str) {
    api.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": node_name,
            "labels": {"kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": node_name}]},
    }));
    for namespace in ["kube-system", "default"] {
        api.seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}));
    }
}

/// A pending pod on the node as Volcano binds it: one container requesting the devices, the scheduler's choice in
/// the pod's annotations (`<resource>: Ascend910-0,...` and `predicate-time`, the nanoseconds it decided at: what
/// Huawei's plugin orders candidate pods by). Returns its name.
///
/// On an Ascend950 node Volcano names the chips by the `DeviceID` the Node's `baseDeviceInfos` annotation gives each
/// device, not by the device's own number (mind-cluster `component/ascend-for-volcano/internal/npu/base/task.go`,
/// `SetNPUTopologyToPodFn`; `plugin/node.go`, `buildPhyIdToDeviceIdMap`), so the pod does too: the plugin's own
/// annotation decides which chips it hands out.
fn bound_pod(api: &FakeApiServer, node_name: &str, resource: &str, ids: &[String]) -> String {
    let name = format!("volcano-{}", ids.len());
    let ids = volcano_names(api, node_name, ids);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let count = ids.len().to_string();
    api.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "annotations": {resource: ids.join(","), "predicate-time": nanos.to_string()}},
        "spec": {"nodeName": node_name, "schedulerName": "volcano", "containers": [{"name": "main", "image": "busybox",
            "resources": {"requests": {resource: count}, "limits": {resource: count}}}]},
        "status": {"phase": "Pending"},
    }));
    name
}

/// The chips Volcano's Ascend plugin counts free on the node, as it counts them by default
/// (`self-maintain-available-card`: mind-cluster `component/ascend-for-volcano/common/k8s/cmmgr.go`,
/// `initNodeDeviceInfoByCmMgr`): the keys of the Node's `baseDeviceInfos`, less the chips the device-info ConfigMap
/// lists as `<resource>-Unhealthy` or `<resource>-Recovering`. `None` when the node has no such annotation or
/// ConfigMap yet. In Volcano mode the kubelet's device ids are slots, not chips, so this, not the kubelet's list, is
/// what the scheduler chooses from.
fn volcano_free_chips(api: &FakeApiServer, node_name: &str, resource: &str) -> Option<Vec<String>> {
    let infos = base_device_infos(&api.get::<Node>(None, node_name)?)?;
    let map: ConfigMap = api.get(Some("kube-system"), &format!("mindx-dl-deviceinfo-{node_name}"))?;
    let document: Value = serde_json::from_str(map.data?.get("DeviceInfoCfg")?).ok()?;
    let list = &document["DeviceInfo"]["DeviceList"];
    let out: Vec<String> = ["Unhealthy", "Recovering"]
        .iter()
        .filter_map(|state| list[format!("{resource}-{state}").as_str()].as_str())
        .flat_map(|chips| chips.split(',').filter(|c| !c.is_empty()).map(str::to_owned))
        .collect();
    Some(infos.as_object()?.keys().filter(|chip| !out.contains(chip)).cloned().collect())
}

/// The names Volcano writes for the chosen devices: `<prefix>-<DeviceID>` on a Node whose chip name starts with
/// `Ascend950` and that has `baseDeviceInfos` with a `DeviceID` for each, the devices' own names elsewhere.
fn volcano_names(api: &FakeApiServer, node_name: &str, ids: &[String]) -> Vec<String> {
    let Some(node) = api.get::<Node>(None, node_name) else { return ids.to_vec() };
    let ascend950 = node
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get("node.kubernetes.io/npu.chip.name"))
        .is_some_and(|chip| chip.starts_with("Ascend950"));
    let infos = base_device_infos(&node);
    let (true, Some(infos)) = (ascend950, infos) else { return ids.to_vec() };
    ids.iter()
        .map(|id| {
            let prefix = id.rsplit_once('-').map_or(id.as_str(), |(prefix, _)| prefix);
            match infos[id.as_str()]["DeviceID"].as_i64() {
                Some(device_id) => format!("{prefix}-{device_id}"),
                None => id.clone(),
            }
        })
        .collect()
}

/// The Node's `baseDeviceInfos` annotation, read as JSON.
fn base_device_infos(node: &Node) -> Option<Value> {
    serde_json::from_str(node.metadata.annotations.as_ref()?.get("baseDeviceInfos")?).ok()
}

/// Marks a pod Succeeded, as the kubelet does when its containers have exited.
fn finish_pod(api: &FakeApiServer, name: &str) {
    if let Some(mut pod) = api.get_json("v1", "Pod", Some("default"), name) {
        pod["status"] = json!({"phase": "Succeeded"});
        if let Some(metadata) = pod["metadata"].as_object_mut() {
            metadata.remove("resourceVersion");
        }
        api.seed(pod);
    }
}

fn node_record(api: &FakeApiServer, node_name: &str) -> Value {
    let node: Option<Node> = api.get(None, node_name);
    let metadata = node.map(|n| n.metadata).unwrap_or_default();
    json!({"labels": metadata.labels, "annotations": metadata.annotations})
}

/// Serves the fake API server over TLS on a loopback port, and writes the in-cluster files that trust it.
async fn serve_tls(api: &FakeApiServer, dir: &Path) -> Result<u16> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;
    let key = KeyPair::generate()?;
    let params = CertificateParams::new(vec![
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
        "kubernetes.default.svc".to_owned(),
    ])?;
    let cert = params.signed_by(&key, &ca)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("ca.crt"), ca.pem())?;
    std::fs::write(dir.join("token"), "peer-tests")?;
    std::fs::write(dir.join("namespace"), "kube-system")?;

    let chain = vec![cert.der().clone()];
    let private = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, private)?;
    // HTTP/1.1 only, as the fake API server speaks it: Go's client then does not try HTTP/2.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let backend = api.address();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(relay(acceptor.clone(), stream, backend));
        }
    });
    Ok(port)
}

async fn relay(acceptor: TlsAcceptor, stream: TcpStream, backend: SocketAddr) {
    let Ok(mut tls) = acceptor.accept(stream).await else { return };
    let Ok(mut plain) = TcpStream::connect(backend).await else { return };
    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
}

/// Every resource's device list once none has changed for `settle`.
async fn settled_devices(
    kubelet: &FakeKubelet,
    settle: Duration,
    timeout: Duration,
) -> Result<BTreeMap<String, Vec<Device>>> {
    let deadline = Instant::now() + timeout;
    let snapshot = || -> BTreeMap<String, Vec<Device>> {
        kubelet
            .registrations()
            .iter()
            .filter_map(|r| kubelet.devices(&r.request.resource_name).map(|d| (r.request.resource_name.clone(), d)))
            .collect()
    };
    let (mut last, mut since) = (snapshot(), Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = snapshot();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if !last.is_empty() && since.elapsed() >= settle {
            return Ok(last);
        }
        if Instant::now() > deadline {
            bail!(
                "no settled device list within {timeout:?}: registrations {:?}, devices {last:?}",
                kubelet.registrations().iter().map(|r| r.request.resource_name.clone()).collect::<Vec<_>>()
            );
        }
    }
}

async fn allocate(kubelet: &FakeKubelet, resource: &str, ids: Vec<String>) -> Value {
    let request = AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: ids.clone() }] };
    let response = match kubelet.plugin_client(resource).await {
        Ok(mut client) => client.allocate(request).await.map(|r| r.into_inner()).map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    match response {
        Ok(response) => {
            let containers: Vec<Value> = response.container_responses.iter().map(|c| json!({
                "envs": c.envs,
                "annotations": c.annotations,
                "mounts": c.mounts.iter().map(|m| json!({"container_path": m.container_path, "host_path": m.host_path, "read_only": m.read_only})).collect::<Vec<_>>(),
                "devices": c.devices.iter().map(|d| json!({"container_path": d.container_path, "host_path": d.host_path, "permissions": d.permissions})).collect::<Vec<_>>(),
                "cdi_devices": c.cdi_devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
            })).collect();
            json!({"resource": resource, "ids": ids, "containers": containers})
        }
        Err(error) => json!({"resource": resource, "ids": ids, "error": error}),
    }
}

/// Sorts `Ascend910-10` after `Ascend910-9`.
fn natural(id: &str) -> (String, u64) {
    let digits = id.len() - id.chars().rev().take_while(char::is_ascii_digit).count();
    (id[..digits].to_owned(), id[digits..].parse().unwrap_or(0))
}
