//! The optical modules of a UB port: the tables of `-g -optical` (Ascend950).
//!
//! What the output must hold, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go
//! (GetNpuOpticalInfoNpu, parseSecondTableColumns) and component/npu-exporter/collector/metrics/
//! collector_for_optical.go: the word `Power` somewhere; two boxed tables, the readings in the data rows of the
//! second (between its header separator, the fifth `+-` line of the output, and its closing one); a data row has at
//! least nine columns, the fourth naming the reading (`TxPower Lane0(dBm)` ... `RxPower Lane3(dBm)`) and the fifth
//! holding its value; each row that mentions `optical_` counts one module (`optical_index`).
//!
//! Huawei's parser skips any value containing `-`, which also drops negative dBm readings; this parser reads them
//! and takes only a lone `-` (and `NA`, `not supported`, an empty cell) for no value.

use crate::error::ParseError;
use crate::lanes;
use crate::table;

const COMMAND: &str = "-g -optical";

/// The optical readings of a UB port.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UbOpticalInfo {
    /// How many optical modules the table lists (`optical_index` of the exporter).
    pub modules: u32,
    /// Transmit power of lanes 0 to 3 in dBm.
    pub tx_power_dbm: [Option<f64>; 4],
    /// Receive power of lanes 0 to 3 in dBm.
    pub rx_power_dbm: [Option<f64>; 4],
}

/// The readings of `hccn_tool -g -optical -i <logic_id> -u <udie> -p <port>`.
///
/// # Errors
/// [`ParseError`] when the output has no `Power` or no second table, a data row of that table has fewer than nine
/// columns, or a lane's value is not a number.
pub fn parse_ub_optical(output: &str) -> Result<UbOpticalInfo, ParseError> {
    if !output.contains("Power") {
        return Err(ParseError::new(COMMAND, "no power reading in the output"));
    }
    let rows = table::rows_after_separator(output, 5)
        .ok_or_else(|| ParseError::new(COMMAND, "no second table with a header and data rows"))?;
    let mut info = UbOpticalInfo::default();
    for row in rows {
        if row.contains("optical_") {
            info.modules += 1;
        }
        let cells = table::cells(row);
        if cells.len() < 9 {
            return Err(ParseError::at(COMMAND, row, "fewer than nine columns"));
        }
        let Some(slot) = lane_slot(cells[3], &mut info) else { continue };
        *slot = match cells[4] {
            "" | "-" | "NA" | "not supported" => None,
            value => match value.parse::<f64>() {
                Ok(number) if number.is_finite() => Some(number),
                _ => return Err(ParseError::at(COMMAND, row, "the lane's power is not a number")),
            },
        };
    }
    Ok(info)
}

fn lane_slot<'a>(name: &str, info: &'a mut UbOpticalInfo) -> Option<&'a mut Option<f64>> {
    lanes::slot(name, ("TxPower Lane", "RxPower Lane", "(dBm)"), &mut info.tx_power_dbm, &mut info.rx_power_dbm)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTICAL: &str = "\
+--------+--------+-----------+
| UdieID | PortID | Optical   |
+--------+--------+-----------+
| 0      | 4      | present   |
+--------+--------+-----------+
+--------+--------+------+--------------------+--------+-----------+----------+-----------+------------+-----------+
| UdieID | PortID | Lane | Item               | Value  | Low Alarm | Low Warn | High Warn | High Alarm | Module    |
+--------+--------+------+--------------------+--------+-----------+----------+-----------+------------+-----------+
| 0      | 4      | 0    | TxPower Lane0(dBm) | 1.20   | -8.00     | -6.00    | 4.00      | 5.00       | optical_0 |
| 0      | 4      | 0    | RxPower Lane0(dBm) | -2.50  | -10.00    | -8.00    | 4.00      | 5.00       |           |
| 0      | 4      | 1    | TxPower Lane1(dBm) | 1.10   | -8.00     | -6.00    | 4.00      | 5.00       |           |
| 0      | 4      | 1    | RxPower Lane1(dBm) | -      | -10.00    | -8.00    | 4.00      | 5.00       |           |
| 0      | 4      | 0    | Temperature(C)     | 45     | -5        | 0        | 70        | 75         |           |
+--------+--------+------+--------------------+--------+-----------+----------+-----------+------------+-----------+
";

    #[test]
    fn lanes_and_modules_are_read_from_the_second_table() {
        let info = parse_ub_optical(OPTICAL).expect("parses");
        assert_eq!(info.modules, 1);
        assert_eq!(info.tx_power_dbm, [Some(1.2), Some(1.1), None, None]);
        assert_eq!(info.rx_power_dbm, [Some(-2.5), None, None, None]);
    }

    #[test]
    fn an_output_without_readings_or_with_a_bad_value_is_an_error() {
        assert!(parse_ub_optical("optical module not present\n").is_err());
        let first_table_only = OPTICAL.lines().take(5).collect::<Vec<_>>().join("\n") + "\nPower";
        assert!(parse_ub_optical(&first_table_only).is_err());
        let error = parse_ub_optical(&OPTICAL.replace("| 1.20   |", "| high   |")).unwrap_err();
        assert!(error.line().is_some_and(|line| line.contains("high")), "{error}");
        assert!(parse_ub_optical(&OPTICAL.replace("| 0      | 4      | 1    | TxPower", "| TxPower")).is_err());
    }
}
