//! Packet counters: `-stat -g` (MAC and RoCE counters of a training card's port) and `-g -stat` (a UB port's).
//!
//! Form, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetNPUStatInfo,
//! GetNPUUbStatInfo): one `key:value` line per counter (`roce_rx_err_pkt_num:0`; on Ascend950 blanks may surround
//! the colon), below a title line such as `packet statistics:` whose value is empty.

use std::collections::BTreeMap;

use crate::error::ParseError;

/// Counters by the tool's key (`mac_rx_mac_pause_num`, `roce_rx_all_pkt_num`, `ub_ipv4_pkt_cnt_rx` ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatCounters {
    counters: BTreeMap<String, u64>,
}

impl StatCounters {
    /// The counter named `key`, if the tool printed it.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.counters.get(key).copied()
    }

    /// Every counter, by key in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counters.iter().map(|(key, value)| (key.as_str(), *value))
    }

    /// How many counters there are.
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }
}

/// The counters of `hccn_tool -i <phy_id> -stat -g`.
///
/// # Errors
/// [`ParseError`] for a `key:value` line (a key without blanks) whose value is not an unsigned integer, a key
/// printed twice, or an output without any counter. Lines whose key has blanks are titles or prose and skipped.
pub fn parse_stat(output: &str) -> Result<StatCounters, ParseError> {
    counters(output, "-stat -g")
}

/// The counters of one UB port, `hccn_tool -g -stat -i <logic_id> -u <udie> -p <port>` (Ascend950).
///
/// # Errors
/// As [`parse_stat`].
pub fn parse_ub_stat(output: &str) -> Result<StatCounters, ParseError> {
    counters(output, "-g -stat")
}

fn counters(output: &str, command: &'static str) -> Result<StatCounters, ParseError> {
    let mut counters = BTreeMap::new();
    for line in output.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() || key.contains(char::is_whitespace) {
            // A title such as `packet statistics:`, or prose: counter keys are single words.
            continue;
        }
        if key.is_empty() {
            return Err(ParseError::at(command, line, "a counter without a key"));
        }
        let value = value.parse().map_err(|_| ParseError::at(command, line, "the counter is not a number"))?;
        if counters.insert(key.to_owned(), value).is_some() {
            return Err(ParseError::at(command, line, "the counter is printed twice"));
        }
    }
    if counters.is_empty() {
        return Err(ParseError::new(command, "no counter in the output"));
    }
    Ok(StatCounters { counters })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_below_the_title() {
        let output = "packet statistics:\nmac_rx_mac_pause_num:12\nroce_rx_err_pkt_num:0\nroce_ecn_db_num:7\n";
        let counters = parse_stat(output).expect("parses");
        assert_eq!(counters.get("mac_rx_mac_pause_num"), Some(12));
        assert_eq!(counters.get("roce_rx_err_pkt_num"), Some(0));
        assert_eq!(counters.get("roce_ecn_db_num"), Some(7));
        assert_eq!(counters.get("mac_tx_pfc_pkt_num"), None);
        assert_eq!(counters.len(), 3);
    }

    #[test]
    fn ub_counters_may_have_blanks_around_the_colon() {
        let output = "ub_ipv4_pkt_cnt_rx : 1024\ndrop_ind_cnt_tx    : 0\n";
        let counters = parse_ub_stat(output).expect("parses");
        assert_eq!(counters.iter().collect::<Vec<_>>(), vec![("drop_ind_cnt_tx", 0), ("ub_ipv4_pkt_cnt_rx", 1024)]);
    }

    #[test]
    fn a_counter_that_is_no_number_names_the_line() {
        let error = parse_stat("packet statistics:\nroce_rx_err_pkt_num:-1\n").unwrap_err();
        assert_eq!(error.line(), Some("roce_rx_err_pkt_num:-1"));
        assert!(parse_stat("a:1\na:2\n").is_err());
        assert!(parse_stat("packet statistics:\n").is_err());
        assert!(parse_ub_stat("two words: 3\n").is_err(), "prose is skipped, and then no counter is left");
        assert!(parse_stat(": 3\n").is_err());
        assert_eq!(parse_stat("link up count : 2\nroce_rx_all_pkt_num:1\n").map(|c| c.len()), Ok(1));
    }
}
