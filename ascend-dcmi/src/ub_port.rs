//! Unified-bus (UB) port counters of Ascend950 chips: what `dcmiv2_get_port_pkt_stats_info` reports, raw
//! ([`UbPortCounters`]) and in sums a dashboard wants ([`UbPortStats`]). The V1 API has no such call.

use dcmi_sys as sys;

/// The highest die id with UB ports (Ascend950 has up to three dies).
pub const MAX_UB_DIE: u8 = 2;
/// The highest UB port id on a die.
pub const MAX_UB_PORT: u8 = 9;

/// One UB port: a die of the chip and a port on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UbPort {
    /// The die (0..=[`MAX_UB_DIE`]).
    pub die: u8,
    /// The port on the die (0..=[`MAX_UB_PORT`]).
    pub port: u8,
}

/// Packet counters of one UB port since the driver started: monotonic, in packets (flits: 32-byte link units;
/// bytes where the name says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UbPortStats {
    /// The port's mode as the driver reports it.
    pub mode: i32,
    /// Packets received, every kind (global IPv4/IPv6, UNIC IPv4/IPv6, CLAN, UMOC, memory, unknown).
    pub rx_packets: u64,
    /// Packets sent, every kind.
    pub tx_packets: u64,
    /// Received packets dropped.
    pub rx_dropped: u64,
    /// Received packets with an error indication, a routing, output or length error.
    pub rx_errors: u64,
    /// Sent packets with an error indication, an output or length error.
    pub tx_errors: u64,
    /// Business flits received.
    pub rx_flits: u64,
    /// Business flits sent.
    pub tx_flits: u64,
    /// Link CRC errors.
    pub crc_errors: u64,
    /// Link-layer retry requests.
    pub retry_requests: u64,
    /// Pause frames received.
    pub rx_pause_frames: u64,
    /// Pause frames sent.
    pub tx_pause_frames: u64,
    /// PFC frames received.
    pub rx_pfc_frames: u64,
    /// PFC frames sent.
    pub tx_pfc_frames: u64,
    /// Bad frames received.
    pub rx_bad_frames: u64,
    /// Bytes of bad frames received.
    pub rx_bad_bytes: u64,
}

impl UbPortStats {
    pub(crate) fn from_raw(raw: &sys::dcmi_port_pkt_stats_info) -> UbPortStats {
        UbPortStats::from_counters(&UbPortCounters::from_raw(UbPort { die: 0, port: 0 }, raw))
    }

    /// The sums of one port's raw counters.
    pub fn from_counters(counters: &UbPortCounters) -> UbPortStats {
        let sum = |names: &[&str]| {
            names.iter().filter_map(|name| counters.get(name)).fold(0u64, |total, value| total.saturating_add(value))
        };
        let packet_kinds = ["ub_ipv4", "ub_ipv6", "unic_ipv4", "unic_ipv6", "ub_compact", "ub_mem", "unknown"];
        let packets = |direction: &str| {
            let mut names: Vec<String> =
                packet_kinds.iter().map(|kind| format!("{kind}_pkt_cnt_{direction}")).collect();
            names.extend(["ub_umoc_ctph", "ub_umoc_ntph"].map(|kind| format!("{kind}_cnt_{direction}")));
            sum(&names.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let one = |name: &str| counters.get(name).unwrap_or(0);
        UbPortStats {
            mode: counters.mode,
            rx_packets: packets("rx"),
            tx_packets: packets("tx"),
            rx_dropped: one("drop_ind_cnt_rx"),
            rx_errors: sum(&["err_ind_cnt_rx", "route_err_cnt_rx", "out_err_cnt_rx", "length_err_cnt_rx"]),
            tx_errors: sum(&["err_ind_cnt_tx", "out_err_cnt_tx", "length_err_cnt_tx"]),
            rx_flits: one("rx_busi_flit_num"),
            tx_flits: one("tx_busi_flit_num"),
            crc_errors: one("crc_error_sum"),
            retry_requests: one("retry_req_sum"),
            rx_pause_frames: one("core_mib_rxpausepkts"),
            tx_pause_frames: one("core_mib_txpausepkts"),
            rx_pfc_frames: one("core_mib_rxpfcpkts"),
            tx_pfc_frames: one("core_mib_txpfcpkts"),
            rx_bad_frames: one("core_mib_rxbadpkts"),
            rx_bad_bytes: one("core_mib_rxbadoctets"),
        }
    }
}

/// How many counters a [`UbPortCounters`] holds.
pub const UB_COUNTERS: usize = 48;

/// The counters of [`UbPortCounters::values`], in order, by the names Huawei's npu-exporter gives them (its metric
/// names without `npu_chip_info_`; Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_ub.go):
/// 21 receive counters, 16 transmit counters, 3 link sums, then the 8 that only UBoE ports report.
pub const UB_COUNTER_NAMES: [&str; UB_COUNTERS] = [
    "ub_ipv4_pkt_cnt_rx",
    "ub_ipv6_pkt_cnt_rx",
    "unic_ipv4_pkt_cnt_rx",
    "unic_ipv6_pkt_cnt_rx",
    "ub_compact_pkt_cnt_rx",
    "ub_umoc_ctph_cnt_rx",
    "ub_umoc_ntph_cnt_rx",
    "ub_mem_pkt_cnt_rx",
    "unknown_pkt_cnt_rx",
    "drop_ind_cnt_rx",
    "err_ind_cnt_rx",
    "to_host_pkt_cnt_rx",
    "to_imp_pkt_cnt_rx",
    "to_mar_pkt_cnt_rx",
    "to_link_pkt_cnt_rx",
    "to_noc_pkt_cnt_rx",
    "route_err_cnt_rx",
    "out_err_cnt_rx",
    "length_err_cnt_rx",
    "rx_busi_flit_num",
    "rx_send_ack_flit",
    "ub_ipv4_pkt_cnt_tx",
    "ub_ipv6_pkt_cnt_tx",
    "unic_ipv4_pkt_cnt_tx",
    "unic_ipv6_pkt_cnt_tx",
    "ub_compact_pkt_cnt_tx",
    "ub_umoc_ctph_cnt_tx",
    "ub_umoc_ntph_cnt_tx",
    "ub_mem_pkt_cnt_tx",
    "unknown_pkt_cnt_tx",
    "drop_ind_cnt_tx",
    "err_ind_cnt_tx",
    "lpbk_ind_cnt_tx",
    "out_err_cnt_tx",
    "length_err_cnt_tx",
    "tx_busi_flit_num",
    "tx_recv_ack_flit",
    "retry_req_sum",
    "retry_ack_sum",
    "crc_error_sum",
    "core_mib_rxpausepkts",
    "core_mib_txpausepkts",
    "core_mib_rxpfcpkts",
    "core_mib_txpfcpkts",
    "core_mib_rxbadpkts",
    "core_mib_txbadpkts",
    "core_mib_rxbadoctets",
    "core_mib_txbadoctets",
];

/// Where the counters that only UBoE ports (port mode 1) report begin in [`UB_COUNTER_NAMES`].
pub const UBOE_COUNTERS_FROM: usize = 40;

/// Every counter of one UB port, as `dcmiv2_get_port_pkt_stats_info` reports them (the raw fields that
/// [`UbPortStats`] folds into sums).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UbPortCounters {
    /// The port.
    pub port: UbPort,
    /// The port's mode as the driver reports it (1: UBoE, a UB port carrying Ethernet).
    pub mode: i32,
    /// The counters, named by [`UB_COUNTER_NAMES`].
    #[cfg_attr(feature = "serde", serde(serialize_with = "serialize_counters"))]
    pub values: [u64; UB_COUNTERS],
}

#[cfg(feature = "serde")]
fn serialize_counters<S: serde::Serializer>(values: &[u64; UB_COUNTERS], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(UB_COUNTER_NAMES.iter().zip(values))
}

impl UbPortCounters {
    /// Whether the port is a UBoE port, the only kind that reports the `core_mib_*` counters.
    pub fn is_uboe(&self) -> bool {
        self.mode == 1
    }

    /// One counter by its name in [`UB_COUNTER_NAMES`].
    pub fn get(&self, name: &str) -> Option<u64> {
        UB_COUNTER_NAMES.iter().position(|known| *known == name).map(|index| self.values[index])
    }

    pub(crate) fn from_raw(port: UbPort, raw: &sys::dcmi_port_pkt_stats_info) -> UbPortCounters {
        UbPortCounters {
            port,
            mode: raw.port_mode,
            values: [
                raw.ub_glb_ipv4_pkt_cnt_rx,
                raw.ub_glb_ipv6_pkt_cnt_rx,
                raw.unic_ipv4_pkt_cnt_rx,
                raw.unic_ipv6_pkt_cnt_rx,
                raw.ub_clan_pkt_cnt_rx,
                raw.ub_umoc_ctph_cnt_rx,
                raw.ub_umoc_ntph_cnt_rx,
                raw.ub_mem_pkt_cnt_rx,
                raw.unknown_pkt_cnt_rx,
                raw.drop_ind_cnt_rx,
                raw.err_ind_cnt_rx,
                raw.to_host_pkt_cnt_rx,
                raw.to_imp_pkt_cnt_rx,
                raw.to_mar_pkt_cnt_rx,
                raw.to_link_pkt_cnt_rx,
                raw.to_noc_pkt_cnt_rx,
                raw.route_err_cnt_rx,
                raw.out_err_cnt_rx,
                raw.length_err_cnt_rx,
                raw.rx_busi_flit_num,
                raw.rx_send_ack_flit,
                raw.ub_glb_ipv4_pkt_cnt_tx,
                raw.ub_glb_ipv6_pkt_cnt_tx,
                raw.unic_ipv4_pkt_cnt_tx,
                raw.unic_ipv6_pkt_cnt_tx,
                raw.ub_clan_pkt_cnt_tx,
                raw.ub_umoc_ctph_cnt_tx,
                raw.ub_umoc_ntph_cnt_tx,
                raw.ub_mem_pkt_cnt_tx,
                raw.unknown_pkt_cnt_tx,
                raw.drop_ind_cnt_tx,
                raw.err_ind_cnt_tx,
                raw.lpbk_ind_cnt_tx,
                raw.out_err_cnt_tx,
                raw.length_err_cnt_tx,
                raw.tx_busi_flit_num,
                raw.tx_recv_ack_flit,
                raw.retry_req_sum,
                raw.retry_ack_sum,
                raw.crc_error_sum,
                raw.core_mib_rxpausepkts,
                raw.core_mib_txpausepkts,
                raw.core_mib_rxpfcpkts,
                raw.core_mib_txpfcpkts,
                raw.core_mib_rxbadpkts,
                raw.core_mib_txbadpkts,
                raw.core_mib_rxbadoctets,
                raw.core_mib_txbadoctets,
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_packet_kind_and_saturates() {
        let raw = sys::dcmi_port_pkt_stats_info {
            ub_glb_ipv4_pkt_cnt_rx: 10,
            unic_ipv6_pkt_cnt_rx: 5,
            unknown_pkt_cnt_rx: 1,
            ub_mem_pkt_cnt_tx: u64::MAX,
            ub_clan_pkt_cnt_tx: 3,
            crc_error_sum: 2,
            ..Default::default()
        };
        let stats = UbPortStats::from_raw(&raw);
        assert_eq!((stats.rx_packets, stats.tx_packets, stats.crc_errors), (16, u64::MAX, 2));
    }

    #[test]
    fn raw_counters_keep_every_field_under_huaweis_name() {
        let raw = sys::dcmi_port_pkt_stats_info {
            port_mode: 1,
            ub_glb_ipv4_pkt_cnt_rx: 10,
            ub_clan_pkt_cnt_tx: 3,
            retry_req_sum: 4,
            core_mib_txbadoctets: 7,
            ..Default::default()
        };
        let counters = UbPortCounters::from_raw(UbPort { die: 1, port: 2 }, &raw);
        assert_eq!(counters.get("ub_ipv4_pkt_cnt_rx"), Some(10));
        assert_eq!(counters.get("ub_compact_pkt_cnt_tx"), Some(3));
        assert_eq!(counters.get("retry_req_sum"), Some(4));
        assert_eq!(counters.get("core_mib_txbadoctets"), Some(7));
        assert_eq!(UB_COUNTER_NAMES[UBOE_COUNTERS_FROM], "core_mib_rxpausepkts");
        assert!(counters.is_uboe());
        assert_eq!(counters.values.iter().sum::<u64>(), 24);
    }
}
