//===- AttentionProgram.h - a compiled program for hostile input -*- C++
//-*-===//
//
// Part of gnnc. The program that the ProgramFuzz unit test and the
// gnn-fuzz-program libFuzzer target feed hostile graphs and tensors: a graph
// built from edge lists in compiled code, attention over it, and a gather of
// listed rows. Also what a valid input is and what the program must return
// for it (a naive reference), so both harnesses judge runs the same way.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_FUZZ_ATTENTIONPROGRAM_H
#define GNN_FUZZ_ATTENTIONPROGRAM_H

#include "GNN/Runner/JitRunner.h"
#include "gnnc/graph.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gnnfuzz {
using mlir::gnn::DType;
using mlir::gnn::HostTensor;

constexpr int64_t kHeads = 2, kDim = 4;

constexpr const char *kAttentionProgram = R"mlir(
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

/// One input of the program.
struct Case {
  std::vector<int64_t> src, dst, ids;
  int64_t numSrc = 0, numDst = 0;
  HostTensor q, k, v; // [rows, kHeads, kDim]
};

/// True if the program must run `c`: counts within the graph limits, edge
/// lists of one length with ids in range, q with a row per destination,
/// k and v with a row per source, listed rows in range.
inline bool isValid(const Case &c) {
  auto inRange = [](const std::vector<int64_t> &ids, int64_t n) {
    return std::all_of(ids.begin(), ids.end(),
                       [&](int64_t i) { return i >= 0 && i < n; });
  };
  return c.numSrc >= 0 && c.numSrc <= GNN_GRAPH_MAX_COUNT && c.numDst >= 0 &&
         c.numDst <= GNN_GRAPH_MAX_COUNT && c.src.size() == c.dst.size() &&
         inRange(c.src, c.numSrc) && inRange(c.dst, c.numDst) &&
         c.q.shape[0] == c.numDst && c.k.shape[0] == c.numSrc &&
         c.v.shape[0] == c.numSrc && inRange(c.ids, c.numDst);
}

/// The attention result of a valid case, computed naively in double; with
/// `scale`, also each element's sum of |weight * value| / z, the size of
/// the terms that float rounding of the result is relative to.
inline std::vector<float> reference(const Case &c,
                                    std::vector<double> *scale = nullptr) {
  std::vector<float> out(size_t(c.numDst * kHeads * kDim), 0.0f);
  if (scale)
    scale->assign(out.size(), 0.0);
  for (int64_t v = 0; v < c.numDst; ++v)
    for (int64_t h = 0; h < kHeads; ++h) {
      double z = 0, acc[kDim] = {}, magnitude[kDim] = {};
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
        for (int64_t i = 0; i < kDim; ++i) {
          acc[i] += w * val[i];
          magnitude[i] += w * std::fabs(val[i]);
        }
      }
      for (int64_t i = 0; i < kDim; ++i) {
        size_t at = size_t((v * kHeads + h) * kDim + i);
        out[at] = z > 0 ? float(acc[i] / z) : 0;
        if (scale)
          (*scale)[at] = z > 0 ? magnitude[i] / z : 0;
      }
    }
  return out;
}

/// What a run of the program did wrong ("" if nothing): a valid case must
/// run and match the reference (within 1e-4 relative to the size of the
/// terms summed: values of 1e4 may cancel) and its gather; an
/// invalid one must fail with a message. `error` is the run's message, or
/// empty with `results` set.
inline std::string judge(const Case &c, const std::string &error,
                         const std::vector<HostTensor> *results) {
  bool valid = isValid(c);
  if (!results)
    return valid           ? "a valid case failed: " + error
           : error.empty() ? std::string("a failure without a message")
                           : std::string();
  if (!valid)
    return "an invalid case ran";
  std::vector<double> scale;
  std::vector<float> want = reference(c, &scale);
  const HostTensor &a = (*results)[0];
  if (a.numElements() != int64_t(want.size()))
    return "the attention result has the wrong size";
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(a.as<float>()[i] - want[i]) <=
          1e-4 * std::max(1.0, scale[i])))
      return "attention element " + std::to_string(i) + " is " +
             std::to_string(a.as<float>()[i]) + ", expected " +
             std::to_string(want[i]);
  const HostTensor &b = (*results)[1];
  if (b.shape[0] != int64_t(c.ids.size()))
    return "the gather has the wrong number of rows";
  for (size_t r = 0; r < c.ids.size(); ++r)
    for (int64_t i = 0; i < kHeads * kDim; ++i)
      if (b.as<float>()[r * kHeads * kDim + i] !=
          a.as<float>()[c.ids[r] * kHeads * kDim + i])
        return "gathered row " + std::to_string(r) + " differs";
  return "";
}

/// Runs `program` (compiled from kAttentionProgram) on `c` and judges the
/// run; "" if it did what it must.
inline std::string runAndJudge(mlir::gnn::JitProgram &program, const Case &c) {
  HostTensor src = HostTensor::ids(c.src), dst = HostTensor::ids(c.dst),
             ids = HostTensor::ids(c.ids);
  HostTensor counts = HostTensor::ids({c.numSrc, c.numDst});
  std::vector<mlir::gnn::Argument> args = {
      {nullptr, &src}, {nullptr, &dst}, {nullptr, &counts}, {nullptr, &c.q},
      {nullptr, &c.k}, {nullptr, &c.v}, {nullptr, &ids}};
  auto results = program.run(args);
  std::string error;
  if (!results)
    error = llvm::toString(results.takeError());
  return judge(c, error, results ? &*results : nullptr);
}

} // namespace gnnfuzz

#endif // GNN_FUZZ_ATTENTIONPROGRAM_H
