//! The four lanes of an optical module, named `<prefix><lane><suffix>` (`Tx Power0`, `RxPower Lane3(dBm)`).

/// Per-lane readings of one direction.
pub(crate) type Lanes = [Option<f64>; 4];

/// The slot `name` names: lane `n` of `tx` for `<tx_prefix><n><suffix>`, of `rx` for `<rx_prefix><n><suffix>`.
pub(crate) fn slot<'a>(
    name: &str,
    (tx_prefix, rx_prefix, suffix): (&str, &str, &str),
    tx: &'a mut Lanes,
    rx: &'a mut Lanes,
) -> Option<&'a mut Option<f64>> {
    let (lanes, rest) = match name.strip_prefix(tx_prefix) {
        Some(rest) => (tx, rest),
        None => (rx, name.strip_prefix(rx_prefix)?),
    };
    let lane: usize = rest.strip_suffix(suffix)?.parse().ok()?;
    lanes.get_mut(lane)
}
