//! The `ascend-node-labeller` tool: sets and keeps current the NPU labels of the node it runs on (chip type, chip
//! count, driver version, product, and Huawei's `accelerator` / `node.kubernetes.io/npu.chip.name`), as a sidecar of
//! the device plugin, a one-shot Job or init container (`--once`), or a preview (`--dry-run`).

pub mod app;
pub mod cli;
