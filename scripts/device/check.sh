#!/usr/bin/env bash
# Runs on a GPU test machine over a bundle made by scripts/device/bundle.sh
# (see there), in two steps on the same machine:
#   scripts/device/check.sh unpack-llvm   (with .device-llvm/ present)
#   scripts/device/check.sh run [--bench | --bench-only [BENCH ARGS] |
#                                --train-only [TRAIN ARGS]]
#   scripts/device/check.sh session [SECONDS [STAGES]]
#                                         (with .device-gnnc/ present)
# `run` executes the CUDA and GPU lit suites (the tools' default form:
# asynchronous launches, graphs, device buffers), then every lit test, then
# the CUDA suite again with a wait after each launch and unified memory
# (--param cuda_async_launches=0 --param cuda_device_buffers=0), once with
# asynchronous launches alone (cuda_graphs=0, cuda_device_buffers=0) and
# once with graphs over unified memory (cuda_device_buffers=0), each
# within LIT_SECONDS (default 300), both
# GoogleTest binaries and, with --bench, the GPU benchmarks (bench/gpu/run.sh,
# then bench/gpu/train.sh with its CUDA profiles, then one GPU with and
# without NCCL, bench/distributed/nccl_one_gpu.sh); --bench-only and
# --train-only run one benchmark alone, each within BENCH_SECONDS (default
# 400). Logs go to $OUT (default /tmp/gnnc-device-out). A lease of 15
# minutes with at most 10 a command fits `unpack-llvm`, then
# `session SECONDS` (below: the suites and the benchmarks in the order
# they matter, within SECONDS), not one `run --bench`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gnnc-device-out}
mkdir -p "$out"

case "${1:-}" in
unpack-llvm)
  xz -dc .device-llvm/llvm.tar.xz | tar -C / -xf - && echo "libLLVM unpacked"
  exit $?
  ;;
run | session) ;;
*)
  echo "usage: $0 unpack-llvm | run [--bench | --bench-only ... | --train-only ...] | session [SECONDS [STAGES]]" >&2
  exit 2
  ;;
esac

if [[ ! -f /usr/lib/llvm-19/lib/libLLVM.so.19.1 ]]; then
  echo "libLLVM is missing: run '$0 unpack-llvm' on this machine first" >&2
  exit 3
fi
xz -dc .device-gnnc/llvm-rest.tar.xz | tar -C / -xf -
xz -dc .device-gnnc/build.tar.xz | tar -xf -
# Open MPI where the machine has none (its components live where the
# launcher was built to look).
if [[ -f .device-gnnc/mpi.tar.xz ]] && ! command -v mpirun >/dev/null; then
  xz -dc .device-gnnc/mpi.tar.xz | tar -C / -xf - && echo "Open MPI unpacked"
fi
# Debian's libraries go in a private folder, used only where the machine
# lacks a library of that name (its own stay in charge of everything else).
mkdir -p /opt/gnnc-deps/all /opt/gnnc-deps/lib
xz -dc .device-gnnc/deps.tar.xz | tar -C /opt/gnnc-deps/all -xf -
for lib in $(find /opt/gnnc-deps/all -name '*.so*' -type f); do
  name=$(basename "$lib")
  ldconfig -p | grep -q " $name " || ln -sf "$lib" /opt/gnnc-deps/lib/"$name"
done
echo "libraries taken from the bundle: $(ls /opt/gnnc-deps/lib | tr '\n' ' ')"

# Open MPI launches through ssh or rsh even on one node unless told to use
# its single-node launcher; test machines may have neither.
if ! command -v ssh >/dev/null && ! command -v rsh >/dev/null; then
  export OMPI_MCA_plm=isolated
fi
# The build's absolute paths name /work/main.
if [[ "$(realpath .)" != /work/main ]]; then
  mkdir -p /work && rm -rf /work/main && ln -s "$(realpath .)" /work/main
fi
cuda_libs=$(dirname "$(find /usr/local/cuda*/ /usr/lib /opt -name 'libcublas.so.1*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=/opt/gnnc-deps/lib:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "cuBLAS from: $cuda_libs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"

status=0
cd /work/main
if [[ "${2:-}" == "--bench-only" ]]; then
  timeout "${BENCH_SECONDS:-400}" bench/gpu/run.sh --prebuilt --repeats 20 "${@:3}" 2>&1 |
    tee "$out/bench.txt"
  exit "${PIPESTATUS[0]}"
fi
if [[ "${2:-}" == "--train-only" ]]; then
  timeout "${BENCH_SECONDS:-400}" bench/gpu/train.sh --prebuilt --profile --out "$out" "${@:3}" 2>&1 |
    tee "$out/train.txt"
  exit "${PIPESTATUS[0]}"
fi
# The CUDA suite's forms besides the tools' default (asynchronous launches,
# graphs, device buffers), as lit parameters: a wait after each launch over
# unified memory, asynchronous launches alone, graphs over unified memory.
waiting_form=(--param cuda_async_launches=0 --param cuda_device_buffers=0)
async_form=(--param cuda_graphs=0 --param cuda_device_buffers=0)
graphs_form=(--param cuda_device_buffers=0)
# lit within LIT_SECONDS (default 300): a test that hangs costs the rest of
# the suite, not the machine's whole lease; what was still running is
# listed in LOG.hung. Each result line is logged as it comes (-v, not -s).
lit_bounded() { # LOG LIT-ARGS...
  local log=$1 limit=${LIT_SECONDS:-300}
  shift
  python3 /usr/lib/llvm-19/build/utils/lit/lit.py -v "$@" >"$log" 2>&1 &
  local pid=$! waited=0
  while kill -0 $pid 2>/dev/null && ((waited < limit)); do
    sleep 2 && waited=$((waited + 2))
  done
  if kill -0 $pid 2>/dev/null; then
    ps -eo pid,etimes,args --forest | grep -E "build/bin|FileCheck|python" |
      grep -v -e grep -e "ps -eo" | cut -c1-300 >"$log.hung"
    pkill -P $pid; kill $pid; pkill -f "$PWD/build/bin/"
    echo "lit: stopped after ${limit} s; still running:" | tee -a "$log"
    cat "$log.hung"
    return 1
  fi
  wait $pid
}
# One lease in one command (after unpack-llvm): the checks and benchmarks in
# the order they matter, each bounded by its own limit and by what is left
# of SECONDS, what did not fit named at the end; STAGES (a comma-separated
# list of the names below) runs only those. First the CUDA suite in the
# tools' default form and the runtime's unit tests, then the benchmarks
# (training of the tutorial's model in every form and against PyTorch, the
# attention kernels against SDPA and PyG, the example default's training),
# then the suite in the other forms (waiting launches over unified memory,
# asynchronous launches alone, graphs over unified memory: one after the
# other, as the runs share the tests' output folders), then the CUDA
# profiles of the tutorial's training (in $OUT) and of attention workload
# (b), decoding (the bundled models and one of the example default's
# shape) and the other unit tests. Up to 8 files come back in $OUT.
session() { # SECONDS [STAGES]
  local end=$((SECONDS + $1)) only=${2:-} skipped=() tmpdir
  tmpdir=$(mktemp -d)
  left() { echo $((end - SECONDS)); }
  # stage NAME LIMIT COMMAND...: runs COMMAND within min(LIMIT, left - 10).
  stage() {
    local name=$1 limit=$2 have
    shift 2
    [[ -z $only || ,$only, == *,$name,* ]] || return 0
    have=$(($(left) - 10))
    ((have < limit)) && limit=$have
    if ((limit < 20)); then
      skipped+=("$name")
      return 0
    fi
    echo "== $name (within ${limit} s, $(left) s left)"
    if declare -F "$1" >/dev/null; then # a function bounds itself
      STAGE_SECONDS=$limit "$@"
    else
      timeout "$limit" "$@"
    fi || { echo "== $name: exit $?" && status=1; }
  }
  suite() { # LOG LIT-ARGS...
    local log=$1
    shift
    LIT_SECONDS=$STAGE_SECONDS lit_bounded "$log" -j16 "$@"
    grep -E "^(FAIL|UNRESOLVED)|Passed|Failed|Unsupported|stopped after" "$log"
    ! grep -q -e "^Failed" -e "stopped after" "$log"
  }
  local cuda=build/test/Integration/CUDA
  stage suite-default 120 suite "$tmpdir/lit-default.log" $cuda
  stage runtime-tests 60 build/unittests/GNNRuntimeTests --gtest_brief=1
  stage train-tutorial 150 bench/gpu/train.sh --prebuilt --models tutorial \
    --rows cpu,cuda-compile,cuda,cuda-waiting-compile,cuda-waiting,cuda-async-compile,cuda-async,cuda-graphs,cuda-device
  stage attention 60 build/bin/gnn-bench-attention --device cuda --repeats 10
  stage attention-peers 60 python3 bench/gpu/sdpa_bench.py --repeats 10
  stage train-default 240 bench/gpu/train.sh --prebuilt --models dgl-default \
    --rows cpu,cuda-compile,cuda,cuda-pool-512mb,cuda-waiting-compile,cuda-waiting,cuda-graphs,cuda-device
  stage suite-waiting 90 suite "$tmpdir/lit-waiting.log" "${waiting_form[@]}" $cuda
  stage suite-async 90 suite "$tmpdir/lit-async.log" "${async_form[@]}" $cuda
  stage suite-graphs 90 suite "$tmpdir/lit-graphs.log" "${graphs_form[@]}" $cuda
  stage profile-tutorial 60 bench/gpu/train.sh --prebuilt --models tutorial --rows cuda \
    --no-peers --profile --out "$out"
  stage profile-attention 40 env GNNC_CUDA_PROFILE=1 build/bin/gnn-bench-attention \
    --device cuda --workloads b --repeats 3
  stage decoding 150 bench/gpu/run.sh --prebuilt --models-only
  stage unit-tests 120 build/unittests/GNNUnitTests --gtest_brief=1
  tar -C "$tmpdir" -cJf "$out/lit-logs.tar.xz" . 2>/dev/null
  ((${#skipped[@]})) && echo "== not run (no time left): ${skipped[*]}"
  return $status
}
if [[ "$1" == session ]]; then
  session "${2:-540}" "${3:-}" 2>&1 | tee "$out/session.txt"
  exit "${PIPESTATUS[0]}"
fi

# The device's own suites first, then everything, then the CUDA suite
# again with a wait after each launch, with asynchronous launches alone and
# with graphs, the last three over unified memory.
lit_bounded "$out/lit-cuda.log" build/test/Integration/CUDA build/test/GPU || status=1
grep -E "^(FAIL|UNRESOLVED)|Passed|Failed|Unsupported" "$out/lit-cuda.log"
lit_bounded "$out/lit.log" build/test || status=1
grep -E "^(FAIL|UNRESOLVED)" "$out/lit.log"
tail -6 "$out/lit.log"
grep -q "^Failed" "$out/lit.log" && status=1
lit_bounded "$out/lit-waiting.log" "${waiting_form[@]}" build/test/Integration/CUDA || status=1
grep -E "^(FAIL|UNRESOLVED)|Passed|Failed" "$out/lit-waiting.log"
lit_bounded "$out/lit-async.log" "${async_form[@]}" build/test/Integration/CUDA || status=1
grep -E "^(FAIL|UNRESOLVED)|Passed|Failed" "$out/lit-async.log"
lit_bounded "$out/lit-graphs.log" "${graphs_form[@]}" build/test/Integration/CUDA || status=1
grep -E "^(FAIL|UNRESOLVED)|Passed|Failed" "$out/lit-graphs.log"
grep -q "^Failed" "$out/lit-cuda.log" "$out/lit-waiting.log" "$out/lit-async.log" "$out/lit-graphs.log" && status=1
for t in GNNRuntimeTests GNNUnitTests; do
  build/unittests/$t --gtest_brief=1 >"$out/$t.log" 2>&1 || status=1
  tail -5 "$out/$t.log"
done
if [[ "${2:-}" == "--bench" ]]; then
  timeout "${BENCH_SECONDS:-400}" bench/gpu/run.sh --prebuilt --repeats 20 2>&1 |
    tee "$out/bench.txt"
  timeout "${BENCH_SECONDS:-400}" bench/gpu/train.sh --prebuilt --profile --out "$out" 2>&1 |
    tee "$out/train.txt"
  timeout "${BENCH_SECONDS:-400}" bench/distributed/nccl_one_gpu.sh 2>&1 |
    tee "$out/nccl.txt"
fi
exit $status
