#!/usr/bin/env bash
# Sets up and builds gnnc, then runs the bundled attention example through
# gnn-opt: parse, verify, canonicalize and print.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
build/bin/gnn-opt --canonicalize examples/attention.mlir
