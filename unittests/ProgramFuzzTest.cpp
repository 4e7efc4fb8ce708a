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
constexpr int64_t kHeads = 2, kDim = 4;

/// A graph from edge lists in compiled code, attention over it, and a
/// gather of listed rows of the result.
constexpr const char *kProgram = R"mlir(
func.func @main(%src: tensor<?xindex>, %dst: tensor<?xindex>,
                %counts: tensor<2xindex>, %q: tensor<?x2x4xf32>,
                %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>,
                %ids: tensor<?xindex>) -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ns = tensor.extract %counts[%c0] : tensor<2xindex>
  %nd = tensor.extract %counts[%c1] : tensor<2xindex>
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %a = gnn.fused_attention %g, %q, %k, %v scale(0.5) clamp(-5.0, 5.0) normalize : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  %b = gnn.gather_rows %a[%ids] : (tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x4xf32>
  return %a, %b : tensor<?x2x4xf32>, tensor<?x2x4xf32>
}
)mlir";

HostTensor index(const std::vector<int64_t> &values) {
  HostTensor t;
  t.dtype = DType::I64;
  t.shape = {int64_t(values.size())};
  t.allocate();
  for (size_t i = 0; i < values.size(); ++i)
    t.as<int64_t>()[i] = values[i];
  return t;
}

struct Case {
  std::vector<int64_t> src, dst, ids;
  int64_t numSrc = 0, numDst = 0;
  HostTensor q, k, v;
  bool valid = true;
};

class ProgramFuzz {
public:
  explicit ProgramFuzz(unsigned seed) : rng(seed) {}

  Case next() {
    Case c;
    c.numSrc = pick(0, 12);
    c.numDst = pick(0, 12);
    int64_t edges = pick(0, 40);
    for (int64_t e = 0; e < edges; ++e) {
      c.src.push_back(c.numSrc ? pick(0, c.numSrc - 1) : 0);
      c.dst.push_back(c.numDst ? pick(0, c.numDst - 1) : 0);
    }
    if (edges && (!c.numSrc || !c.numDst))
      c.valid = false; // an edge into an empty node set
    int64_t rowsQ = c.numDst, rowsK = c.numSrc;
    for (int64_t i = 0, n = pick(0, 6); i < n; ++i)
      c.ids.push_back(c.numDst ? pick(0, c.numDst - 1) : 0);
    if (!c.numDst && !c.ids.empty())
      c.valid = false;
    // One hostile change in most cases.
    switch (pick(0, 11)) {
    case 0:
      c.src.push_back(0); // lists of different lengths
      c.valid = false;
      break;
    case 1:
      c.numDst = -pick(1, 1000);
      c.valid = false;
      break;
    case 2:
      c.numSrc = std::numeric_limits<int64_t>::max() - pick(0, 3);
      c.valid = false;
      break;
    case 3:
      c.numDst = (int64_t(1) << 40) + 1;
      c.valid = false;
      break;
    case 4:
      if (!c.src.empty()) {
        c.src[pick(0, int64_t(c.src.size()) - 1)] = c.numSrc + pick(0, 5);
        c.valid = false;
      }
      break;
    case 5:
      if (!c.dst.empty()) {
        c.dst[pick(0, int64_t(c.dst.size()) - 1)] = -pick(1, 5);
        c.valid = false;
      }
      break;
    case 6:
      rowsQ += pick(1, 3); // rows that do not match the graph
      c.valid = false;
      break;
    case 7:
      rowsK = std::max<int64_t>(0, rowsK - pick(1, 3));
      c.valid = c.valid && rowsK == c.numSrc;
      break;
    case 8:
      c.ids.push_back(c.numDst + pick(0, 3));
      c.valid = false;
      break;
    default:
      break;
    }
    c.q = features(std::max<int64_t>(rowsQ, 0));
    c.k = features(std::max<int64_t>(rowsK, 0));
    c.v = features(std::max<int64_t>(rowsK, 0));
    if (c.q.shape[0] != c.numDst || c.k.shape[0] != c.numSrc)
      c.valid = false;
    return c;
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

/// The attention result of a valid case, computed naively.
std::vector<float> reference(const Case &c) {
  std::vector<float> out(size_t(c.numDst * kHeads * kDim), 0.0f);
  for (int64_t v = 0; v < c.numDst; ++v)
    for (int64_t h = 0; h < kHeads; ++h) {
      double z = 0, acc[kDim] = {};
      for (size_t e = 0; e < c.src.size(); ++e) {
        if (c.dst[e] != v)
          continue;
        const float *q = c.q.as<float>() + (v * kHeads + h) * kDim;
        const float *k = c.k.as<float>() + (c.src[e] * kHeads + h) * kDim;
        const float *val = c.v.as<float>() + (c.src[e] * kHeads + h) * kDim;
        double s = 0;
        for (int64_t i = 0; i < kDim; ++i)
          s += double(q[i]) * k[i];
        double w = std::exp(std::clamp(s * 0.5, -5.0, 5.0));
        z += w;
        for (int64_t i = 0; i < kDim; ++i)
          acc[i] += w * val[i];
      }
      for (int64_t i = 0; i < kDim; ++i)
        out[size_t((v * kHeads + h) * kDim + i)] =
            z > 0 ? float(acc[i] / z) : 0;
    }
  return out;
}

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
        parseSourceString<ModuleOp>(kProgram, ParserConfig(&context));
    ASSERT_TRUE(module);
    CompileOptions options;
    options.parallel = parallel;
    options.checked = checked;
    auto program = JitProgram::compile(std::move(module), "main", {}, options);
    ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
    ProgramFuzz fuzz(parallel ? (checked ? 29 : 17) : 23);
    int ran = 0, refused = 0;
    for (int iteration = 0; iteration < 4000; ++iteration) {
      Case c = fuzz.next();
      HostTensor src = index(c.src), dst = index(c.dst), ids = index(c.ids);
      HostTensor counts = index({c.numSrc, c.numDst});
      std::vector<Argument> args = {
          {nullptr, &src}, {nullptr, &dst}, {nullptr, &counts}, {nullptr, &c.q},
          {nullptr, &c.k}, {nullptr, &c.v}, {nullptr, &ids}};
      auto results = (*program)->run(args);
      if (!results) {
        std::string message = llvm::toString(results.takeError());
        EXPECT_FALSE(c.valid) << "a valid case failed: " << message;
        EXPECT_FALSE(message.empty());
        ++refused;
        continue;
      }
      ++ran;
      EXPECT_TRUE(c.valid) << "an invalid case ran (iteration " << iteration
                           << ")";
      if (!c.valid)
        continue;
      std::vector<float> want = reference(c);
      const HostTensor &a = (*results)[0];
      ASSERT_EQ(a.numElements(), int64_t(want.size()));
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(a.as<float>()[i], want[i],
                    1e-4 * std::max(1.0f, std::fabs(want[i])))
            << "iteration " << iteration << ", element " << i;
      const HostTensor &b = (*results)[1];
      ASSERT_EQ(b.shape[0], int64_t(c.ids.size()));
      for (size_t r = 0; r < c.ids.size(); ++r)
        for (int64_t i = 0; i < kHeads * kDim; ++i)
          ASSERT_EQ(b.as<float>()[r * kHeads * kDim + i],
                    a.as<float>()[c.ids[r] * kHeads * kDim + i]);
    }
    EXPECT_GT(ran, 100);
    EXPECT_GT(refused, 100);
  }
}
} // namespace
