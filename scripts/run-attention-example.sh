#!/usr/bin/env bash
# Sets up and builds gnnc, then runs the bundled IR example
# (examples/attention.mlir, the tutorial's propagate_attention): shows the
# fused IR, runs it with gnn-run on a batch of 6 complete graphs with 8 heads
# of 64 features, fused and unfused, and checks both against a naive
# reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh gnn-opt gnn-run >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "== gnn-opt --gnn-fuse-attention examples/attention.mlir"
build/bin/gnn-opt --gnn-fuse-attention examples/attention.mlir
python3 scripts/py/attention_case.py "$dir" complete 1
for mode in fused unfused; do
  flag=""
  [ "$mode" = unfused ] && flag="--no-fuse"
  echo "== gnn-run examples/attention.mlir ($mode)"
  build/bin/gnn-run examples/attention.mlir --entry propagate_attention $flag \
    --graph "$dir/graph.safetensors" --inputs "$dir/inputs.safetensors" \
    --out "$dir/$mode.safetensors"
  python3 scripts/py/compare.py "$dir/$mode.safetensors" "$dir/reference.safetensors"
done
