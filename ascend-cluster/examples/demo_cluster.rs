//! Every `kubectl ascend` command on a small seeded cluster of the fake API server (the cluster of the tests: a
//! 310P node on the plain device plugin, a 910B node under Volcano, an A3 node on the DRA driver, a chip fault in
//! each), printed as the plugin prints it. docs/kubectl-ascend.md shows this output.
//!
//! ```sh
//! cargo run -p ascend-cluster --features cli --example demo_cluster
//! ```

#[path = "../tests/support/seeded_cluster.rs"]
mod seeded_cluster;

use ascend_cluster::program::{run, Args, Style};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = seeded_cluster::seeded_cluster().await;
    seeded_cluster::switch_to_dra(&server);
    let client = server.client();
    let style = Style { colour: false, now: k8s_openapi::jiff::Timestamp::from_second(seeded_cluster::NOW)? };
    for line in [
        "nodes",
        "nodes -o wide",
        "pods -A",
        "faults",
        "capacity --chips 4",
        "capacity --chips 4 --same-hccs",
        "capacity --chips 8",
    ] {
        let args = <Args as clap::Parser>::try_parse_from(std::iter::once("kubectl-ascend").chain(line.split(' ')))?;
        let outcome = run(&client, &args, "default", style).await?;
        println!("$ kubectl ascend {line}\n{}(exit {})\n", outcome.stdout, outcome.exit_code);
    }
    Ok(())
}
