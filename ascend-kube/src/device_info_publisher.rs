//! Writes a node's device-info ConfigMap ([`crate::device_info`]) at the pace Volcano expects, and reads back the
//! chips an operator separated by hand.
//!
//! Cadence (Huawei's `MinCMReportInterval` and five-minute refresh, `pkg/common/constants.go`): a write at most
//! every [`PublisherConfig::min_interval`] (1 s); an unchanged list is written again only after
//! [`PublisherConfig::refresh_interval`] (5 min), which tells Volcano the node's plugin is alive (its informer is
//! restarted when device info grows stale). `UpdateTime` strictly increases from write to write, even when two
//! writes fall in one second or the clock steps back: Volcano ignores a map whose `UpdateTime` is not greater than
//! the last one it saw (`ascend-for-volcano/plugin/node.go`).
//!
//! Only the keys this writer owns are sent, as a JSON merge patch: the label, `DeviceInfoCfg`, and
//! `ManuallySeparateNPU` only when the ConfigMap is created (empty). An operator's edit of `ManuallySeparateNPU`
//! is therefore never overwritten, and no read-modify-write race exists with `kubectl edit`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::device_info::{
    config_map_name, device_info_cfg, parse_manually_separated, DeviceList, Placement, CONSUMER_LABEL,
    CONSUMER_LABEL_VALUE, DEVICE_INFO_KEY, DEVICE_INFO_NAMESPACE, MANUALLY_SEPARATE_NPU_KEY,
};
use crate::error::Result;

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
            refresh_interval: Duration::from_secs(300),
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
    /// A writer of `kube-system/mindx-dl-deviceinfo-<node>`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    pub fn new(client: kube::Client, node: &str, config: PublisherConfig) -> Result<Self> {
        check_node_name(node)?;
        Ok(DeviceInfoPublisher {
            config_maps: Api::namespaced(client, DEVICE_INFO_NAMESPACE),
            name: config_map_name(node),
            config,
            last: None,
        })
    }

    /// The ConfigMap's name.
    pub fn name(&self) -> &str {
        &self.name
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

    /// The chips listed in `ManuallySeparateNPU` (empty when the ConfigMap does not exist yet). Entries that are
    /// not chip names are logged and ignored.
    ///
    /// # Errors
    /// [`crate::Error::Api`] (other than 404), [`crate::Error::Transport`] or [`crate::Error::Timeout`].
    pub async fn manually_separated(&self) -> Result<BTreeSet<String>> {
        let object = format!("configmaps/{DEVICE_INFO_NAMESPACE}/{}", self.name);
        let found = request("get", object, self.config.request_timeout, self.config_maps.get_opt(&self.name)).await?;
        let text = found
            .and_then(|map| map.data)
            .and_then(|mut data| data.remove(MANUALLY_SEPARATE_NPU_KEY))
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
