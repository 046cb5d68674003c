//! What the simulated tool prints, in the forms Huawei's npu-exporter parses (Ascend/mind-cluster
//! component/ascend-common/devmanager/hccn/hccn_tool.go). The training cards' forms follow outputs of the real tool
//! quoted there; the Ascend950 tables are laid out so that the exporter's table parsers (getAllUBPortsFromHccnLines,
//! getSpeedFromStrA5, parseSecondTableColumns) read them, since no complete sample is public.

use std::fmt::Write;

use super::port_settings::PortSettings;
use super::port_state::PortState;
use crate::network_port::Link;

fn link_word(link: Link) -> &'static str {
    match link {
        Link::Up => "UP",
        Link::Down => "DOWN",
    }
}

/// `-link`: `link status: UP`.
pub fn link(state: &PortState) -> String {
    format!("link status: {}\n", link_word(state.link))
}

/// `-speed -g`: `Speed: 200000 Mb/s`, `Speed: Unknown!` while the link is down.
pub fn speed(settings: &PortSettings, state: &PortState) -> String {
    match state.link {
        Link::Up => format!("Speed: {} Mb/s\n", settings.speed_mbps),
        Link::Down => "Speed: Unknown!\n".to_owned(),
    }
}

/// `-link_stat -g`: the facts of the link, each line prefixed with the device.
pub fn link_stat(phy_id: u32, state: &PortState) -> String {
    format!("[devid {phy_id}]link up count       : {}\n[devid {phy_id}]link change records :\n", state.link_up_count)
}

/// `-bandwidth`: one line per direction.
pub fn bandwidth(state: &PortState) -> String {
    format!(
        "Bandwidth TX: {:.2} MB/sec\nBandwidth RX: {:.2} MB/sec\n",
        state.tx_megabytes_per_s, state.rx_megabytes_per_s
    )
}

/// A counter: its key, the direction it follows and the share of that direction's packets (numerator,
/// denominator); 0/1 for error counters, which stay at zero.
type Counter = (&'static str, Direction, u64, u64);

#[derive(Clone, Copy)]
enum Direction {
    Rx,
    Tx,
}

/// The MAC and RoCE counters of `-stat -g` (the keys Huawei's collector_for_roce.go reads, and totals).
const ROCE_COUNTERS: &[Counter] = &[
    ("mac_tx_mac_pause_num", Direction::Tx, 1, 100_000),
    ("mac_rx_mac_pause_num", Direction::Rx, 1, 100_000),
    ("mac_tx_pfc_pkt_num", Direction::Tx, 1, 10_000),
    ("mac_rx_pfc_pkt_num", Direction::Rx, 1, 10_000),
    ("mac_tx_total_pkt_num", Direction::Tx, 1, 1),
    ("mac_rx_total_pkt_num", Direction::Rx, 1, 1),
    ("mac_tx_bad_pkt_num", Direction::Tx, 0, 1),
    ("mac_rx_bad_pkt_num", Direction::Rx, 0, 1),
    ("mac_tx_bad_oct_num", Direction::Tx, 0, 1),
    ("mac_rx_bad_oct_num", Direction::Rx, 0, 1),
    ("mac_rx_fcs_err_pkt_num", Direction::Rx, 0, 1),
    ("roce_rx_all_pkt_num", Direction::Rx, 1, 1),
    ("roce_tx_all_pkt_num", Direction::Tx, 1, 1),
    ("roce_rx_err_pkt_num", Direction::Rx, 0, 1),
    ("roce_tx_err_pkt_num", Direction::Tx, 0, 1),
    ("roce_rx_cnp_pkt_num", Direction::Rx, 1, 50_000),
    ("roce_tx_cnp_pkt_num", Direction::Tx, 1, 50_000),
    ("roce_new_pkt_rty_num", Direction::Tx, 0, 1),
    ("roce_unexpected_ack_num", Direction::Rx, 0, 1),
    ("roce_out_of_order_num", Direction::Rx, 0, 1),
    ("roce_verification_err_num", Direction::Rx, 0, 1),
    ("roce_qp_status_err_num", Direction::Rx, 0, 1),
    ("roce_ecn_db_num", Direction::Rx, 1, 50_000),
];

/// The counters of `-g -stat` (the keys Huawei's collector_for_ub.go reads).
const UB_COUNTERS: &[Counter] = &[
    ("ub_ipv4_pkt_cnt_rx", Direction::Rx, 1, 2),
    ("ub_ipv6_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("unic_ipv4_pkt_cnt_rx", Direction::Rx, 1, 4),
    ("unic_ipv6_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("ub_compact_pkt_cnt_rx", Direction::Rx, 1, 4),
    ("ub_umoc_ctph_cnt_rx", Direction::Rx, 0, 1),
    ("ub_umoc_ntph_cnt_rx", Direction::Rx, 0, 1),
    ("ub_mem_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("unknown_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("drop_ind_cnt_rx", Direction::Rx, 0, 1),
    ("err_ind_cnt_rx", Direction::Rx, 0, 1),
    ("to_host_pkt_cnt_rx", Direction::Rx, 1, 1),
    ("to_imp_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("to_mar_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("to_link_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("to_noc_pkt_cnt_rx", Direction::Rx, 0, 1),
    ("route_err_cnt_rx", Direction::Rx, 0, 1),
    ("out_err_cnt_rx", Direction::Rx, 0, 1),
    ("length_err_cnt_rx", Direction::Rx, 0, 1),
    ("rx_busi_flit_num", Direction::Rx, 4, 1),
    ("rx_send_ack_flit", Direction::Rx, 1, 8),
    ("ub_ipv4_pkt_cnt_tx", Direction::Tx, 1, 2),
    ("ub_ipv6_pkt_cnt_tx", Direction::Tx, 0, 1),
    ("unic_ipv4_pkt_cnt_tx", Direction::Tx, 1, 4),
    ("unic_ipv6_pkt_cnt_tx", Direction::Tx, 0, 1),
    ("ub_compact_pkt_cnt_tx", Direction::Tx, 1, 4),
    ("ub_umoc_ctph_cnt_tx", Direction::Tx, 0, 1),
    ("ub_umoc_ntph_cnt_tx", Direction::Tx, 0, 1),
    ("ub_mem_pkt_cnt_tx", Direction::Tx, 0, 1),
    ("unknown_pkt_cnt_tx", Direction::Tx, 0, 1),
    ("drop_ind_cnt_tx", Direction::Tx, 0, 1),
    ("err_ind_cnt_tx", Direction::Tx, 0, 1),
    ("lpbk_ind_cnt_tx", Direction::Tx, 0, 1),
    ("out_err_cnt_tx", Direction::Tx, 0, 1),
    ("length_err_cnt_tx", Direction::Tx, 0, 1),
    ("tx_busi_flit_num", Direction::Tx, 4, 1),
    ("tx_recv_ack_flit", Direction::Tx, 1, 8),
];

fn counter_value(state: &PortState, (_, direction, numerator, denominator): &Counter) -> u64 {
    let packets = match direction {
        Direction::Rx => state.rx_packets,
        Direction::Tx => state.tx_packets,
    };
    packets.saturating_mul(*numerator) / denominator
}

/// `-stat -g`: `key:value` lines under a title.
pub fn stat(state: &PortState) -> String {
    let mut text = "packet statistics:\n".to_owned();
    for counter in ROCE_COUNTERS {
        let _ = writeln!(text, "{}:{}", counter.0, counter_value(state, counter));
    }
    text
}

/// `-g -stat`: `key : value` lines, keys padded.
pub fn ub_stat(state: &PortState) -> String {
    let mut text = String::new();
    for counter in UB_COUNTERS {
        let _ = writeln!(text, "{:<22}: {}", counter.0, counter_value(state, counter));
    }
    text
}

/// `-optical -g`: `key : value unit` lines as the real tool prints them, `NA` without a module.
pub fn optical(state: &PortState) -> String {
    let mut lines: Vec<(String, String)> = Vec::new();
    match &state.optical {
        Some(module) => {
            lines.push(("present".into(), "present".into()));
            lines.push(("temperature".into(), format!("{:.0} C", module.temperature_c)));
            lines.push(("vendor name".into(), "dcmi-sim".into()));
            lines.push(("Vcc".into(), format!("{:.2} mV", module.vcc_mv)));
            for lane in 0..4 {
                lines.push((format!("Tx Power{lane}"), format!("{:.4} mW", module.tx_power_mw)));
                lines.push((format!("Rx Power{lane}"), format!("{:.4} mW", module.rx_power_mw)));
            }
        }
        None => {
            lines.push(("present".into(), "not present".into()));
            lines.push(("temperature".into(), "NA".into()));
            lines.push(("Vcc".into(), "NA".into()));
            for lane in 0..4 {
                lines.push((format!("Tx Power{lane}"), "NA".into()));
                lines.push((format!("Rx Power{lane}"), "NA".into()));
            }
        }
    }
    let mut text = "optical info:\n".to_owned();
    for (key, value) in lines {
        let _ = writeln!(text, "{key:<21}: {value}");
    }
    text
}

/// A boxed table: `+---+` separators around the header, and after the rows.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|column| rows.iter().map(|row| row.get(column).map_or(0, String::len)).chain([header[column].len()]).max())
        .map(|width| width.unwrap_or(0))
        .collect();
    let separator = widths.iter().fold("+".to_owned(), |line, width| line + &"-".repeat(width + 2) + "+") + "\n";
    let row_line = |cells: Vec<&str>| {
        cells.iter().zip(&widths).fold("|".to_owned(), |line, (cell, width)| line + &format!(" {cell:<width$} |"))
            + "\n"
    };
    let mut text = separator.clone();
    text += &row_line(header.to_vec());
    text += &separator;
    for row in rows {
        text += &row_line(row.iter().map(String::as_str).collect());
    }
    text + &separator
}

/// `-g -dev_info`: one row per UB port.
pub fn dev_info(settings: &PortSettings, ports: &[(u32, u32, PortState)]) -> String {
    let rows: Vec<Vec<String>> = ports
        .iter()
        .map(|(udie, port, state)| {
            vec![
                udie.to_string(),
                port.to_string(),
                settings.ub_speed_gbps.to_string(),
                "UB".to_owned(),
                link_word(state.link).to_owned(),
                if state.optical.is_some() { "Optical" } else { "Electrical" }.to_owned(),
            ]
        })
        .collect();
    table(&["UdieID", "PortID", "Speed", "PortType", "Link Status", "Media Type"], &rows)
}

/// `-g -speed`: the port's row, the speed `NA` while it is down.
pub fn ub_speed(settings: &PortSettings, (udie, port): (u32, u32), state: &PortState) -> String {
    let speed = match state.link {
        Link::Up => format!("{} G", settings.ub_speed_gbps),
        Link::Down => "NA".to_owned(),
    };
    table(&["UdieID", "PortID", "PortType", "Speed"], &[vec![udie.to_string(), port.to_string(), "UB".into(), speed]])
}

/// Power in dBm of `milliwatts`, floored at -40 dBm for a dark lane.
fn dbm(milliwatts: f64) -> f64 {
    10.0 * milliwatts.max(0.0001).log10()
}

/// `-g -optical`: a summary table of the module, then its readings per lane with alarm thresholds.
pub fn ub_optical(state: &PortState, (udie, port): (u32, u32)) -> String {
    let ids = [udie.to_string(), port.to_string()];
    let Some(module) = &state.optical else {
        let summary = [ids[0].clone(), ids[1].clone(), "not present".to_owned()];
        return table(&["UdieID", "PortID", "Optical"], &[summary.to_vec()]);
    };
    let mut text = table(&["UdieID", "PortID", "Optical"], &[vec![ids[0].clone(), ids[1].clone(), "present".into()]]);
    let mut rows = Vec::new();
    for lane in 0..4 {
        for (direction, milliwatts, low) in [("Tx", module.tx_power_mw, "-8.00"), ("Rx", module.rx_power_mw, "-10.00")]
        {
            let first = rows.is_empty();
            rows.push(vec![
                ids[0].clone(),
                ids[1].clone(),
                lane.to_string(),
                format!("{direction}Power Lane{lane}(dBm)"),
                format!("{:.2}", dbm(milliwatts)),
                low.to_owned(),
                "-6.00".to_owned(),
                "4.00".to_owned(),
                "5.00".to_owned(),
                if first { "optical_0".to_owned() } else { String::new() },
            ]);
        }
    }
    rows.push(vec![
        ids[0].clone(),
        ids[1].clone(),
        "0".to_owned(),
        "Temperature(C)".to_owned(),
        format!("{:.0}", module.temperature_c),
        "-5".to_owned(),
        "0".to_owned(),
        "70".to_owned(),
        "75".to_owned(),
        String::new(),
    ]);
    let header =
        ["UdieID", "PortID", "Lane", "Item", "Value", "Low Alarm", "Low Warn", "High Warn", "High Alarm", "Module"];
    text += &table(&header, &rows);
    text
}
