//! Metric groups are the sampler's ([`ascend_dcmi::MetricGroup`]): the unit of sampling intervals and of the
//! selection file's `[groups.<name>]` tables.

pub use ascend_dcmi::MetricGroup;

/// A group name that is not one of the sampler's groups, displayed with the names that are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownGroup<'a>(pub &'a str);

impl std::fmt::Display for UnknownGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown metric group {:?}; known groups:", self.0)?;
        for (index, group) in MetricGroup::ALL.iter().enumerate() {
            write!(f, "{} {}", if index == 0 { "" } else { "," }, group.name())?;
        }
        Ok(())
    }
}

/// The group called `name` (`utilization`, `chip_state`, `memory`, `identity`, `links`, `bandwidth`, `vnpu`).
/// `None` for any other name (report it with [`UnknownGroup`]).
pub fn group_by_name(name: &str) -> Option<MetricGroup> {
    MetricGroup::ALL.into_iter().find(|group| group.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_the_samplers_groups() {
        for group in MetricGroup::ALL {
            assert_eq!(group_by_name(group.name()), Some(group));
        }
        assert_eq!(group_by_name("hbm"), None);
        assert_eq!(
            UnknownGroup("hbm").to_string(),
            "unknown metric group \"hbm\"; known groups: utilization, chip_state, memory, identity, links, bandwidth, vnpu"
        );
    }
}
