//===- FuzzProgram.cpp - a compiled program under libFuzzer ---------------===//
//
// Part of gnnc. AttentionProgram.h's program, compiled once with parallel
// loops and once with every memory access checked, runs on graphs and
// tensors decoded from the fuzzer's bytes: counts (often small, sometimes
// negative or past the limits), edge lists of possibly different lengths
// with possibly out-of-range ids, feature rows that may not match the graph,
// exact scores and values with the odd huge one. A valid input must give the
// naive reference's result, an invalid one a runtime error; anything else, or a
// sanitizer report, aborts.
//
//===----------------------------------------------------------------------===//

#include "AttentionProgram.h"
#include "FuzzPrograms.h"

#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <memory>

using namespace mlir;
using namespace mlir::gnn;
using namespace gnnfuzz;

namespace {
std::unique_ptr<MLIRContext> context;
std::unique_ptr<JitProgram> programs[2];

/// A count: mostly small, sometimes hostile.
int64_t count(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
  case 0:
    return -in.ConsumeIntegralInRange<int64_t>(1, 1000);
  case 1:
    return GNN_GRAPH_MAX_COUNT + in.ConsumeIntegralInRange<int64_t>(0, 3);
  case 2:
    return in.ConsumeIntegral<int64_t>();
  default:
    return in.ConsumeIntegralInRange<int64_t>(0, 12);
  }
}

/// An id for a set of `n`: mostly in range, sometimes just outside.
int64_t id(FuzzedDataProvider &in, int64_t n) {
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
    // (n is clamped first: a count can be INT64_MAX, and n + 3 must not
    // overflow in the harness itself.)
    return in.ConsumeBool() ? -in.ConsumeIntegralInRange<int64_t>(1, 3)
                            : std::clamp<int64_t>(n, 0, INT64_MAX - 3) +
                                  in.ConsumeIntegralInRange<int64_t>(0, 3);
  int64_t hi = std::clamp<int64_t>(n, 1, 64) - 1;
  return in.ConsumeIntegralInRange<int64_t>(0, hi);
}

/// Rows: the expected number (when small) or a few off.
int64_t rows(FuzzedDataProvider &in, int64_t expected) {
  int64_t base = expected >= 0 && expected <= 64 ? expected : 4;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0)
    return std::max<int64_t>(0, base + in.ConsumeIntegralInRange(-2, 2));
  return base;
}

/// Features of multiples of 1/16 below 8 in magnitude, so that scores are
/// exact in float and large enough for the clamp; with `huge`, the extreme
/// bytes stand for +-1e4 (values only: such scores would be
/// ill-conditioned, their rounding no fault of the program).
HostTensor features(FuzzedDataProvider &in, int64_t n, bool huge) {
  HostTensor t;
  t.shape = {n, kHeads, kDim};
  t.allocate();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int8_t raw = in.ConsumeIntegral<int8_t>();
    float value = float(raw) / 16.0f;
    if (huge && raw == INT8_MIN)
      value = -1e4f;
    else if (huge && raw == INT8_MAX)
      value = 1e4f;
    t.as<float>()[i] = value;
  }
  return t;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  context = makeContext();
  programs[0] = compileOrAbort(*context, kAttentionProgram, {"main"},
                               /*checked=*/false);
  programs[1] = compileOrAbort(*context, kAttentionProgram, {"main"},
                               /*checked=*/true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Case c;
  c.numSrc = count(in);
  c.numDst = count(in);
  size_t edges = in.ConsumeIntegralInRange<size_t>(0, 48);
  for (size_t e = 0; e < edges; ++e) {
    c.src.push_back(id(in, c.numSrc));
    c.dst.push_back(id(in, c.numDst));
  }
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
    c.src.push_back(0); // lists of different lengths
  size_t gathered = in.ConsumeIntegralInRange<size_t>(0, 6);
  for (size_t i = 0; i < gathered; ++i)
    c.ids.push_back(id(in, c.numDst));
  c.q = features(in, rows(in, c.numDst), /*huge=*/false);
  int64_t kvRows = rows(in, c.numSrc);
  c.k = features(in, kvRows, /*huge=*/false);
  c.v = features(in,
                 in.ConsumeIntegralInRange<int>(0, 15) == 0 ? rows(in, c.numSrc)
                                                            : kvRows,
                 /*huge=*/true);

  for (auto &program : programs) {
    std::string wrong = runAndJudge(*program, c);
    if (!wrong.empty()) {
      llvm::errs() << "gnn-fuzz-program: " << wrong << "\n";
      std::abort();
    }
  }
  return 0;
}
