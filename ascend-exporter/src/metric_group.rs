//! Metric groups are the sampler's ([`ascend_dcmi::MetricGroup`]) and the network sampler's
//! ([`NetworkGroup`]): the unit of sampling intervals and of the selection file's `[groups.<name>]` tables.

pub use ascend_dcmi::MetricGroup;

pub use crate::network::NetworkGroup;

/// The group whose readings a catalogue metric shows: one of the driver sampler's or one of the network sampler's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampledGroup {
    /// Read through DCMI.
    Driver(MetricGroup),
    /// Read through `hccn_tool`.
    Network(NetworkGroup),
}

impl SampledGroup {
    /// The group's name in the selection file and the docs.
    pub fn name(self) -> &'static str {
        match self {
            SampledGroup::Driver(group) => group.name(),
            SampledGroup::Network(group) => group.name(),
        }
    }
}

/// A group name that is not one of the sampler's groups, displayed with the names that are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownGroup<'a>(pub &'a str);

impl std::fmt::Display for UnknownGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown metric group {:?}; known groups:", self.0)?;
        let names = MetricGroup::ALL.iter().map(|g| g.name()).chain(NetworkGroup::ALL.iter().map(|g| g.name()));
        for (index, name) in names.enumerate() {
            write!(f, "{} {name}", if index == 0 { "" } else { "," })?;
        }
        Ok(())
    }
}

/// The group called `name` (`utilization`, `chip_state`, `memory`, `identity`, `links`, `bandwidth`, `vnpu`;
/// through `hccn_tool`: `network`, `roce`, `optical`).
/// `None` for any other name (report it with [`UnknownGroup`]).
pub fn group_by_name(name: &str) -> Option<SampledGroup> {
    MetricGroup::ALL
        .into_iter()
        .find(|group| group.name() == name)
        .map(SampledGroup::Driver)
        .or_else(|| NetworkGroup::by_name(name).map(SampledGroup::Network))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_the_samplers_groups() {
        for group in MetricGroup::ALL {
            assert_eq!(group_by_name(group.name()), Some(SampledGroup::Driver(group)));
        }
        for group in NetworkGroup::ALL {
            assert_eq!(group_by_name(group.name()), Some(SampledGroup::Network(group)));
        }
        assert_eq!(group_by_name("hbm"), None);
        assert_eq!(
            UnknownGroup("hbm").to_string(),
            "unknown metric group \"hbm\"; known groups: utilization, chip_state, memory, identity, links, bandwidth, \
             vnpu, network, roce, optical"
        );
    }
}
