//! Link state (`-link -g`, `-g -link`) and the link-up count (`-link_stat -g`).
//!
//! Forms, from Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go (GetNPULinkStatus,
//! GetNPULinkStatusNpu, GetNPULinkUpNum): `link status: UP` (or `DOWN`) on one line; the link statistics print one
//! line per fact, each prefixed with the device, among them `[devid 0]link up count       : 2`.

use crate::error::ParseError;

/// The state of a chip's network port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkState {
    /// The link is up.
    Up,
    /// The link is down.
    Down,
}

impl LinkState {
    /// The word hccn_tool prints: `UP` or `DOWN`.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Up => "UP",
            LinkState::Down => "DOWN",
        }
    }

    /// Reads `UP` or `DOWN` (any case, surrounding blanks ignored).
    pub(crate) fn from_word(word: &str) -> Option<LinkState> {
        let word = word.trim();
        if word.eq_ignore_ascii_case("UP") {
            Some(LinkState::Up)
        } else if word.eq_ignore_ascii_case("DOWN") {
            Some(LinkState::Down)
        } else {
            None
        }
    }
}

impl std::fmt::Display for LinkState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The link state of `hccn_tool -i <phy_id> -link -g` (Atlas training cards: 910, 910B, A3).
///
/// # Errors
/// [`ParseError`] when no `link status:` line holds `UP` or `DOWN`.
pub fn parse_link_state(output: &str) -> Result<LinkState, ParseError> {
    link_state(output, "-link -g")
}

/// The link state of one UB port, `hccn_tool -g -link -i <logic_id> -u <udie> -p <port>` (Ascend950).
///
/// # Errors
/// [`ParseError`] when no `link status:` line holds `UP` or `DOWN`.
pub fn parse_ub_link_state(output: &str) -> Result<LinkState, ParseError> {
    link_state(output, "-g -link")
}

fn link_state(output: &str, command: &'static str) -> Result<LinkState, ParseError> {
    for line in output.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        if key.trim().eq_ignore_ascii_case("link status") {
            return LinkState::from_word(value)
                .ok_or_else(|| ParseError::at(command, line, "the link status is neither UP nor DOWN"));
        }
    }
    Err(ParseError::new(command, "no `link status:` line"))
}

/// How often the link came up since the driver started, from `hccn_tool -i <phy_id> -link_stat -g`.
///
/// # Errors
/// [`ParseError`] when no `link up count` line holds a count.
pub fn parse_link_up_count(output: &str) -> Result<u64, ParseError> {
    const COMMAND: &str = "-link_stat -g";
    for line in output.lines() {
        if !line.contains("link up count") {
            continue;
        }
        let value = line.rsplit_once(':').map(|(_, value)| value.trim()).unwrap_or_default();
        return value.parse().map_err(|_| ParseError::at(COMMAND, line, "the link up count is not a number"));
    }
    Err(ParseError::new(COMMAND, "no `link up count` line"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_state_reads_up_and_down() {
        assert_eq!(parse_link_state("link status: UP\n"), Ok(LinkState::Up));
        assert_eq!(parse_link_state("link status: DOWN\n"), Ok(LinkState::Down));
        assert_eq!(parse_ub_link_state("link status: DOWN"), Ok(LinkState::Down));
    }

    #[test]
    fn a_link_state_other_than_up_or_down_names_the_line() {
        let error = parse_link_state("link status: FLAKY\n").unwrap_err();
        assert_eq!(error.line(), Some("link status: FLAKY"));
        assert_eq!(error.command(), "-link -g");
        assert!(parse_link_state("").is_err());
        assert!(parse_ub_link_state("something else\n").is_err());
    }

    #[test]
    fn link_up_count_is_read_from_the_statistics() {
        let output = "[devid 0]current time        : Wed Aug  2 03:09:26 2022\n\
                      [devid 0]link up count       : 2\n\
                      [devid 0]link change records :\n\
                      [devid 0]    Tue Aug  1 14:43:40 2022    LINK UP\n";
        assert_eq!(parse_link_up_count(output), Ok(2));
    }

    #[test]
    fn a_link_up_count_that_is_no_number_is_an_error() {
        let error = parse_link_up_count("[devid 0]link up count       : many\n").unwrap_err();
        assert!(error.to_string().contains("link up count       : many"), "{error}");
        assert!(parse_link_up_count("[devid 0]current time : now\n").is_err());
    }
}
