#!/usr/bin/env bash
# One command: sets up the peers' Python environment from PyPI (DGL and the
# PyTorch it loads), builds gnnc, and prints the side-by-side table.
#   bench/peers/run.sh [--runs 5] [--quick] [--max-len 30]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh >/dev/null
bench/peers/setup.sh
exec bench/peers/.venv/bin/python bench/peers/peers.py "$@"
