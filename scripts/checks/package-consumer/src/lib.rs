//! The downstream code under test: what a tool writer builds on `ascend-dcmi`'s mockable trait.

use ascend_dcmi::{Celsius, DeviceManager, Error, PhyId};

/// The hottest chip of the host and its temperature; `None` on a host without chips.
///
/// # Errors
/// The first error of the driver, except a dropped card, which is skipped (it has no temperature).
pub fn hottest_chip(manager: &dyn DeviceManager) -> Result<Option<(PhyId, Celsius)>, Error> {
    let mut hottest: Option<(PhyId, Celsius)> = None;
    for ids in manager.chips()? {
        let temperature = match manager.temperature(ids.logic) {
            Ok(temperature) => temperature,
            Err(error) if error.is_card_drop() => continue,
            Err(error) => return Err(error),
        };
        if hottest.is_none_or(|(_, highest)| temperature > highest) {
            hottest = Some((ids.phy, temperature));
        }
    }
    Ok(hottest)
}
