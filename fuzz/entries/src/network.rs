//! What `hccn_tool` prints: the texts the exporter's network readings come from (ascend-hccn's parsers), a
//! subprocess's output that a driver update can change under us.

use ascend_hccn::ParseError;

use crate::text;

/// A parse error names a line that really is in the input (cut at 200 characters, marked with `…`).
fn check_error(input: &str, error: &ParseError) {
    assert!(!error.command().is_empty() && !error.reason().is_empty(), "{error:?}");
    if let Some(line) = error.line() {
        let kept = line.strip_suffix('…').unwrap_or(line);
        assert!(input.lines().any(|candidate| candidate.starts_with(kept)), "{line:?} is not a line of the input");
    }
}

fn finite(readings: &[Option<f64>]) -> bool {
    readings.iter().flatten().all(|value| value.is_finite())
}

/// The training cards' outputs (`-link -g`, `-speed -g`, `-link_stat -g`, `-stat -g`, `-optical -g`, `-bandwidth
/// -g`): the first byte picks the parser, the rest is the output.
pub fn hccn_output(data: &[u8]) {
    let Some((selector, rest)) = data.split_first() else { return };
    let Some(output) = text(rest) else { return };
    let error = match selector % 6 {
        0 => ascend_hccn::parse_link_state(output).err(),
        1 => ascend_hccn::parse_speed_mbps(output).err(),
        2 => ascend_hccn::parse_link_up_count(output).err(),
        3 => match ascend_hccn::parse_stat(output) {
            Ok(counters) => {
                assert!(!counters.is_empty() && counters.len() <= output.lines().count());
                assert!(counters.iter().all(|(key, _)| !key.is_empty() && !key.contains(char::is_whitespace)));
                None
            }
            Err(error) => Some(error),
        },
        4 => match ascend_hccn::parse_optical(output) {
            Ok(info) => {
                let readings = [info.vcc_millivolts, info.temperature_celsius];
                assert!(finite(&readings) && finite(&info.tx_power_milliwatts) && finite(&info.rx_power_milliwatts));
                None
            }
            Err(error) => Some(error),
        },
        _ => match ascend_hccn::parse_bandwidth(output) {
            Ok(rates) => {
                assert!(rates.tx_megabytes_per_second >= 0.0 && rates.rx_megabytes_per_second >= 0.0, "{rates:?}");
                None
            }
            Err(error) => Some(error),
        },
    };
    if let Some(error) = error {
        check_error(output, &error);
    }
}

/// Ascend950's outputs (`-g -dev_info`, `-g -link`, `-g -speed`, `-g -bandwidth`, `-g -optical`, `-g -stat`): the
/// first byte picks the parser, the rest is the output.
pub fn hccn_ub_output(data: &[u8]) {
    let Some((selector, rest)) = data.split_first() else { return };
    let Some(output) = text(rest) else { return };
    let error = match selector % 6 {
        0 => match ascend_hccn::parse_ub_ports(output) {
            Ok(ports) => {
                assert!(!ports.is_empty() && ports.len() <= output.lines().count());
                None
            }
            Err(error) => Some(error),
        },
        1 => ascend_hccn::parse_ub_link_state(output).err(),
        2 => ascend_hccn::parse_ub_speed(output).err(),
        3 => ascend_hccn::parse_ub_bandwidth(output).err(),
        4 => match ascend_hccn::parse_ub_optical(output) {
            Ok(info) => {
                assert!(finite(&info.tx_power_dbm) && finite(&info.rx_power_dbm));
                assert!(info.modules as usize <= output.lines().count());
                None
            }
            Err(error) => Some(error),
        },
        _ => ascend_hccn::parse_ub_stat(output).err(),
    };
    if let Some(error) = error {
        check_error(output, &error);
    }
}
