//! The optical module of a training card's port: `-optical -g`.
//!
//! Form, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetNPUOpticalInfo,
//! GetFloatDataFromStr) and component/npu-exporter/collector/metrics/collector_for_optical.go (getMainOptInfo):
//! `key : value unit` lines under the title `optical info:`, the key's blanks read as `_` (`Tx Power0` is
//! `Tx_Power0`). The exporter reads `present` (`present` or `not present`), `temperature` (`47 C`), `Vcc`
//! (`3262.90 mV`) and `Tx_Power0..3`, `Rx_Power0..3` (`1.0189 mW`); `NA` or `not supported` means no value.

use crate::error::ParseError;
use crate::lanes;

const COMMAND: &str = "-optical -g";

/// The readings of an optical module.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OpticalInfo {
    /// A module sits in the port.
    pub present: bool,
    /// Supply voltage in mV.
    pub vcc_millivolts: Option<f64>,
    /// Temperature in °C.
    pub temperature_celsius: Option<f64>,
    /// Transmit power of lanes 0 to 3 in mW.
    pub tx_power_milliwatts: [Option<f64>; 4],
    /// Receive power of lanes 0 to 3 in mW.
    pub rx_power_milliwatts: [Option<f64>; 4],
}

/// The readings of `hccn_tool -i <phy_id> -optical -g`.
///
/// # Errors
/// [`ParseError`] when the `present` line is missing or says something else than `present` or `not present`, or a
/// reading the exporter uses is neither `<number> <unit>` nor `NA`/`not supported`.
pub fn parse_optical(output: &str) -> Result<OpticalInfo, ParseError> {
    let mut info = OpticalInfo::default();
    let mut presence = None;
    for line in output.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let key = key.trim().replace(' ', "_");
        let value = value.trim();
        let slot = match key.as_str() {
            "present" => {
                presence = Some(match value {
                    "present" => true,
                    "not present" => false,
                    _ => return Err(ParseError::at(COMMAND, line, "expected `present` or `not present`")),
                });
                continue;
            }
            "temperature" => &mut info.temperature_celsius,
            "Vcc" => &mut info.vcc_millivolts,
            _ => match lane_slot(&key, &mut info) {
                Some(slot) => slot,
                None => continue,
            },
        };
        *slot = reading(value).map_err(|reason| ParseError::at(COMMAND, line, reason))?;
    }
    info.present = presence.ok_or_else(|| ParseError::new(COMMAND, "no `present` line"))?;
    Ok(info)
}

fn lane_slot<'a>(key: &str, info: &'a mut OpticalInfo) -> Option<&'a mut Option<f64>> {
    let names = ("Tx_Power", "Rx_Power", "");
    lanes::slot(key, names, &mut info.tx_power_milliwatts, &mut info.rx_power_milliwatts)
}

/// `<number> <unit>`; `None` for the tool's words for no value.
fn reading(value: &str) -> Result<Option<f64>, &'static str> {
    if value.is_empty() || value.contains("NA") || value.contains("not supported") {
        return Ok(None);
    }
    let mut words = value.split_whitespace();
    match (words.next().map(str::parse::<f64>), words.next(), words.next()) {
        (Some(Ok(number)), Some(_unit), None) if number.is_finite() => Ok(Some(number)),
        _ => Err("expected `<number> <unit>`, `NA` or `not supported`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module as `hccn_tool -i 0 -optical -g` prints it on an Atlas 800 (910), abridged.
    const PRESENT: &str = "\
optical info:
present              : present
temperature          : 47 C
high power enable reg: enabled
vendor name          : Hisense
vendor org unique id : 0xac 0x4a 0x0
Vcc                  : 3262.90 mV
Tx Power0            : 4.4035 mW
Rx Power0            : 1.0189 mW
Tx Power1            : 1.3968 mW
Rx Power1            : 0.0054 mW
Tx Power2            : 1.4140 mW
Rx Power2            : 0.9907 mW
Tx Power3            : 1.4988 mW
Rx Power3            : 1.0213 mW
TxPower High Thres   : 3.5481 mW
Host SNR Lane0       : not supported
";

    #[test]
    fn a_present_module_gives_every_reading() {
        let info = parse_optical(PRESENT).expect("parses");
        assert!(info.present);
        assert_eq!(info.temperature_celsius, Some(47.0));
        assert_eq!(info.vcc_millivolts, Some(3262.9));
        assert_eq!(info.tx_power_milliwatts, [Some(4.4035), Some(1.3968), Some(1.414), Some(1.4988)]);
        assert_eq!(info.rx_power_milliwatts, [Some(1.0189), Some(0.0054), Some(0.9907), Some(1.0213)]);
    }

    #[test]
    fn an_absent_module_has_no_readings() {
        let output = "optical info:\npresent : not present\ntemperature : NA\nTx Power0 : not supported\n";
        let info = parse_optical(output).expect("parses");
        assert_eq!(info, OpticalInfo::default());
    }

    #[test]
    fn a_bad_reading_or_presence_names_the_line() {
        let error = parse_optical(&PRESENT.replace("4.4035 mW", "lots")).unwrap_err();
        assert_eq!(error.line(), Some("Tx Power0            : lots"));
        assert!(parse_optical("present : maybe\n").is_err());
        assert!(parse_optical("temperature : 47 C\n").is_err());
        assert!(parse_optical("present : present\nVcc : inf mV\n").is_err());
    }
}
