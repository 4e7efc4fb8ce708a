#!/usr/bin/env bash
# The sanitizer job: builds gnnc (the runtime, the support library, the
# model contract, and the MLIR-linked libraries and tools) with
# AddressSanitizer and UndefinedBehaviorSanitizer (clang-19) in
# ./build-sanitize and runs under them: every unit test; the lit suite
# (the model error tests, hostile inputs, the golden models; not the
# benchmarks) with every compiled program in checked mode (GNNC_CHECKED=1:
# each memory access of JIT-compiled code, which ASan does not see, is
# bounds-checked); then each libFuzzer target for GNN_FUZZ_SECONDS seconds
# (default 20) from its seed corpus in fuzz/corpus/<name>, the compiled
# program's included. Any sanitizer report, failed test or fuzzer crash
# fails the job;
# a crashing input is left in build-sanitize/fuzz-crashes/ to be committed
# to the corpus as a regression input once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang-19 libclang-rt-19-dev libfuzzer-19-dev)
source scripts/install-packages.sh
install_missing_packages "${packages[@]}"

# -O1 with line tables only: what the sanitizers' documentation advises for
# usable reports; full debug info made the objects four times larger and the
# build slower for no better stack trace.
if [ ! -f build-sanitize/build.ninja ]; then
  cmake -G Ninja -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DGNN_SANITIZE=ON -DGNN_FUZZERS=ON -DGNN_ENABLE_FUZZ_TESTS=OFF
fi
fuzzers=(gnn-fuzz-safetensors gnn-fuzz-config gnn-fuzz-tokenizer gnn-fuzz-graph
  gnn-fuzz-cache-entry gnn-fuzz-program gnn-fuzz-guarded-program
  gnn-fuzz-train-state)
cmake --build build-sanitize --target GNNRuntimeTests GNNSupportTests \
  GNNUnitTests gnn-run gnn-opt gnn-train "${fuzzers[@]}"

# The job covers undefined behaviour only if the binaries carry UBSan's
# runtime (a CMake that drops its flags would leave ASan alone, silently).
for binary in gnn-run gnn-opt gnn-train; do
  # (grep -c reads all of nm's output: -q would end nm by SIGPIPE, which
  # pipefail counts as a failure.)
  if [ "$(nm build-sanitize/bin/$binary | grep -c __ubsan_handle_)" = 0 ]; then
    echo "sanitize: build-sanitize/bin/$binary lacks UBSan's runtime" >&2
    exit 1
  fi
done

# Debian's libLLVM is not instrumented: it never unpoisons what LLVM's
# allocators poison in instrumented code (allow_user_poisoning=0); a unit
# test asks for an impossible allocation on purpose
# (allocator_may_return_null=1); a report aborts, so it cannot pass quietly.
export ASAN_OPTIONS=abort_on_error=1:allow_user_poisoning=0:allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== unit tests under ASan + UBSan"
build-sanitize/unittests/GNNRuntimeTests --gtest_brief=1
build-sanitize/unittests/GNNSupportTests --gtest_brief=1
build-sanitize/unittests/GNNUnitTests --gtest_brief=1

echo "== lit suite under ASan + UBSan, compiled code in checked mode"
lit=/usr/lib/llvm-19/build/utils/lit/lit.py
GNNC_CHECKED=1 python3 "$lit" -sv --time-tests --filter-out 'Bench/' build-sanitize/test

seconds=${GNN_FUZZ_SECONDS:-20}
crashes=build-sanitize/fuzz-crashes
mkdir -p "$crashes"
for f in "${fuzzers[@]}"; do
  name=${f#gnn-fuzz-}
  echo "== $f for ${seconds}s from fuzz/corpus/$name"
  work=$(mktemp -d)
  # New inputs go to a scratch directory; the committed seeds stay as they are.
  status=0
  build-sanitize/bin/"$f" "$work" "fuzz/corpus/$name" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/$name-" -print_final_stats=1 \
    >"$work.log" 2>&1 || status=$?
  grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" "$work.log" || true
  [ "$status" -eq 0 ] || tail -40 "$work.log"
  rm -f "$work.log"
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    echo "sanitize: $f failed (exit $status); inputs in $crashes" >&2
    exit 1
  fi
done
echo "sanitize: all clean"
