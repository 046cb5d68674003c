//! The kubelet layer against the DRA kubelet peer, over real unix sockets.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::{
    ClaimError, ClaimRef, DeviceHealth, Driver, HealthStatus, KubeletPlugin, PluginConfig, PreparedDevice, DRA_V1,
    DRA_V1BETA1, HEALTH_V1ALPHA1,
};
use tokio::sync::watch;

const DRIVER: &str = "widgets.example.com";
const WAIT: Duration = Duration::from_secs(10);

/// Gives each claim the device named after it; a claim named `broken` fails.
struct Widgets {
    unprepared: Mutex<Vec<String>>,
    health: Option<watch::Receiver<Vec<DeviceHealth>>>,
}

impl Widgets {
    fn new() -> Arc<Self> {
        Arc::new(Widgets { unprepared: Mutex::new(Vec::new()), health: None })
    }
}

impl Driver for Widgets {
    async fn prepare(&self, claim: &ClaimRef) -> Result<Vec<PreparedDevice>, ClaimError> {
        if claim.name == "broken" {
            return Err(ClaimError::new(format!("claim {} is broken", claim.name)));
        }
        Ok(vec![PreparedDevice {
            request_names: vec!["widget".into()],
            pool: "node-a".into(),
            device: claim.name.clone(),
            cdi_device_ids: vec![format!("example.com/widget={}", claim.uid)],
            share_id: Some("share-1".into()),
        }])
    }

    async fn unprepare(&self, claim: &ClaimRef) -> Result<(), ClaimError> {
        self.unprepared.lock().unwrap().push(claim.uid.clone());
        Ok(())
    }

    fn health(&self) -> Option<watch::Receiver<Vec<DeviceHealth>>> {
        self.health.clone()
    }
}

fn config(dir: &tempfile::TempDir) -> PluginConfig {
    let mut config = PluginConfig::new(DRIVER);
    config.registry_dir = dir.path().join("plugins_registry");
    config.plugins_dir = dir.path().join("plugins");
    config.watch_interval = Duration::from_millis(50);
    config
}

fn claim(name: &str, uid: &str) -> ClaimRef {
    ClaimRef { namespace: "default".into(), name: name.into(), uid: uid.into() }
}

#[tokio::test]
async fn a_current_kubelet_registers_v1_and_every_claim_gets_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let driver = Widgets::new();
    let plugin = KubeletPlugin::start(config(&dir), Arc::clone(&driver)).await.unwrap();
    let kubelet = FakeKubelet::start(&dir.path().join("plugins_registry"));
    let registered = kubelet.wait_registered(DRIVER, WAIT).await.unwrap();
    assert_eq!(registered.service, DRA_V1);
    assert_eq!(registered.supported_versions, [DRA_V1, DRA_V1BETA1], "v1 first, no health without a report");
    assert_eq!(registered.endpoint, dir.path().join("plugins").join(DRIVER).join("dra.sock"));
    let mut registration = plugin.registration();
    registration.wait_for(|state| state.registered && state.registrations == 1).await.unwrap();

    let claims = [claim("one", "uid-1"), claim("broken", "uid-2"), claim("", "uid-3")];
    let answers = kubelet.prepare(DRIVER, &claims).await.unwrap();
    let devices = answers["uid-1"].as_ref().unwrap();
    assert_eq!(devices[0].device, "one");
    assert_eq!(devices[0].cdi_device_ids, ["example.com/widget=uid-1"]);
    assert_eq!(devices[0].share_id.as_deref(), Some("share-1"), "v1 carries the share id");
    assert_eq!(answers["uid-2"].as_ref().unwrap_err(), "claim broken is broken");
    assert!(answers["uid-3"].as_ref().unwrap_err().contains("has no name"), "{answers:?}");

    let answers = kubelet.unprepare(DRIVER, &claims[..2]).await.unwrap();
    assert_eq!(answers.len(), 2);
    assert!(answers.values().all(Result::is_ok));
    assert_eq!(*driver.unprepared.lock().unwrap(), ["uid-1", "uid-2"]);
    plugin.shutdown().await;
}

#[tokio::test]
async fn an_older_kubelet_falls_back_to_v1beta1() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = KubeletPlugin::start(config(&dir), Widgets::new()).await.unwrap();
    let kubelet = FakeKubelet::start_knowing(&dir.path().join("plugins_registry"), &[DRA_V1BETA1]);
    assert_eq!(kubelet.wait_registered(DRIVER, WAIT).await.unwrap().service, DRA_V1BETA1);
    let answers = kubelet.prepare(DRIVER, &[claim("one", "uid-1")]).await.unwrap();
    let device = &answers["uid-1"].as_ref().unwrap()[0];
    assert_eq!((device.pool.as_str(), device.device.as_str()), ("node-a", "one"));
    assert_eq!(device.share_id, None, "v1beta1 has no share id");
    assert!(kubelet.unprepare(DRIVER, &[claim("one", "uid-1")]).await.unwrap()["uid-1"].is_ok());
    plugin.shutdown().await;
}

#[tokio::test]
async fn a_kubelet_knowing_no_offered_service_refuses_and_the_plugin_hears_why() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = KubeletPlugin::start(config(&dir), Widgets::new()).await.unwrap();
    let kubelet = FakeKubelet::start_knowing(&dir.path().join("plugins_registry"), &["v2.DRAPlugin"]);
    let mut registration = plugin.registration();
    let state = registration.wait_for(|state| state.error.is_some()).await.unwrap().clone();
    assert!(!state.registered);
    assert!(state.error.unwrap().contains("none of the plugin's versions"));
    assert!(kubelet.registered(DRIVER).is_none());
    assert_eq!(kubelet.refused().len(), 1);
    plugin.shutdown().await;
}

#[tokio::test]
async fn stale_sockets_are_replaced_and_shutdown_removes_both() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir);
    std::fs::create_dir_all(config.data_dir()).unwrap();
    std::fs::create_dir_all(&config.registry_dir).unwrap();
    std::fs::write(config.dra_socket(), "left by a crashed instance").unwrap();
    std::fs::write(config.registration_socket(), "left by a crashed instance").unwrap();

    let plugin = KubeletPlugin::start(config.clone(), Widgets::new()).await.unwrap();
    let kubelet = FakeKubelet::start(&config.registry_dir);
    kubelet.wait_registered(DRIVER, WAIT).await.unwrap();
    plugin.shutdown().await;
    assert!(!config.dra_socket().exists());
    assert!(!config.registration_socket().exists());
    kubelet.wait_until("deregistration", WAIT, |k| k.registered(DRIVER).is_none()).await.unwrap();
}

#[tokio::test]
async fn the_driver_registers_again_after_a_kubelet_restart_and_after_its_sockets_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(&dir);
    let plugin = KubeletPlugin::start(config.clone(), Widgets::new()).await.unwrap();
    let mut registration = plugin.registration();
    let mut kubelet = FakeKubelet::start(&config.registry_dir);
    registration.wait_for(|state| state.registrations == 1).await.unwrap();

    kubelet.restart();
    registration.wait_for(|state| state.registrations == 2).await.unwrap();

    std::fs::remove_file(config.registration_socket()).unwrap();
    registration.wait_for(|state| state.registrations == 3).await.unwrap();

    std::fs::remove_file(config.dra_socket()).unwrap();
    registration.wait_for(|state| state.registrations == 4).await.unwrap();
    kubelet.wait_registered(DRIVER, WAIT).await.unwrap();
    let answers = kubelet.prepare(DRIVER, &[claim("one", "uid-1")]).await.unwrap();
    assert!(answers["uid-1"].is_ok(), "the new DRA socket serves: {answers:?}");
    plugin.shutdown().await;
}

#[tokio::test]
async fn health_is_streamed_on_change_and_refreshed_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir);
    config.health_refresh = Duration::from_millis(100);
    let healthy = |status| DeviceHealth {
        pool: "node-a".into(),
        device: "one".into(),
        status,
        message: "checked".into(),
        timeout: Some(Duration::from_secs(45)),
    };
    let (report, health) = watch::channel(vec![healthy(HealthStatus::Healthy)]);
    let driver = Arc::new(Widgets { unprepared: Mutex::new(Vec::new()), health: Some(health) });
    let plugin = KubeletPlugin::start(config.clone(), driver).await.unwrap();
    let kubelet = FakeKubelet::start(&config.registry_dir);
    let registered = kubelet.wait_registered(DRIVER, WAIT).await.unwrap();
    assert_eq!(registered.supported_versions, [DRA_V1, DRA_V1BETA1, HEALTH_V1ALPHA1]);

    kubelet
        .wait_until("three refreshes", WAIT, |k| k.registered(DRIVER).is_some_and(|p| p.health_messages.len() >= 3))
        .await
        .unwrap();
    let device = &kubelet.registered(DRIVER).unwrap().health.unwrap()[0];
    assert_eq!(device.health, 1, "HEALTHY");
    assert_eq!(device.health_check_timeout_seconds, 45);
    assert_eq!(device.device.as_ref().unwrap().device_name, "one");
    assert!(device.last_updated_time > 1_700_000_000);

    report.send_replace(vec![healthy(HealthStatus::Unhealthy)]);
    kubelet
        .wait_until("the fault", WAIT, |k| {
            k.registered(DRIVER).and_then(|p| p.health).is_some_and(|devices| devices[0].health == 2)
        })
        .await
        .unwrap();
    plugin.shutdown().await;
}

#[tokio::test]
async fn a_bad_driver_name_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir);
    config.driver_name = "Widgets_Example".into();
    let error = KubeletPlugin::start(config.clone(), Widgets::new()).await.unwrap_err().to_string();
    assert!(error.contains("\"Widgets_Example\" is not a DNS subdomain"), "{error}");
    assert!(!config.registry_dir.exists());
}
