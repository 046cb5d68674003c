//! The `ascend-node-labeller` tool's flags; what it does with them lives in `ascend_kube::labeller_tool`.

pub mod cli;
