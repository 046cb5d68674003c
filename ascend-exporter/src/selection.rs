//! The metric-selection file: which groups are sampled, how often, and which metrics are served.
//!
//! TOML, every key optional:
//!
//! ```toml
//! [groups.utilization]    # groups: utilization (1s), chip_state (5s), memory (10s), identity (60s), links (60s),
//!                          # bandwidth (60s), vnpu (60s); through hccn_tool: network, roce, optical (60s each)
//! interval = "2s"          # how often the sampler reads the group (default in brackets above)
//! [groups.memory]
//! enabled = false          # neither read from the driver nor served
//!
//! [collect]
//! skip = ["network_health", "ecc.sram"]          # driver reads to leave out (the sampler's metric names)
//!
//! [metrics]
//! include = ["ascend_npu_temperature_celsius"]   # if present, only these (plus the exporter's own metrics)
//! exclude = ["ascend_npu_process_memory_bytes"]  # never these
//! ```
//!
//! `[metrics]` names are exposed names (with `_total`/`_info`) of either naming scheme; `[collect]` names are
//! [`ascend_dcmi::Metric`] names (`temperature`, `utilization.aicore`, `frequency.hbm`, `ecc.hbm`, `processes`, ...).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use ascend_cli::duration::{duration_between, format_duration};
use ascend_dcmi::{Metric, MetricSet, SamplerConfig};
use serde::{Deserialize, Serialize};

use crate::catalogue::{MetricDef, CATALOGUE};

use crate::error::{ConfigFile, Error};
use crate::metric_group::{group_by_name, MetricGroup, NetworkGroup, SampledGroup, UnknownGroup};

/// The file's shape.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectionFile {
    #[serde(default)]
    groups: BTreeMap<String, GroupSettingFile>,
    #[serde(default)]
    collect: CollectFile,
    #[serde(default)]
    metrics: MetricFilterFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CollectFile {
    #[serde(default)]
    skip: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupSettingFile {
    enabled: Option<bool>,
    interval: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricFilterFile {
    include: Option<Vec<String>>,
    #[serde(default)]
    exclude: Vec<String>,
}

/// Whether a group is sampled and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupChoice {
    /// Sampled and served.
    pub enabled: bool,
    /// Sampling interval.
    pub interval: Duration,
}

/// A resolved, validated selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    groups: [GroupChoice; MetricGroup::ALL.len()],
    network_groups: [GroupChoice; NetworkGroup::ALL.len()],
    skip: Vec<Metric>,
    include: Option<BTreeSet<String>>,
    exclude: BTreeSet<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Self {
            groups: MetricGroup::ALL.map(|group| GroupChoice { enabled: true, interval: group.default_interval() }),
            network_groups: NetworkGroup::ALL
                .map(|group| GroupChoice { enabled: true, interval: group.default_interval() }),
            skip: Vec::new(),
            include: None,
            exclude: BTreeSet::new(),
        }
    }
}

impl Selection {
    /// Shortest interval a group may be sampled at.
    pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
    /// Longest interval a group may be sampled at.
    pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

    /// Reads and validates a selection file.
    ///
    /// # Errors
    /// [`Error`] naming the file and what is wrong.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            file: ConfigFile::Selection,
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, &shown)
    }

    /// Validates a selection file's text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error::Syntax`] for malformed TOML or unknown keys, [`Error::Invalid`] for unknown groups
    /// or metrics and intervals out of range.
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let file: SelectionFile = toml::from_str(text).map_err(|error| Error::Syntax {
            file: ConfigFile::Selection,
            path: origin.to_owned(),
            message: error.to_string(),
        })?;
        let invalid =
            |message: String| Error::Invalid { file: ConfigFile::Selection, path: origin.to_owned(), message };
        let mut selection = Selection::default();
        for (name, setting) in &file.groups {
            let group =
                group_by_name(name).ok_or_else(|| invalid(format!("[groups.{name}]: {}", UnknownGroup(name))))?;
            let choice = match group {
                SampledGroup::Driver(group) => &mut selection.groups[group.index()],
                SampledGroup::Network(group) => &mut selection.network_groups[group.index()],
            };
            if let Some(enabled) = setting.enabled {
                choice.enabled = enabled;
            }
            if let Some(text) = &setting.interval {
                choice.interval = duration_between(Self::MIN_INTERVAL, Self::MAX_INTERVAL)(text)
                    .map_err(|error| invalid(format!("[groups.{name}] interval: {error}")))?;
            }
        }
        for name in &file.collect.skip {
            let metric: Metric = name.parse().map_err(|error| invalid(format!("[collect] skip: {error}")))?;
            selection.skip.push(metric);
        }
        let known: BTreeSet<String> = CATALOGUE.iter().map(MetricDef::exposed_name).collect();
        let check = |list: &[String], key: &str| -> Result<BTreeSet<String>, Error> {
            match list.iter().find(|name| !known.contains(name.as_str())) {
                Some(unknown) => Err(invalid(format!("[metrics] {key}: unknown metric {unknown:?}"))),
                None => Ok(list.iter().cloned().collect()),
            }
        };
        selection.include = file.metrics.include.as_deref().map(|list| check(list, "include")).transpose()?;
        selection.exclude = check(&file.metrics.exclude, "exclude")?;
        Ok(selection)
    }

    /// The sampler configuration: intervals, and every metric of enabled groups except the skipped ones.
    pub fn sampler_config(&self, base: SamplerConfig) -> SamplerConfig {
        let mut metrics = MetricSet::ALL;
        for group in MetricGroup::ALL {
            if !self.group(group).enabled {
                metrics = MetricSet::group(group).iter().fold(metrics, MetricSet::without);
            }
        }
        metrics = self.skip.iter().copied().fold(metrics, MetricSet::without);
        MetricGroup::ALL
            .into_iter()
            .fold(base.with_metrics(metrics), |config, group| config.with_interval(group, self.group(group).interval))
    }

    /// One group's choice.
    pub fn group(&self, group: MetricGroup) -> GroupChoice {
        self.groups[group.index()]
    }

    /// One network group's choice.
    pub fn network_group(&self, group: NetworkGroup) -> GroupChoice {
        self.network_groups[group.index()]
    }

    /// The network groups to read, with their intervals.
    pub fn network_intervals(&self) -> Vec<(NetworkGroup, Duration)> {
        let choices = NetworkGroup::ALL.into_iter().map(|group| (group, self.network_group(group)));
        choices.filter(|(_, choice)| choice.enabled).map(|(group, choice)| (group, choice.interval)).collect()
    }

    /// Whether a metric is served: its group is enabled, it passes `include` (the exporter's own metrics always do)
    /// and it is not excluded.
    pub fn serves(&self, metric: &MetricDef) -> bool {
        let name = metric.exposed_name();
        let group_on = metric.group.is_none_or(|group| match group {
            SampledGroup::Driver(group) => self.group(group).enabled,
            SampledGroup::Network(group) => self.network_group(group).enabled,
        });
        let included = metric.group.is_none() || self.include.as_ref().is_none_or(|list| list.contains(&name));
        group_on && included && !self.exclude.contains(&name)
    }

    /// The selection written back as TOML with every default filled in (the golden-file form).
    pub fn to_resolved_toml(&self) -> String {
        #[derive(Serialize)]
        struct Resolved<'a> {
            groups: BTreeMap<&'static str, ResolvedGroup>,
            collect: ResolvedCollect,
            metrics: ResolvedMetrics<'a>,
        }
        #[derive(Serialize)]
        struct ResolvedGroup {
            enabled: bool,
            interval: String,
        }
        #[derive(Serialize)]
        struct ResolvedCollect {
            skip: Vec<&'static str>,
        }
        #[derive(Serialize)]
        struct ResolvedMetrics<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            include: Option<&'a BTreeSet<String>>,
            exclude: &'a BTreeSet<String>,
        }
        let resolved =
            |choice: GroupChoice| ResolvedGroup { enabled: choice.enabled, interval: format_duration(choice.interval) };
        let driver = MetricGroup::ALL.into_iter().map(|group| (group.name(), resolved(self.group(group))));
        let network = NetworkGroup::ALL.into_iter().map(|group| (group.name(), resolved(self.network_group(group))));
        let groups = driver.chain(network).collect();
        let collect = ResolvedCollect { skip: self.skip.iter().map(|metric| metric.name()).collect() };
        let resolved = Resolved {
            groups,
            collect,
            metrics: ResolvedMetrics { include: self.include.as_ref(), exclude: &self.exclude },
        };
        // Serialising plain maps, strings and booleans cannot fail; an empty string would only hide a bug in tests.
        toml::to_string_pretty(&resolved).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_name(name: &str) -> &'static MetricDef {
        CATALOGUE.iter().find(|m| m.exposed_name() == name).unwrap_or_else(|| panic!("{name} not in catalogue"))
    }

    #[test]
    fn empty_file_serves_everything_at_default_intervals() {
        let selection = Selection::parse("", "test").expect("empty file is valid");
        assert_eq!(selection, Selection::default());
        assert!(CATALOGUE.iter().all(|m| selection.serves(m)));
    }

    #[test]
    fn disabled_group_and_filters_apply() {
        let text = "[groups.memory]\nenabled = false\n[metrics]\ninclude = [\"ascend_npu_temperature_celsius\", \"ascend_npu_memory_used_bytes\"]\nexclude = [\"ascend_npu_up\"]\n";
        let selection = Selection::parse(text, "test").expect("valid");
        assert!(selection.serves(by_name("ascend_npu_temperature_celsius")));
        assert!(!selection.serves(by_name("ascend_npu_memory_used_bytes")), "group disabled");
        assert!(!selection.serves(by_name("ascend_npu_power_watts")), "not included");
        assert!(selection.serves(by_name("ascend_npu_sample_age_seconds")), "exporter metrics always served");
        assert!(!selection.serves(by_name("ascend_npu_up")), "excluded");
    }

    #[test]
    fn sampler_config_drops_disabled_groups_and_skipped_reads() {
        let text = "[groups.memory]\nenabled = false\n[groups.utilization]\ninterval = \"2s\"\n[collect]\nskip = [\"network_health\"]\n";
        let config = Selection::parse(text, "test").expect("valid").sampler_config(SamplerConfig::default());
        let metrics = config.metrics();
        assert!(!metrics.contains(Metric::HbmMemory));
        assert!(!metrics.contains(Metric::Processes));
        assert!(!metrics.contains(Metric::NetworkHealth));
        assert!(metrics.contains(Metric::Temperature));
        assert_eq!(config.interval(MetricGroup::Utilization), Duration::from_secs(2));
        assert_eq!(config.interval(MetricGroup::Memory), Duration::from_secs(10));
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let cases = [
            ("[groups.hbm]\nenabled = true\n", "unknown metric group \"hbm\""),
            ("[groups.chip_state]\ninterval = \"fast\"\n", "[groups.chip_state] interval: invalid duration \"fast\""),
            ("[groups.chip_state]\ninterval = \"10ms\"\n", "at least 100ms and at most 24h"),
            ("[collect]\nskip = [\"temp\"]\n", "[collect] skip"),
            ("[metrics]\nexclude = [\"npu_chip_info_temp\"]\n", "unknown metric \"npu_chip_info_temp\""),
            ("[groups.chip_state]\nenable = true\n", "unknown field `enable`"),
        ];
        for (text, expected) in cases {
            let message = Selection::parse(text, "/etc/sel.toml").expect_err(text).to_string();
            assert!(message.contains("/etc/sel.toml") && message.contains(expected), "{message}");
        }
    }
}
