//! Prepare latency of the driver library on the simulated eight-chip Atlas 800T A2 (dcmi-sim), with the in-process
//! DRA kubelet peer over real unix sockets and the fake API server over real HTTP, all in this process:
//! `prepare/1chip`, `prepare/8chips` time `NodePrepareResources` as the kubelet calls it (read the claim, plan, write
//! the CDI spec, write the checkpoint, answer), each followed by an untimed unprepare; p50 and p99 are printed.
//!
//! A developer's bench of the library (`cargo bench -p ascend-dra --bench prepare_latency`; needs the built
//! dcmi-sim library, a dev-dependency). The figures of docs/performance.md (prepare latency, fault to taint, the
//! driver's resident memory) come from `benches/run.sh`, which measures the real `ascend-dra-driver` binary in a
//! process of its own (`benches/src/bin/perf-dra-driver`), so that its memory is not mixed with the fakes'.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{Dcmi, DeviceManager};
use ascend_dra::DriverConfig;
use criterion::{criterion_group, criterion_main, Criterion};
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::ClaimRef;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::resource::v1::ResourceSlice;
use latency_stats::Percentiles;
use serde_json::json;

const DRIVER: &str = "npu.huawei.com";
const NODE: &str = "bench-node";
const POLL: Duration = Duration::from_millis(100);

struct Bench {
    server: FakeApiServer,
    kubelet: FakeKubelet,
    _dir: tempfile::TempDir,
}

fn start(runtime: &tokio::runtime::Runtime) -> Bench {
    let dir = tempfile::tempdir().expect("temporary directory");
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("valid");
    let host = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default()).expect("fake host");
    let overlay = dir.path().join("overlay.toml");
    std::env::set_var("DCMI_SIM_CONFIG", &host.topology);
    std::env::set_var("DCMI_SIM_OVERLAY", &overlay);
    let dcmi = Dcmi::builder()
        .library_path(host.library.clone())
        .host_root(host.root.clone())
        .verify_library_ownership(false)
        .init()
        .expect("the simulator loads");
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let mut config = DriverConfig::in_work_dir(NODE, dir.path(), &host.root);
    config.monitor.poll_interval = POLL;
    runtime.block_on(async {
        let server = FakeApiServer::start().await.expect("fake API server");
        server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
        let kubelet = FakeKubelet::start(&config.plugin.registry_dir);
        let client = server.client();
        tokio::spawn(async move {
            if let Err(error) = ascend_dra::run(config, manager, client, std::future::pending()).await {
                eprintln!("the driver stopped: {error}");
            }
        });
        kubelet.wait_registered(DRIVER, Duration::from_secs(30)).await.expect("the driver registers");
        wait(|| published_devices(&server) == 8).await;
        Bench { server, kubelet, _dir: dir }
    })
}

fn published_slices(server: &FakeApiServer) -> Vec<ResourceSlice> {
    server.list::<ResourceSlice>().into_iter().filter(|slice| slice.spec.driver == DRIVER).collect()
}

fn published_devices(server: &FakeApiServer) -> usize {
    published_slices(server).iter().map(|slice| slice.spec.devices.as_ref().map_or(0, Vec::len)).sum()
}

async fn wait(mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < Duration::from_secs(30), "not reached within 30 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn claim(server: &FakeApiServer, name: &str, chips: usize) -> ClaimRef {
    let results: Vec<_> = (0..chips)
        .map(|phy| json!({"request": "npu", "driver": DRIVER, "pool": NODE, "device": format!("npu-{phy}")}))
        .collect();
    let stored = server.seed(json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {}, "status": {"allocation": {"devices": {"results": results}}},
    }));
    let uid = stored["metadata"]["uid"].as_str().expect("uid").to_owned();
    ClaimRef { namespace: "default".into(), name: name.into(), uid }
}

async fn prepare_once(bench: &Bench, chips: usize, serial: u64) -> Duration {
    // One name per size: the fake server replaces the object (with a new UID), so its store stays small.
    let claim = claim(&bench.server, &format!("bench-{chips}-{}", serial % 2), chips);
    let started = Instant::now();
    let answers = bench.kubelet.prepare(DRIVER, std::slice::from_ref(&claim)).await.expect("prepare call");
    let elapsed = started.elapsed();
    assert!(answers[&claim.uid].is_ok(), "{:?}", answers[&claim.uid]);
    let unprepared = bench.kubelet.unprepare(DRIVER, std::slice::from_ref(&claim)).await.expect("unprepare call");
    assert!(unprepared[&claim.uid].is_ok(), "{:?}", unprepared[&claim.uid]);
    elapsed
}

fn report(what: &str, samples: Vec<Duration>) {
    let Some(figures) = Percentiles::of(samples) else { return };
    println!("{what}: n={} p50={:?} p99={:?} max={:?}", figures.count, figures.p50, figures.p99, figures.max);
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let bench = start(&runtime);
    let mut serial = 0;
    let mut group = c.benchmark_group("prepare");
    for (chips, name) in [(1, "1chip"), (8, "8chips")] {
        let mut samples = Vec::new();
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    serial += 1;
                    let elapsed = runtime.block_on(prepare_once(&bench, chips, serial));
                    samples.push(elapsed);
                    total += elapsed;
                }
                total
            });
        });
        report(&format!("prepare {name}"), samples);
    }
    group.finish();
}

criterion_group! {
    name = prepare;
    config = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(prepare);
