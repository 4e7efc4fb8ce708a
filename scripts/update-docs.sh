#!/usr/bin/env bash
# Regenerates the committed dialect and pass references (docs/*.md) from ODS.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target gnn-docs
cp build/docs/GNN/GNNDialect.md build/docs/GNN/GNNTransformPasses.md \
  build/docs/GNN/GNNConversionPasses.md docs/
