//! Interface bandwidth: `-bandwidth -g` on training cards and `-g -bandwidth` on a UB port.
//!
//! Form, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetNPUInterfaceTraffic,
//! GetNPUInterfaceTrafficNpu): two lines, `Bandwidth TX: 0.00 MB/sec` and `Bandwidth RX: 0.00 MB/sec`.

use crate::error::ParseError;

/// Transmit and receive rates of a port in MB/s, as the tool prints them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    /// Sent, in MB/s.
    pub tx_megabytes_per_second: f64,
    /// Received, in MB/s.
    pub rx_megabytes_per_second: f64,
}

/// The rates of `hccn_tool -i <phy_id> -bandwidth -g`.
///
/// # Errors
/// [`ParseError`] for a `Bandwidth TX:`/`RX:` line whose rate is not a number, or when a direction is missing.
pub fn parse_bandwidth(output: &str) -> Result<Bandwidth, ParseError> {
    bandwidth(output, "-bandwidth -g")
}

/// The rates of one UB port, `hccn_tool -g -bandwidth -i <logic_id> -u <udie> -p <port> -time <ms>` (Ascend950).
///
/// # Errors
/// As [`parse_bandwidth`].
pub fn parse_ub_bandwidth(output: &str) -> Result<Bandwidth, ParseError> {
    bandwidth(output, "-g -bandwidth")
}

fn bandwidth(output: &str, command: &'static str) -> Result<Bandwidth, ParseError> {
    let (mut tx, mut rx) = (None, None);
    for line in output.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let slot = match words.as_slice() {
            ["Bandwidth", "TX:", ..] => &mut tx,
            ["Bandwidth", "RX:", ..] => &mut rx,
            _ => continue,
        };
        let rate = match words.as_slice() {
            [_, _, rate, unit] if unit.eq_ignore_ascii_case("MB/sec") => rate.parse::<f64>().ok(),
            _ => None,
        };
        match rate {
            Some(rate) if rate.is_finite() && rate >= 0.0 => *slot = Some(rate),
            _ => return Err(ParseError::at(command, line, "expected `Bandwidth TX|RX: <number> MB/sec`")),
        }
    }
    match (tx, rx) {
        (Some(tx), Some(rx)) => Ok(Bandwidth { tx_megabytes_per_second: tx, rx_megabytes_per_second: rx }),
        _ => Err(ParseError::new(command, "a `Bandwidth TX:` or `Bandwidth RX:` line is missing")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_are_read() {
        let bandwidth = parse_bandwidth("Bandwidth TX: 12.50 MB/sec\nBandwidth RX: 0.00 MB/sec\n").expect("parses");
        assert_eq!(bandwidth, Bandwidth { tx_megabytes_per_second: 12.5, rx_megabytes_per_second: 0.0 });
        assert!(parse_ub_bandwidth("Bandwidth TX: 1.00 MB/sec\nBandwidth RX: 2.00 MB/sec").is_ok());
    }

    #[test]
    fn a_bad_rate_or_a_missing_direction_is_an_error() {
        let error = parse_bandwidth("Bandwidth TX: lots MB/sec\nBandwidth RX: 0.00 MB/sec\n").unwrap_err();
        assert_eq!(error.line(), Some("Bandwidth TX: lots MB/sec"));
        assert!(parse_bandwidth("Bandwidth TX: 1.00 MB/sec\n").is_err());
        assert!(parse_bandwidth("Bandwidth TX: NaN MB/sec\nBandwidth RX: 0.00 MB/sec\n").is_err());
        assert!(parse_ub_bandwidth("").is_err());
    }
}
