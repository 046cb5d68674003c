//! `kubectl-ascend` (`kubectl ascend` once on the PATH): the whole cluster's NPUs at a glance. See the
//! `ascend_cluster` crate.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    // One thread: a handful of concurrent list calls and their decoding need no more.
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(ascend_cluster::program::main()),
        Err(error) => {
            eprintln!("error: starting the async runtime: {error}");
            std::process::ExitCode::from(ascend_cluster::program::exit::CLUSTER)
        }
    }
}
