//! The simulated tool's command line: the forms Huawei's npu-exporter runs (Ascend/mind-cluster
//! component/ascend-common/devmanager/hccn/hccn_tool.go): `-i <phy_id> <query> -g` on training cards and
//! `-g <query> -i <logic_id> [-u <udie> -p <port>] [-time <ms>]` on Ascend950, options in any order.

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `-link`: link state.
    Link,
    /// `-speed`: link speed.
    Speed,
    /// `-link_stat`: link statistics (training cards).
    LinkStat,
    /// `-stat`: packet counters.
    Stat,
    /// `-optical`: the optical module.
    Optical,
    /// `-bandwidth`: transmit and receive rates.
    Bandwidth,
    /// `-dev_info`: the ports (Ascend950).
    DevInfo,
}

impl Query {
    fn from_flag(flag: &str) -> Option<Query> {
        Some(match flag {
            "-link" => Query::Link,
            "-speed" => Query::Speed,
            "-link_stat" => Query::LinkStat,
            "-stat" => Query::Stat,
            "-optical" => Query::Optical,
            "-bandwidth" => Query::Bandwidth,
            "-dev_info" => Query::DevInfo,
            _ => return None,
        })
    }
}

/// A parsed command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The query.
    pub query: Query,
    /// `-i`: the physical id on training cards, the logic id on Ascend950.
    pub device: u32,
    /// `-u` and `-p`: the die and port of a UB port.
    pub port: Option<(u32, u32)>,
    /// `-time`: the sampling window of `-bandwidth` in ms.
    pub window_ms: Option<u32>,
}

/// Reads the arguments after the program name.
///
/// # Errors
/// A one-line message for an unknown or repeated option, a missing or non-numeric value, no `-g`, no query or two.
pub fn parse(args: &[String]) -> Result<Request, String> {
    let (mut query, mut device, mut udie, mut port, mut window_ms, mut get) = (None, None, None, None, None, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "-g" => {
                get = true;
                continue;
            }
            "-i" => &mut device,
            "-u" => &mut udie,
            "-p" => &mut port,
            "-time" => &mut window_ms,
            flag => match Query::from_flag(flag) {
                Some(asked) if query.is_none() => {
                    query = Some(asked);
                    continue;
                }
                Some(_) => return Err(format!("more than one query ({flag})")),
                None => return Err(format!("unknown option `{flag}`")),
            },
        };
        if slot.is_some() {
            return Err(format!("option {arg} is given twice"));
        }
        let value = args.next().ok_or_else(|| format!("option {arg} needs a value"))?;
        *slot = Some(value.parse::<u32>().map_err(|_| format!("option {arg}: `{value}` is not a number"))?);
    }
    if !get {
        return Err("only queries (-g) are supported".to_owned());
    }
    let query = query.ok_or("no query (-link, -speed, -link_stat, -stat, -optical, -bandwidth, -dev_info)")?;
    let device = device.ok_or("no device (-i)")?;
    let port = match (udie, port) {
        (Some(udie), Some(port)) => Some((udie, port)),
        (None, None) => None,
        _ => return Err("-u and -p go together".to_owned()),
    };
    if window_ms.is_some() && query != Query::Bandwidth {
        return Err("-time goes with -bandwidth only".to_owned());
    }
    Ok(Request { query, device, port, window_ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn both_argument_orders_parse() {
        let legacy = parse(&args("-i 3 -link -g")).expect("parses");
        assert_eq!(legacy, Request { query: Query::Link, device: 3, port: None, window_ms: None });
        let ub = parse(&args("-g -bandwidth -i 58 -u 0 -p 4 -time 100")).expect("parses");
        assert_eq!(ub, Request { query: Query::Bandwidth, device: 58, port: Some((0, 4)), window_ms: Some(100) });
        assert_eq!(parse(&args("-g -dev_info -i 0")).map(|request| request.query), Ok(Query::DevInfo));
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        for (line, expected) in [
            ("-i 0 -link", "only queries"),
            ("-i 0 -g", "no query"),
            ("-link -g", "no device"),
            ("-i x -link -g", "not a number"),
            ("-i 0 -link -speed -g", "more than one query"),
            ("-i 0 -i 1 -link -g", "twice"),
            ("-i 0 -link -g -x", "unknown option"),
            ("-g -link -i 0 -u 0", "go together"),
            ("-g -link -i 0 -time 5", "-bandwidth only"),
            ("-g -link -i", "needs a value"),
        ] {
            let error = parse(&args(line)).unwrap_err();
            assert!(error.contains(expected), "{line}: {error}");
        }
    }
}
