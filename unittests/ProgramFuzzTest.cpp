//===- ProgramFuzzTest.cpp - a compiled program fed hostile input ---------===//
//
// Part of gnnc. One program, compiled once (parallel, serial, checked), gets
// thousands of random graphs and tensors: edge lists of different lengths,
// counts that are negative, zero or past the limit, ids out of range,
// feature rows that do not match the graph, empty batches, NaN and huge
// values. Every run either fails with the runtime's message or, when the
// input is valid, equals a naive reference (within 1e-4 relative); none
// crashes (a crash fails the whole test binary).
//
//===----------------------------------------------------------------------===//

#include "../fuzz/AttentionProgram.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::gnn;

namespace {
using namespace gnnfuzz;

/// A generated case and whether the generator meant it to be valid.
struct Generated {
  Case c;
  bool valid = true;
};

class ProgramFuzz {
public:
  explicit ProgramFuzz(unsigned seed) : rng(seed) {}

  Generated next() {
    Generated g;
    Case &c = g.c;
    c.numSrc = pick(0, 12);
    c.numDst = pick(0, 12);
    int64_t edges = pick(0, 40);
    for (int64_t e = 0; e < edges; ++e) {
      c.src.push_back(c.numSrc ? pick(0, c.numSrc - 1) : 0);
      c.dst.push_back(c.numDst ? pick(0, c.numDst - 1) : 0);
    }
    if (edges && (!c.numSrc || !c.numDst))
      g.valid = false; // an edge into an empty node set
    int64_t rowsQ = c.numDst, rowsK = c.numSrc;
    for (int64_t i = 0, n = pick(0, 6); i < n; ++i)
      c.ids.push_back(c.numDst ? pick(0, c.numDst - 1) : 0);
    if (!c.numDst && !c.ids.empty())
      g.valid = false;
    // One hostile change in most cases.
    switch (pick(0, 11)) {
    case 0:
      c.src.push_back(0); // lists of different lengths
      g.valid = false;
      break;
    case 1:
      c.numDst = -pick(1, 1000);
      g.valid = false;
      break;
    case 2:
      c.numSrc = std::numeric_limits<int64_t>::max() - pick(0, 3);
      g.valid = false;
      break;
    case 3:
      c.numDst = (int64_t(1) << 40) + 1;
      g.valid = false;
      break;
    case 4:
      if (!c.src.empty()) {
        c.src[pick(0, int64_t(c.src.size()) - 1)] = c.numSrc + pick(0, 5);
        g.valid = false;
      }
      break;
    case 5:
      if (!c.dst.empty()) {
        c.dst[pick(0, int64_t(c.dst.size()) - 1)] = -pick(1, 5);
        g.valid = false;
      }
      break;
    case 6:
      rowsQ += pick(1, 3); // rows that do not match the graph
      g.valid = false;
      break;
    case 7:
      rowsK = std::max<int64_t>(0, rowsK - pick(1, 3));
      g.valid = g.valid && rowsK == c.numSrc;
      break;
    case 8:
      c.ids.push_back(c.numDst + pick(0, 3));
      g.valid = false;
      break;
    default:
      break;
    }
    c.q = features(std::max<int64_t>(rowsQ, 0));
    c.k = features(std::max<int64_t>(rowsK, 0));
    c.v = features(std::max<int64_t>(rowsK, 0));
    if (c.q.shape[0] != c.numDst || c.k.shape[0] != c.numSrc)
      g.valid = false;
    return g;
  }

private:
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  HostTensor features(int64_t rows) {
    HostTensor t;
    t.shape = {rows, kHeads, kDim};
    t.allocate();
    std::normal_distribution<float> dist(0.0f, 2.0f);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<float>()[i] = dist(rng);
    // Now and then a value attention must survive (the clamp bounds it).
    if (t.numElements() && pick(0, 9) == 0)
      t.as<float>()[pick(0, t.numElements() - 1)] = pick(0, 1) ? 1e4f : -1e4f;
    return t;
  }
  std::mt19937_64 rng;
};

TEST(ProgramFuzz, HostileGraphsAndTensorsNeverCrash) {
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Parallel, serial, and parallel with every memory access checked.
  for (auto [parallel, checked] :
       {std::pair(true, false), std::pair(false, false),
        std::pair(true, true)}) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kAttentionProgram, ParserConfig(&context));
    ASSERT_TRUE(module);
    CompileOptions options;
    options.parallel = parallel;
    options.checked = checked;
    auto program = JitProgram::compile(std::move(module), "main", {}, options);
    ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
    ProgramFuzz fuzz(parallel ? (checked ? 29 : 17) : 23);
    int ran = 0, refused = 0;
    for (int iteration = 0; iteration < 4000; ++iteration) {
      Generated g = fuzz.next();
      const Case &c = g.c;
      // The generator's intent and the shared validity rule agree.
      ASSERT_EQ(g.valid, isValid(c)) << "iteration " << iteration;
      // A valid case must run, an invalid one must be refused.
      (g.valid ? ran : refused) += 1;
      ASSERT_EQ(runAndJudge(**program, c), "") << "iteration " << iteration;
    }
    EXPECT_GT(ran, 100);
    EXPECT_GT(refused, 100);
  }
}
} // namespace
