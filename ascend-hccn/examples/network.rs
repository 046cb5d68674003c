//! One training chip's network port through `hccn_tool`, each reading on its own line:
//! `cargo run -p ascend-hccn --example network -- [TOOL] [PHY_ID]` (defaults: the driver's tool, chip 0).
//!
//! On the simulator:
//! `cargo build -p dcmi-sim --bin hccn_tool && DCMI_SIM_CONFIG=sample:atlas-800t-a2 cargo run -p ascend-hccn
//! --example network -- target/debug/hccn_tool 4`.

use std::time::Duration;

use ascend_hccn::HccnTool;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let tool = args.next().unwrap_or_else(|| ascend_hccn::DEFAULT_PATH.to_owned());
    let phy_id = match args.next().map(|text| text.parse::<u32>()) {
        None => 0,
        Some(Ok(phy_id)) => phy_id,
        Some(Err(_)) => {
            eprintln!("usage: network [TOOL] [PHY_ID]");
            std::process::exit(2);
        }
    };
    let tool = HccnTool::builder().path(tool).deadline(Duration::from_secs(3)).build();
    let (link, speed, ups, counters, optical, bandwidth) = tokio::join!(
        tool.link_state(phy_id),
        tool.link_speed_mbps(phy_id),
        tool.link_up_count(phy_id),
        tool.stat(phy_id),
        tool.optical(phy_id),
        tool.bandwidth(phy_id),
    );
    let failed = [link.is_err(), speed.is_err(), ups.is_err(), counters.is_err(), optical.is_err(), bandwidth.is_err()]
        .contains(&true);
    println!("link:       {}", shown(link));
    println!("speed Mb/s: {}", shown(speed.map(|speed| speed.map_or("unknown".to_owned(), |mbps| mbps.to_string()))));
    println!("link ups:   {}", shown(ups));
    println!("RoCE rx:    {}", shown(counters.map(|counters| format!("{:?}", counters.get("roce_rx_all_pkt_num")))));
    println!("optical:    {}", shown(optical.map(|optical| format!("{optical:?}"))));
    println!("bandwidth:  {}", shown(bandwidth.map(|rates| format!("{rates:?}"))));
    if failed {
        std::process::exit(1);
    }
}

fn shown<T: std::fmt::Display>(reading: Result<T, ascend_hccn::Error>) -> String {
    reading.map_or_else(|error| format!("error: {error}"), |value| value.to_string())
}
