//! Metric groups are the sampler's ([`ascend_dcmi::MetricGroup`]): the unit of sampling intervals and of the
//! selection file's `[groups.<name>]` tables.

pub use ascend_dcmi::MetricGroup;

/// A group name that is not one of the sampler's groups.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric group {0:?}; known groups: utilization, chip_state, memory, identity")]
pub struct UnknownGroupError(pub String);

/// The group called `name` (`utilization`, `chip_state`, `memory`, `identity`).
///
/// # Errors
/// [`UnknownGroupError`] for any other name.
pub fn group_by_name(name: &str) -> Result<MetricGroup, UnknownGroupError> {
    MetricGroup::ALL.into_iter().find(|group| group.name() == name).ok_or_else(|| UnknownGroupError(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_the_samplers_groups() {
        for group in MetricGroup::ALL {
            assert_eq!(group_by_name(group.name()), Ok(group));
        }
        assert!(group_by_name("hbm").is_err());
    }
}
