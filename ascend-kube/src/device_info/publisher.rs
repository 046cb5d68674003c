//! Writes a node's device-info ConfigMap ([`super`]) at the pace Volcano expects, and reads back the
//! chips an operator separated by hand.
//!
//! Cadence: a write at most every [`PublisherConfig::min_interval`] (1 s, Huawei's `MinCMReportInterval`,
//! `pkg/common/constants.go`), and otherwise only when the list changes, plus one heartbeat: an unchanged list is
//! written again after [`PublisherConfig::refresh_interval`] ([`DEFAULT_REFRESH_INTERVAL`], 9 min).
//!
//! The heartbeat is what Volcano's scheduler needs, no more. Its mind-cluster code (volcano-sh/volcano,
//! `third_party/mindcluster/common/k8s/cmmgr.go`, `setNeedRestartInformer`, with `deviceInfoRefreshTime = 600` in
//! `third_party/mindcluster/common/k8s/const.go`) never reads `UpdateTime` for age: it remembers when its informer
//! last delivered each node's map (`CacheUpdateTime`), and when that is more than 600 s ago it restarts its
//! ConfigMap informer, a new LIST of every node's map (at most once per `minRestartInterval`, also 600 s). Stale
//! device info is not dropped and the node stays schedulable. So a node's map must change at least every 600 s;
//! [`DEFAULT_REFRESH_INTERVAL`] is that less a minute for the write to land (a request timeout and a retry).
//! Huawei's own plugin writes every 5 minutes; 9 is enough. (The same function also flags a restart at 60 s,
//! `clusterInfoRefreshTime`, in every mode as it is written; a heartbeat under a minute on every node would cost the
//! API server far more than the one LIST per 10 minutes it avoids, see docs/scale.md.)
//!
//! `UpdateTime` strictly increases from write to write, even when two writes fall in one second or the clock steps
//! back: Volcano ignores a map whose `UpdateTime` is not greater than the last one it saw (`updateNPUNodeDeviceInfos`,
//! volcano-sh/volcano `pkg/scheduler/plugins/deviceshare/devices/ascend/310p/vnpu/init_policy.go`).
//!
//! The operator's `ManuallySeparateNPU` is read from a watch of this one ConfigMap ([`crate::Watched`]), not by a
//! GET per round.
//!
//! Only the keys this writer owns are sent, as a JSON merge patch: the label, `DeviceInfoCfg`, and
//! `ManuallySeparateNPU` only when the ConfigMap is created (empty). An operator's edit of `ManuallySeparateNPU`
//! is therefore never overwritten, and no read-modify-write race exists with `kubectl edit`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use tokio::sync::watch;

use super::document::{
    config_map_name, device_info_cfg, parse_manually_separated, DeviceList, Placement, CONSUMER_LABEL,
    CONSUMER_LABEL_VALUE, DEVICE_INFO_KEY, DEVICE_INFO_NAMESPACE, MANUALLY_SEPARATE_NPU_KEY,
};
use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::error::Result;
use crate::watched::Watched;

/// How long Volcano's scheduler lets a node's device info go without an update before it restarts its ConfigMap
/// informer (`deviceInfoRefreshTime`, volcano-sh/volcano `third_party/mindcluster/common/k8s/const.go`).
pub const VOLCANO_DEVICE_INFO_REFRESH_TIME: Duration = Duration::from_secs(600);

/// The heartbeat of an unchanged list: [`VOLCANO_DEVICE_INFO_REFRESH_TIME`] less a minute for the write to land.
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(540);

/// How often the ConfigMap may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublisherConfig {
    /// The shortest time between two writes.
    pub min_interval: Duration,
    /// An unchanged list is written again after this long.
    pub refresh_interval: Duration,
    /// How long one API request may take.
    pub request_timeout: Duration,
    /// Super-pod placement of the node.
    pub placement: Placement,
}

impl Default for PublisherConfig {
    fn default() -> Self {
        PublisherConfig {
            min_interval: Duration::from_secs(1),
            refresh_interval: DEFAULT_REFRESH_INTERVAL,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            placement: Placement::default(),
        }
    }
}

/// What [`DeviceInfoPublisher::publish`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// Written with this `UpdateTime`.
    Written(i64),
    /// The same list was written less than the refresh interval ago.
    Unchanged,
    /// A write happened less than the minimum interval ago: try again after this long.
    TooSoon(Duration),
}

struct LastWrite {
    list: DeviceList,
    at: Instant,
    update_time: i64,
}

/// The writer of one node's device-info ConfigMap.
pub struct DeviceInfoPublisher {
    config_maps: Api<ConfigMap>,
    watched: Watched<ConfigMap>,
    name: String,
    config: PublisherConfig,
    last: Option<LastWrite>,
}

impl std::fmt::Debug for DeviceInfoPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceInfoPublisher").field("name", &self.name).finish_non_exhaustive()
    }
}

impl DeviceInfoPublisher {
    /// A writer of `kube-system/mindx-dl-deviceinfo-<node>`; starts the watch of that ConfigMap on the current
    /// Tokio runtime.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn new(client: kube::Client, node: &str, config: PublisherConfig) -> Result<Self> {
        check_node_name(node)?;
        let name = config_map_name(node);
        let config_maps: Api<ConfigMap> = Api::namespaced(client, DEVICE_INFO_NAMESPACE);
        let watched = Watched::start(
            config_maps.clone(),
            &format!("metadata.name={name}"),
            format!("configmaps/{DEVICE_INFO_NAMESPACE}/{name}"),
        );
        Ok(DeviceInfoPublisher { config_maps, watched, name, config, last: None })
    }

    /// The ConfigMap's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long until an unchanged list is due for its heartbeat write; `None` before the first write.
    pub fn heartbeat_due_in(&self) -> Option<Duration> {
        self.last.as_ref().map(|last| self.config.refresh_interval.saturating_sub(last.at.elapsed()))
    }

    /// A counter bumped after every change of the ConfigMap the watch saw (the operator's edits, and this writer's
    /// own writes).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.watched.changes()
    }

    /// Writes `list` unless the cadence says not to (see the module docs).
    ///
    /// # Errors
    /// [`crate::Error::Api`], [`crate::Error::Transport`] or [`crate::Error::Timeout`]; nothing counts as written
    /// then, so the next call tries again.
    pub async fn publish(&mut self, list: &DeviceList) -> Result<Published> {
        if let Some(last) = &self.last {
            let age = last.at.elapsed();
            if last.list == *list && age < self.config.refresh_interval {
                return Ok(Published::Unchanged);
            }
            if age < self.config.min_interval {
                return Ok(Published::TooSoon(self.config.min_interval - age));
            }
        }
        let update_time = next_update_time(self.last.as_ref().map(|last| last.update_time), unix_seconds());
        self.write(list, update_time).await?;
        self.last = Some(LastWrite { list: list.clone(), at: Instant::now(), update_time });
        Ok(Published::Written(update_time))
    }

    async fn write(&self, list: &DeviceList, update_time: i64) -> Result<()> {
        let document = device_info_cfg(list, update_time, self.config.placement);
        let object = format!("configmaps/{DEVICE_INFO_NAMESPACE}/{}", self.name);
        let patch = json!({
            "metadata": {"labels": {CONSUMER_LABEL: CONSUMER_LABEL_VALUE}},
            "data": {DEVICE_INFO_KEY: document},
        });
        let params = PatchParams { field_manager: Some(DEVICE_PLUGIN_FIELD_MANAGER.into()), ..PatchParams::default() };
        let timeout = self.config.request_timeout;
        let patched = request(
            "patch",
            object.clone(),
            timeout,
            self.config_maps.patch(&self.name, &params, &Patch::Merge(&patch)),
        )
        .await;
        match patched {
            Err(error) if error.is_not_found() => {
                let mut created = ConfigMap::default();
                created.metadata.name = Some(self.name.clone());
                created.metadata.namespace = Some(DEVICE_INFO_NAMESPACE.to_owned());
                created.metadata.labels = Some([(CONSUMER_LABEL.to_owned(), CONSUMER_LABEL_VALUE.to_owned())].into());
                created.data = Some(
                    [(DEVICE_INFO_KEY.to_owned(), document), (MANUALLY_SEPARATE_NPU_KEY.to_owned(), String::new())]
                        .into(),
                );
                let post =
                    PostParams { field_manager: Some(DEVICE_PLUGIN_FIELD_MANAGER.into()), ..PostParams::default() };
                request("create", object, timeout, self.config_maps.create(&post, &created)).await.map(drop)
            }
            other => other.map(drop),
        }
    }

    /// The chips listed in `ManuallySeparateNPU` (empty when the ConfigMap does not exist yet), as the watch has
    /// the ConfigMap. Entries that are not chip names are logged and ignored.
    ///
    /// # Errors
    /// [`crate::Error::Timeout`] when the watch's first list does not arrive within the request timeout.
    pub async fn manually_separated(&self) -> Result<BTreeSet<String>> {
        self.watched.ready(self.config.request_timeout).await?;
        let found = self.watched.get(Some(DEVICE_INFO_NAMESPACE), &self.name);
        let text = found
            .and_then(|map| map.data.as_ref().and_then(|data| data.get(MANUALLY_SEPARATE_NPU_KEY).cloned()))
            .unwrap_or_default();
        let (chips, invalid) = parse_manually_separated(&text);
        if !invalid.is_empty() {
            tracing::warn!(
                config_map = %self.name, ?invalid,
                "ignoring ManuallySeparateNPU entries that are not chip names (expected Ascend910-3 or npu-3)"
            );
        }
        Ok(chips)
    }
}

/// The next `UpdateTime`: now, but always after the last one.
pub fn next_update_time(last: Option<i64>, now: i64) -> i64 {
    match last {
        Some(last) if now <= last => last + 1,
        _ => now,
    }
}

fn unix_seconds() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::next_update_time;

    #[test]
    fn update_time_strictly_increases() {
        assert_eq!(next_update_time(None, 50), 50);
        assert_eq!(next_update_time(Some(50), 50), 51);
        assert_eq!(next_update_time(Some(50), 40), 51, "a clock stepping back");
        assert_eq!(next_update_time(Some(50), 60), 60);
    }
}
