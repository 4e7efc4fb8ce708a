#!/usr/bin/env bash
# Regenerates the committed dialect reference (docs/GNNDialect.md) from ODS.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target gnn-docs
cp build/docs/GNN/GNNDialect.md docs/GNNDialect.md
