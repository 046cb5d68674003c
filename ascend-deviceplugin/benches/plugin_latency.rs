//! Allocate cost (domain planning alone and the full RPC over a unix socket) and the latency from a chip's
//! health change to the kubelet's ListAndWatch update, on eight mocked 910B chips.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use ascend_dcmi::FaultCode;
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use ascend_deviceplugin::{plan_container, AllocateConfig};
use criterion::{criterion_group, criterion_main, Criterion};
use support::{health_of, FakeHost, Harness};

const RESOURCE: &str = "huawei.com/Ascend910";

fn eight_ids() -> Vec<String> {
    (0..8).map(|phy| format!("Ascend910-{phy}")).collect()
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let harness = runtime.block_on(async {
        let harness = Harness::start(FakeHost::eight_910b(), |config| {
            config.monitor.poll_interval = Duration::from_secs(30);
        })
        .await;
        harness
            .wait_devices(RESOURCE, "eight healthy", |d| d.len() == 8 && d.iter().all(|(_, h)| h == "Healthy"))
            .await;
        harness
    });

    let snapshot_resource = runtime.block_on(async {
        // The plan needs the domain view; rebuild it the way the service does, from what was advertised.
        let monitor = ascend_deviceplugin::HealthMonitor::start(
            FakeHost::eight_910b().manager(),
            ascend_deviceplugin::MonitorConfig::default(),
            std::sync::Arc::new(ascend_deviceplugin::NoopObserver),
        )
        .expect("monitor");
        let mut changes = monitor.subscribe();
        loop {
            if let Some(resource) = changes
                .borrow_and_update()
                .resource(RESOURCE)
                .filter(|r| r.devices.len() == 8 && r.devices.values().all(|d| d.health.is_healthy()))
            {
                break resource.clone();
            }
            changes.changed().await.expect("monitor publishes");
        }
    });
    let config = AllocateConfig::default();
    let ids = eight_ids();
    c.bench_function("plan_container/8 chips cdi", |b| {
        b.iter(|| plan_container(&snapshot_resource, std::hint::black_box(&ids), &config).expect("plans"))
    });

    let mut client = runtime.block_on(harness.kubelet.plugin_client(RESOURCE)).expect("client");
    c.bench_function("Allocate RPC/8 chips over unix socket", |b| {
        b.iter(|| {
            let request =
                AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: eight_ids() }] };
            runtime.block_on(client.allocate(request)).expect("allocates")
        })
    });

    let mut group = c.benchmark_group("health change to ListAndWatch");
    group.sample_size(20);
    group.bench_function("fault event, raise + clear", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                harness.host.raise(3, FaultCode(0x80E0_1801), true);
                runtime.block_on(
                    harness.wait_devices(RESOURCE, "unhealthy", |d| health_of(d, "Ascend910-3") == Some("Unhealthy")),
                );
                harness.host.clear(3, true);
                runtime.block_on(
                    harness.wait_devices(RESOURCE, "healthy", |d| health_of(d, "Ascend910-3") == Some("Healthy")),
                );
                total += started.elapsed() / 2;
            }
            total
        })
    });
    group.finish();
    let mut harness = harness;
    runtime.block_on(harness.stop());
}

criterion_group!(plugin_latency, benches);
criterion_main!(plugin_latency);
