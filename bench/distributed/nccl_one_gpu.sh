#!/usr/bin/env bash
# One GPU with and without NCCL in the gradient path: the tutorial model on
# the copy task, --device cuda --grad-accum 2, as one process and as one
# rank under mpirun with --nccl (its gradient sums over NCCL). Prints each
# run's tokens/s (median of the epochs after the first) and whether their
# weights are byte-identical. Needs a GPU, Open MPI and NCCL
# (scripts/device/check.sh --bench runs it on a lent machine).
#
#   bench/distributed/nccl_one_gpu.sh [--count N] [--epochs E]
set -euo pipefail
cd "$(dirname "$0")/../.."
count=4000 epochs=3
while (($#)); do
  case "$1" in
  --count) count=$2 && shift 2 ;;
  --epochs) epochs=$2 && shift 2 ;;
  *) echo "unknown argument: $1" >&2 && exit 2 ;;
  esac
done
if ! command -v mpirun >/dev/null || [[ ! -f build/lib/libgnnc-mpi.so ]]; then
  echo "nccl_one_gpu: needs Open MPI's mpirun and build/lib/libgnnc-mpi.so" >&2
  exit 3
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 examples/tasks.py copy --count "$count" --seed 101 --out "$tmp/copy"
args=(--config examples/tutorial/config.json --train-src "$tmp/copy.src"
  --train-tgt "$tmp/copy.ref" --epochs "$epochs" --lr-factor 1 --warmup 400
  --tie-weights --device cuda --grad-accum 2)
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
rate() { # LOG -> median tokens/s of the epochs after the first
  grep -o '[0-9]* tokens/s' "$1" | awk 'NR > 1 {print $1}' | sort -n |
    awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'
}
build/bin/gnn-train "${args[@]}" --out-dir "$tmp/plain" >"$tmp/plain.log" 2>&1
mpirun "${root[@]}" -np 1 build/bin/gnn-train "${args[@]}" --nccl \
  --out-dir "$tmp/nccl" >"$tmp/nccl.log" 2>&1
same=no
cmp -s "$tmp/plain/epoch-$epochs.safetensors" "$tmp/nccl/epoch-$epochs.safetensors" && same=yes
echo "| run | tokens/s |"
echo "|---|---:|"
echo "| one process, --device cuda --grad-accum 2 | $(rate "$tmp/plain.log") |"
echo "| one rank, gradient sums over NCCL | $(rate "$tmp/nccl.log") |"
echo
echo "weights byte-identical: $same"
