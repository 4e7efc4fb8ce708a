#!/usr/bin/env bash
# Sets up and builds gnnc, then runs the bundled attention example through
# gnn-opt: parse, verify, fuse the attention into one op and print.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
build/bin/gnn-opt --gnn-fuse-attention examples/attention.mlir
