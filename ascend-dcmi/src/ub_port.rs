//! Unified-bus (UB) port counters of Ascend950 chips: what `dcmiv2_get_port_pkt_stats_info` reports, in sums a
//! dashboard wants. The V1 API has no such call.

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
        let sum = |values: &[u64]| values.iter().fold(0u64, |total, value| total.saturating_add(*value));
        UbPortStats {
            mode: raw.port_mode,
            rx_packets: sum(&[
                raw.ub_glb_ipv4_pkt_cnt_rx,
                raw.ub_glb_ipv6_pkt_cnt_rx,
                raw.unic_ipv4_pkt_cnt_rx,
                raw.unic_ipv6_pkt_cnt_rx,
                raw.ub_clan_pkt_cnt_rx,
                raw.ub_umoc_ctph_cnt_rx,
                raw.ub_umoc_ntph_cnt_rx,
                raw.ub_mem_pkt_cnt_rx,
                raw.unknown_pkt_cnt_rx,
            ]),
            tx_packets: sum(&[
                raw.ub_glb_ipv4_pkt_cnt_tx,
                raw.ub_glb_ipv6_pkt_cnt_tx,
                raw.unic_ipv4_pkt_cnt_tx,
                raw.unic_ipv6_pkt_cnt_tx,
                raw.ub_clan_pkt_cnt_tx,
                raw.ub_umoc_ctph_cnt_tx,
                raw.ub_umoc_ntph_cnt_tx,
                raw.ub_mem_pkt_cnt_tx,
                raw.unknown_pkt_cnt_tx,
            ]),
            rx_dropped: raw.drop_ind_cnt_rx,
            rx_errors: sum(&[raw.err_ind_cnt_rx, raw.route_err_cnt_rx, raw.out_err_cnt_rx, raw.length_err_cnt_rx]),
            tx_errors: sum(&[raw.err_ind_cnt_tx, raw.out_err_cnt_tx, raw.length_err_cnt_tx]),
            rx_flits: raw.rx_busi_flit_num,
            tx_flits: raw.tx_busi_flit_num,
            crc_errors: raw.crc_error_sum,
            retry_requests: raw.retry_req_sum,
            rx_pause_frames: raw.core_mib_rxpausepkts,
            tx_pause_frames: raw.core_mib_txpausepkts,
            rx_pfc_frames: raw.core_mib_rxpfcpkts,
            tx_pfc_frames: raw.core_mib_txpfcpkts,
            rx_bad_frames: raw.core_mib_rxbadpkts,
            rx_bad_bytes: raw.core_mib_rxbadoctets,
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
}
