#!/usr/bin/env bash
# The Chinese pages of the operator's path (README.zh-CN.md, deploy/README.zh-CN.md, docs/*.zh-CN.md) have not drifted
# from their English pages (run by scripts/test.sh): the same sections in the same order, the same code blocks byte for
# byte, the same inline code and the same links; and every page of the operator's path has its translation.
# scripts/translations.py says the rules and lists the pages; its own test runs first. A command changed in one
# language fails here until the other page follows.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 scripts/translations_test.py
python3 scripts/translations.py
