//! Link speed: `-speed -g` on training cards, the speed table of `-g -speed` on Ascend950.
//!
//! Forms, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetNPULinkSpeed,
//! getSpeedFromOutStr, getSpeedFromStrA5): `Speed: 100000 Mb/s`, or `Unknown!` in the output when the port has no
//! speed; on Ascend950 a table whose first data row has the speed in its fourth column as `<number> <unit>` (the
//! exporter reports it in G), or `NA` in the output when the port is down.

use crate::error::ParseError;
use crate::table;

/// The speed in Mb/s of `hccn_tool -i <phy_id> -speed -g`; `None` when the tool says the speed is unknown.
///
/// # Errors
/// [`ParseError`] when no `Speed:` line holds a number.
pub fn parse_speed_mbps(output: &str) -> Result<Option<u64>, ParseError> {
    const COMMAND: &str = "-speed -g";
    if output.contains("Unknown!") {
        return Ok(None);
    }
    for line in output.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        if !key.trim().eq_ignore_ascii_case("speed") {
            continue;
        }
        let mut words = value.split_whitespace();
        let number = words.next().and_then(|word| word.parse().ok());
        return match (number, words.next()) {
            (Some(speed), Some(unit)) if unit.eq_ignore_ascii_case("Mb/s") => Ok(Some(speed)),
            _ => Err(ParseError::at(COMMAND, line, "expected `Speed: <number> Mb/s`")),
        };
    }
    Err(ParseError::new(COMMAND, "no `Speed:` line"))
}

/// The speed of one UB port (the unit the tool prints, G) from the table of
/// `hccn_tool -g -speed -i <logic_id> -u <udie> -p <port>`; `None` when the tool prints `NA` (the port is down).
///
/// # Errors
/// [`ParseError`] when the table has no data row, or its fourth column is not `<number> <unit>`.
pub fn parse_ub_speed(output: &str) -> Result<Option<u64>, ParseError> {
    const COMMAND: &str = "-g -speed";
    if output.contains("NA") {
        return Ok(None);
    }
    // The header is the first row with cells, the port the second (getSpeedFromStrA5 takes row 1).
    let row = output
        .lines()
        .filter(|line| line.contains('|') && !line.contains('+'))
        .nth(1)
        .ok_or_else(|| ParseError::new(COMMAND, "the table has no data row"))?;
    let cells = table::cells(row);
    let speed = cells.get(3).ok_or_else(|| ParseError::at(COMMAND, row, "fewer than 4 columns"))?;
    let mut words = speed.split_whitespace();
    match (words.next().and_then(|word| word.parse().ok()), words.next(), words.next()) {
        (Some(speed), Some(_unit), None) => Ok(Some(speed)),
        _ => Err(ParseError::at(COMMAND, row, "the speed column is not `<number> <unit>`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_is_read_in_megabits() {
        assert_eq!(parse_speed_mbps("Speed: 100000 Mb/s\n"), Ok(Some(100_000)));
        assert_eq!(parse_speed_mbps("Speed: Unknown!\n"), Ok(None));
    }

    #[test]
    fn a_speed_in_another_form_names_the_line() {
        let error = parse_speed_mbps("Speed: fast\n").unwrap_err();
        assert_eq!(error.line(), Some("Speed: fast"));
        assert!(parse_speed_mbps("Speed: 100 Gb/s").is_err());
        assert!(parse_speed_mbps("").is_err());
    }

    const UB_SPEED: &str = "\
+--------+--------+----------+--------+
| UdieID | PortID | PortType | Speed  |
+--------+--------+----------+--------+
| 0      | 4      | UB       | 400 G  |
+--------+--------+----------+--------+
";

    #[test]
    fn ub_speed_is_read_from_the_table() {
        assert_eq!(parse_ub_speed(UB_SPEED), Ok(Some(400)));
        assert_eq!(parse_ub_speed(&UB_SPEED.replace("400 G", "NA   ")), Ok(None));
    }

    #[test]
    fn a_ub_speed_table_without_data_or_with_a_bad_cell_is_an_error() {
        assert!(parse_ub_speed("+---+\n| UdieID |\n+---+\n").is_err());
        let error = parse_ub_speed(&UB_SPEED.replace("400 G", "fast ")).unwrap_err();
        assert!(error.line().is_some_and(|line| line.contains("fast")), "{error}");
        assert!(parse_ub_speed("| a | b |\n| 0 | 4 |\n").is_err());
    }
}
