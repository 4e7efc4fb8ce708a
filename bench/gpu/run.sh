#!/usr/bin/env bash
# The GPU benchmark in one command, on a machine with an NVIDIA GPU: gnnc's
# fused attention kernel against the unfused kernels (gnn-bench-attention
# --device cuda), then PyTorch's scaled_dot_product_attention on the padded
# batches where PyTorch with CUDA is installed.
#   bench/gpu/run.sh [--repeats 20]
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=20
if [[ "${1:-}" == "--repeats" ]]; then repeats="$2"; fi
scripts/setup.sh >/dev/null # installs, configures and builds
build/bin/gnn-bench-attention --device cuda --repeats "$repeats"
echo
python3 bench/gpu/sdpa_bench.py --repeats "$repeats"
