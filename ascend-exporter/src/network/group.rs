//! The network metric groups, Huawei's `network`, `roce` and `optical`: each read through `hccn_tool` by its own
//! background task at its own interval, and enabled or re-timed in the selection file's `[groups.<name>]` tables as the
//! driver's groups are.

use std::time::Duration;

/// A group of network readings that `hccn_tool` gives, read together at one interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NetworkGroup {
    /// Link state, speed, link-up count and bandwidth (`-link`, `-speed`, `-link_stat`, `-bandwidth`).
    Network,
    /// MAC and RoCE counters (`-stat`); training cards only, as in Huawei's exporter.
    Roce,
    /// Optical modules (`-optical`).
    Optical,
}

/// Huawei's default interval of every network group: 60 s (Ascend/mind-cluster
/// component/npu-exporter/build/metricConfiguration.json and collector/config/metrics_config.go).
const HUAWEI_INTERVAL: Duration = Duration::from_secs(60);

impl NetworkGroup {
    /// Every network group, in the order their ages and settings are listed.
    pub const ALL: [NetworkGroup; 3] = [NetworkGroup::Network, NetworkGroup::Roce, NetworkGroup::Optical];

    /// The group's name in the selection file and in the `group` label: Huawei's group name.
    pub fn name(self) -> &'static str {
        match self {
            NetworkGroup::Network => "network",
            NetworkGroup::Roce => "roce",
            NetworkGroup::Optical => "optical",
        }
    }

    /// How often the group is read unless the selection file says otherwise.
    pub fn default_interval(self) -> Duration {
        HUAWEI_INTERVAL
    }

    /// Position in [`NetworkGroup::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The group called `name`, `None` for any other name.
    pub fn by_name(name: &str) -> Option<NetworkGroup> {
        NetworkGroup::ALL.into_iter().find(|group| group.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indices_round_trip() {
        for (index, group) in NetworkGroup::ALL.into_iter().enumerate() {
            assert_eq!(group.index(), index);
            assert_eq!(NetworkGroup::by_name(group.name()), Some(group));
            assert_eq!(group.default_interval(), Duration::from_secs(60));
        }
        assert_eq!(NetworkGroup::by_name("ub"), None);
    }
}
