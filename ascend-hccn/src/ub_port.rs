//! The ports of an Ascend950 chip: `-g -dev_info`.
//!
//! Form, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetAllUBports,
//! checkPortStatus, parseDeviceTable): a boxed table whose rows are `| UdieID | PortID | Speed | PortType |
//! Link Status | Media Type |`, one per port, `PortType` `UB` or `ETH` (a UBoE bonding port); the first table of
//! the output is the one read.

use crate::error::ParseError;
use crate::link::LinkState;
use crate::table;

const COMMAND: &str = "-g -dev_info";

/// What kind of port a row describes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PortType {
    /// A unified-bus port (`UB`).
    Ub,
    /// An Ethernet port of a UBoE bond (`ETH`).
    Eth,
    /// Another word, kept as printed.
    Other(String),
}

/// One row of the port table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UbPortInfo {
    /// The die of the chip the port belongs to (`UdieID`).
    pub udie: u32,
    /// The port on that die (`PortID`).
    pub port: u32,
    /// The `Speed` column as printed (`200`), `None` when it is not a number.
    pub speed: Option<u64>,
    /// `PortType`.
    pub port_type: PortType,
    /// `Link Status`.
    pub link: LinkState,
    /// `Media Type` as printed (`Optical`, `Electrical`), empty when the column is missing.
    pub media: String,
}

/// The ports of `hccn_tool -g -dev_info -i <logic_id>`, in the order printed.
///
/// # Errors
/// [`ParseError`] naming the row when a data row has fewer than five columns, a die or port that is not a number,
/// or a link status other than UP or DOWN; or when the table has no data row.
pub fn parse_ub_ports(output: &str) -> Result<Vec<UbPortInfo>, ParseError> {
    let rows = table::rows_after_separator(output, 2)
        .ok_or_else(|| ParseError::new(COMMAND, "no table with a header and data rows"))?;
    let ports = rows.into_iter().map(port).collect::<Result<Vec<_>, _>>()?;
    if ports.is_empty() {
        return Err(ParseError::new(COMMAND, "the table has no port"));
    }
    Ok(ports)
}

fn port(row: &str) -> Result<UbPortInfo, ParseError> {
    let cells = table::cells(row);
    let [udie, port, speed, port_type, link, rest @ ..] = cells.as_slice() else {
        return Err(ParseError::at(COMMAND, row, "fewer than five columns"));
    };
    let number = |cell: &str, name: &str| {
        cell.parse().map_err(|_| ParseError::at(COMMAND, row, format!("{name} is not a number")))
    };
    Ok(UbPortInfo {
        udie: number(udie, "UdieID")?,
        port: number(port, "PortID")?,
        speed: speed.parse().ok(),
        port_type: match *port_type {
            "UB" => PortType::Ub,
            "ETH" => PortType::Eth,
            other => PortType::Other(other.to_owned()),
        },
        link: LinkState::from_word(link)
            .ok_or_else(|| ParseError::at(COMMAND, row, "the link status is neither UP nor DOWN"))?,
        media: rest.first().map(|media| (*media).to_owned()).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV_INFO: &str = "\
+--------+--------+--------+----------+-------------+------------+
| UdieID | PortID | Speed  | PortType | Link Status | Media Type |
+--------+--------+--------+----------+-------------+------------+
| 0      | 4      | 200    | ETH      | DOWN        | Electrical |
| 1      | 8      | 200    | UB       | UP          | Optical    |
+--------+--------+--------+----------+-------------+------------+
| 9      | 9      | 200    | UB       | UP          | Optical    |
";

    #[test]
    fn every_row_of_the_first_table_is_a_port() {
        let ports = parse_ub_ports(DEV_INFO).expect("parses");
        assert_eq!(ports.len(), 2, "the row after the table's end is not read");
        assert_eq!(
            ports[1],
            UbPortInfo {
                udie: 1,
                port: 8,
                speed: Some(200),
                port_type: PortType::Ub,
                link: LinkState::Up,
                media: "Optical".into()
            }
        );
        assert_eq!((ports[0].port_type.clone(), ports[0].link), (PortType::Eth, LinkState::Down));
    }

    #[test]
    fn a_bad_row_or_an_empty_table_is_an_error() {
        let error = parse_ub_ports(&DEV_INFO.replace("| 0      | 4 ", "| ab     | 4 ")).unwrap_err();
        assert!(error.line().is_some_and(|line| line.contains("ab")), "{error}");
        assert!(parse_ub_ports(&DEV_INFO.replace("| ETH      | DOWN", "| ETH      | OFF ")).is_err());
        assert!(parse_ub_ports("| 0 | 4 | ETH | DOWN |").is_err());
        assert!(parse_ub_ports("").is_err());
        let header_only = DEV_INFO.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(parse_ub_ports(&header_only).is_err());
    }
}
