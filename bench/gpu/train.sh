#!/usr/bin/env bash
# Training on the GPU against the CPU of the same machine, in one command:
# `gnn-train` for two epochs on copy sequences (examples/tasks.py), for the
# tutorial's model (1 layer, d_model 128, 1 head) and the example default (6
# layers, d_model 512, 8 heads), configured as bench/peers/training.py
# configures them (batch 128, dropout 0, no shuffling, Noam factor 1 and
# warmup 400; weights fresh from seed 7). The GPU runs in the tools'
# default form (`cuda`: asynchronous launches, graphs, device buffers) and
# with each part turned off: a wait after each launch over unified memory
# (`cuda-waiting`, GNNC_CUDA_ASYNC_LAUNCHES=0 GNNC_CUDA_DEVICE_BUFFERS=0),
# asynchronous launches alone (`cuda-async`), with graphs (`cuda-graphs`),
# with device buffers and no graphs (`cuda-device`), without the pool
# (`cuda-no-pool`) and with the pools keeping up to 512 MB beyond what the
# step had live at most rather than 16 (`cuda-pool-512mb`: the former
# default, fewer driver calls for a higher peak); each form that compiles
# other code runs first once to fill the compile cache (the `-compile`
# rows). Prints
# the first epoch's tokens/s and loss and the last epoch's tokens/s
# ('steady': without what a run does once, such as a GPU's first
# allocations and graph instantiations) per row (a failed run: its log's end, on
# stderr); with --profile, further GPU runs per model write their CUDA
# profiles (GNNC_CUDA_PROFILE=1, which slows them) to
# DIR/MODEL-cuda-profile.log (the default form) and
# DIR/MODEL-cuda-waiting-profile.log.
# Then, where python3 has PyTorch with CUDA, gnnc against PyTorch on the
# same GPU (bench/peers/training.py --device cuda: the same data, batches
# and initial weights, float32 with TF32 off, as many epochs), tokens/s
# (first and last epoch) and peak device memory of each.
# With --stand-in (a machine without a GPU) the GPU rows run on
# bench/gpu/host-cost/StandInDriver.cpp in place of the CUDA driver and
# cuBLAS: kernels do nothing, so tokens/s is the rate the host alone
# allows (its code, pools, launches and graph updates), the peak is the
# device memory the real run would hold, and each row adds the driver
# calls of the run (one epoch unless --epochs says otherwise); the CPU
# row and PyTorch are left out.
#   bench/gpu/train.sh [--prebuilt] [--sequences 1280] [--epochs 2] [--stand-in]
#                      [--models tutorial,dgl-default] [--rows LIST]
#                      [--compare-env "VAR=VALUE ..."] [--no-peers]
#                      [--profile] [--out DIR]
# --prebuilt uses the build as it is (a test machine running a bundle of
# scripts/device); --rows runs only the named rows (cpu, cuda-compile, cuda,
# cuda-no-pool, cuda-pool-512mb, cuda-waiting-compile, cuda-waiting,
# cuda-async-compile, cuda-async, cuda-graphs, cuda-device); --compare-env
# sets gnn-train's environment in the comparison with PyTorch (by default
# gnn-train's default form); --no-peers leaves that comparison out.
set -euo pipefail
cd "$(dirname "$0")/../.."
prebuilt=0 stand_in=0 sequences=1280 epochs='' models=tutorial,dgl-default profile=0 out='' rows='' compare_env='' peers=1
while [[ $# -gt 0 ]]; do
  case "$1" in
  --prebuilt) prebuilt=1 ;;
  --sequences) sequences="$2" && shift ;;
  --epochs) epochs="$2" && shift ;;
  --models) models="$2" && shift ;;
  --rows) rows="$2" && shift ;;
  --compare-env) compare_env="$2" && shift ;;
  --no-peers) peers=0 ;;
  --stand-in) stand_in=1 peers=0 ;;
  --profile) profile=1 ;;
  --out) out="$2" && shift ;;
  *)
    echo "usage: $0 [--prebuilt] [--sequences N] [--epochs N] [--stand-in] [--models LIST] [--rows LIST] [--compare-env ENV] [--no-peers] [--profile] [--out DIR]" >&2
    exit 2
    ;;
  esac
  shift
done
if ((stand_in)); then epochs=${epochs:-1}; else epochs=${epochs:-2}; fi
[[ $epochs =~ ^[1-9][0-9]*$ ]] || { echo "--epochs: a positive count" >&2 && exit 2; }
((prebuilt)) || scripts/setup.sh >/dev/null # installs, configures and builds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${out:-.}
((profile)) && mkdir -p "$out"
python3 examples/tasks.py copy --count "$sequences" --seed 11 --out "$tmp/train"

config() { # NAME -> JSON
  local shape
  case "$1" in
  tutorial) shape='"layers": 1, "d_model": 128, "heads": 1, "d_ff": 128' ;;
  dgl-default) shape='"layers": 6, "d_model": 512, "heads": 8, "d_ff": 2048' ;;
  *) echo "unknown model: $1 (tutorial, dgl-default)" >&2 && exit 2 ;;
  esac
  echo "{$shape, \"architecture\": \"transformer\", \"src_vocab\": 29,
    \"tgt_vocab\": 29, \"max_len\": 50, \"score_clamp\": 10,
    \"cross_attention\": \"dgl\", \"vocab\": \"$PWD/examples/copy/vocab.txt\"}"
}

# The stand-in driver's directory, first in the library path of GPU runs.
stand_in_env=()
if ((stand_in)); then
  source bench/gpu/host-cost/stand-in-env.sh
fi

# $epochs epochs; prints "tokens/s loss steady-tokens/s peak-MiB" (the
# first epoch's rate and loss, the last epoch's rate, peak device memory or
# - on the CPU) and with --stand-in the run's driver calls, or dashes with
# the error in the log.
train() { # LOG MODEL DEVICE [ENV...]
  local log=$1 model=$2 device=$3
  shift 3
  local extra=()
  [[ $device == cuda ]] && extra=("${stand_in_env[@]}")
  if ! env "${extra[@]}" "$@" build/bin/gnn-train --device "$device" \
    --config "$tmp/$model.json" \
    --train-src "$tmp/train.src" --train-tgt "$tmp/train.ref" --seed 7 \
    --out-dir "$tmp/out-$model-$device" --epochs "$epochs" --batch-size 128 \
    --dropout 0 --shuffle=false --lr-factor 1.0 --warmup 400 >"$log" 2>&1; then
    tail -3 "$log" >&2
    echo "- - - -"
    return
  fi
  local peak calls=
  peak=$(sed -n 's/.*peak device memory \([0-9.]*\) MiB.*/\1/p' "$log")
  if ((stand_in)); then
    calls="$(sed -n 's/^stand-in libcuda: \([0-9]*\) kernel launches, [0-9]* captures, \([0-9]*\) graph launches, \([0-9]*\) allocations, \([0-9]*\) frees.*/\1 \2 \3 \4/p' "$log")"
    calls="$(sed -n 's/^stand-in libcublas: \([0-9]*\) products.*/\1/p' "$log") $calls"
  fi
  local rates first last
  rates=$(sed -n 's/.*train loss \([0-9.]*\) .* \([0-9.]*\) tokens\/s.*/\2 \1/p' "$log")
  first=$(head -1 <<<"$rates")
  last=$(tail -1 <<<"$rates" | cut -d' ' -f1)
  echo "$first $last ${peak:--} $calls"
}

echo "gnn-train, $epochs epochs of $sequences copy sequences (the first epoch's tokens/s and loss, the last epoch's tokens/s, peak device memory)"
header=(model run tokens/s loss steady "peak MiB")
format='%-12s %-16s %12s %10s %12s %10s'
if ((stand_in)); then
  echo "GPU rows on the stand-in driver: the host's rate alone (kernels do not run), and the run's driver calls"
  header+=(products kernels graphs allocs frees)
  format+=' %9s %9s %7s %7s %7s'
fi
format+='\n'
# shellcheck disable=SC2059
printf "$format" "${header[@]}"
for model in ${models//,/ }; do
  config "$model" >"$tmp/$model.json"
  waiting="GNNC_CUDA_ASYNC_LAUNCHES=0 GNNC_CUDA_DEVICE_BUFFERS=0"
  unified_async="GNNC_CUDA_DEVICE_BUFFERS=0 GNNC_CUDA_GRAPHS=0"
  all_rows=("cpu cpu" "cuda-compile cuda" "cuda cuda"
    "cuda-no-pool cuda GNNC_CUDA_POOL=off"
    "cuda-pool-512mb cuda GNNC_CUDA_POOL_MB=512"
    "cuda-waiting-compile cuda $waiting" "cuda-waiting cuda $waiting"
    "cuda-async-compile cuda $unified_async" "cuda-async cuda $unified_async"
    "cuda-graphs cuda GNNC_CUDA_DEVICE_BUFFERS=0"
    "cuda-device cuda GNNC_CUDA_GRAPHS=0")
  for row in "${all_rows[@]}"; do
    read -r name device env <<<"$row"
    [[ -z $rows || ,$rows, == *,$name,* ]] || continue
    ((stand_in)) && [[ $device != cuda ]] && continue
    result=$(train "$tmp/$model-$name.log" "$model" "$device" $env)
    # shellcheck disable=SC2059,SC2086
    printf "$format" "$model" "$name" $result
  done
  if ((profile)); then
    train "$out/$model-cuda-profile.log" "$model" cuda GNNC_CUDA_PROFILE=1 >/dev/null
    train "$out/$model-cuda-waiting-profile.log" "$model" cuda GNNC_CUDA_PROFILE=1 \
      $waiting >/dev/null
  fi
done

((peers)) || exit 0
echo
if python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  echo "gnnc against PyTorch on the same GPU (bench/peers/training.py --device cuda)"
  [[ -n $compare_env ]] && echo "gnn-train with $compare_env"
  env $compare_env python3 bench/peers/training.py --device cuda --sequences "$sequences" \
    --epochs "$epochs" --workloads "$models" || echo "training.py failed" >&2
else
  echo "PyTorch with CUDA is not installed: no comparison with PyTorch"
fi
