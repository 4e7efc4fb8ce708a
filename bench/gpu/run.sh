#!/usr/bin/env bash
# The GPU benchmark in one command, on a machine with an NVIDIA GPU:
# 1. gnnc's attention kernels, fused against unfused (gnn-bench-attention
#    --device cuda), and the CUDA profile of workload (b);
# 2. the baselines on the same workloads: PyTorch's
#    scaled_dot_product_attention and PyG's message passing, where PyTorch
#    with CUDA is installed;
# 3. whole models (the bundled copy Transformer and sort Universal
#    Transformer on the first 128 of their test sequences, and a model of
#    the example default's shape on 128 copy sequences), forward, greedy
#    and beam, on the CPU and on the GPU of the same machine (the default
#    form, and launches waiting for each over unified memory).
#   bench/gpu/run.sh [--prebuilt] [--repeats 20] [--models copy,sort-ut,default]
#                    [--models-only] [--stand-in]
# --models-only runs part 3 alone; --prebuilt uses the build as it is (a
# machine without the packages, such as a test machine running a bundle of
# scripts/device). --stand-in runs part 3 on a machine without a GPU, the
# GPU column on the stand-in CUDA driver (bench/gpu/host-cost: kernels do
# nothing, every decoded token reads as the same, so decoding runs to the
# length limit): the host's own seconds, and a run's copies, graph
# launches and host functions. (A Universal Transformer's host code reads
# node ids its kernels computed, which the stand-in cannot give: its cells
# stay empty.)
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=20 prebuilt=0 models=copy,sort-ut,default models_only=0 stand_in=0
while [[ $# -gt 0 ]]; do
  case "$1" in
  --prebuilt) prebuilt=1 ;;
  --repeats) repeats="$2" && shift ;;
  --models) models="$2" && shift ;;
  --models-only) models_only=1 ;;
  --stand-in) stand_in=1 models_only=1 ;;
  *) echo "usage: $0 [--prebuilt] [--repeats N] [--models LIST] [--models-only] [--stand-in]" >&2 && exit 2 ;;
  esac
  shift
done
((prebuilt)) || scripts/setup.sh >/dev/null # installs, configures and builds
if ((!models_only)); then
  build/bin/gnn-bench-attention --device cuda --repeats "$repeats"
  echo
  # Where forward+backward time goes on (b), kernel by kernel (the GPU
  # backward's node passes and reversal are plain kernels so far).
  echo "CUDA profile of workload (b), forward and backward, 3 runs:"
  GNNC_CUDA_PROFILE=1 build/bin/gnn-bench-attention --device cuda --workloads b \
    --repeats 3 2>&1 | tail -n 40
  echo
  python3 bench/gpu/sdpa_bench.py --repeats "$repeats"
fi

stand_in_env=()
runs=(cpu cuda cuda-waiting)
if ((stand_in)); then
  source bench/gpu/host-cost/stand-in-env.sh
  runs=(cpu cuda)
fi

echo
echo "whole models, 128 sequences each: median of 3 runs (seconds)"
if ((stand_in)); then
  echo "cuda on the stand-in driver: the host's seconds alone, and the 4 runs' copies, graph launches and host functions"
  printf '%-9s %-8s %10s %10s %8s %8s %10s\n' model mode cpu cuda copies graphs host-fns
else
  printf '%-9s %-8s %10s %10s %12s\n' model mode cpu cuda cuda-waiting
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The example default's shape (6 layers, d_model 512, 8 heads) on the copy
# task, its weights from one epoch on the CPU: timing needs the shape, not
# a trained model (decoding then runs to the length limit).
train_device=cpu
((stand_in)) && train_device=cuda
default_model() { # DIR
  local dir=$1
  mkdir -p "$dir"
  echo '{"layers": 6, "d_model": 512, "heads": 8, "d_ff": 2048,
    "architecture": "transformer", "src_vocab": 29, "tgt_vocab": 29,
    "max_len": 50, "score_clamp": 10, "cross_attention": "dgl",
    "vocab": "'"$PWD"'/examples/copy/vocab.txt"}' >"$dir/config.json"
  python3 examples/tasks.py copy --count 128 --seed 5 --out "$dir/train"
  python3 examples/tasks.py copy --count 128 --seed 6 --out "$dir/test"
  # (On the stand-in the weights are what it reads back: ones.)
  env "${stand_in_env[@]}" build/bin/gnn-train --device "$train_device" \
    --config "$dir/config.json" --train-src "$dir/train.src" \
    --train-tgt "$dir/train.ref" --epochs 1 --batch-size 128 --seed 7 \
    --out-dir "$dir/out" >"$dir/train.log" 2>&1 || { tail -3 "$dir/train.log" >&2 && return 1; }
  mv "$dir/out/epoch-1.safetensors" "$dir/weights.safetensors"
}
for model in ${models//,/ }; do
  dir=examples/$model
  if [[ $model == default ]]; then
    dir=$tmp/default
    default_model "$dir" || continue
  fi
  head -n 128 "$dir/test.src" >"$tmp/src"
  head -n 128 "$dir/test.ref" | sed 's/^/<sos> /' >"$tmp/tgt"
  for mode in forward greedy beam; do
    args=(--config "$dir/config.json" --weights "$dir/weights.safetensors"
      --src "$tmp/src" --mode "$mode" --repeat 3)
    [[ $mode == forward ]] && args+=(--tgt "$tmp/tgt" --out "$tmp/out.safetensors")
    [[ $mode != forward ]] && args+=(--out "$tmp/out.txt")
    times=() calls=()
    for run in "${runs[@]}"; do
      env=()
      [[ $run == cuda-waiting ]] &&
        env=(GNNC_CUDA_ASYNC_LAUNCHES=0 GNNC_CUDA_DEVICE_BUFFERS=0)
      [[ $run == cuda ]] && env+=("${stand_in_env[@]}")
      # A failed run leaves its cell empty.
      env "${env[@]}" build/bin/gnn-run --device "${run%-waiting}" \
        "${args[@]}" >"$tmp/run.log" 2>&1 || true
      times+=("$(sed -n 's/.* tokens in \([0-9.]*\) s .*median.*/\1/p' "$tmp/run.log")")
      [[ $run == cuda ]] && ((stand_in)) &&
        read -r -a calls <<<"$(sed -n 's/^stand-in libcuda: .*, \([0-9]*\) graph launches, .*, \([0-9]*\) copies, .*, \([0-9]*\) host functions$/\2 \1 \3/p' "$tmp/run.log")"
    done
    if ((stand_in)); then
      printf '%-9s %-8s %10s %10s %8s %8s %10s\n' "$model" "$mode" "${times[@]}" "${calls[@]:-}"
    else
      printf '%-9s %-8s %10s %10s %12s\n' "$model" "$mode" "${times[@]}"
    fi
  done
done
