#!/usr/bin/env bash
# The one-machine end-to-end run (deploy/e2e.sh): fake host, device plugin and fake kubelet, Allocate, a runc
# container through ascend-ctk, the exporter scraped. Needs root, as CI has; it fails (never skips) otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
shellcheck deploy/e2e.sh scripts/checks/e2e.sh
E2E_WORKSPACE_BUILD=1 bash deploy/e2e.sh
