//===- BeamSearch.cpp - greedy decoding and beam search ------------------===//
//
// Part of gnnc. Decoding: hypotheses grow one node per step through
// TransformerModel::decodeStep; greedy decoding is a beam of one.
//
//===----------------------------------------------------------------------===//

#include "InferenceDetail.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

Expected<std::vector<Sequence>>
TransformerModel::greedy(llvm::ArrayRef<Sequence> sources, int64_t maxLen) {
  return beam(sources, 1, 0.0, maxLen);
}

Expected<std::vector<Sequence>>
TransformerModel::beam(llvm::ArrayRef<Sequence> sources, int64_t beamSize,
                       double alpha, int64_t maxLen) {
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  int64_t vocab = config.tgtVocab;
  size_t k = size_t(std::max<int64_t>(beamSize, 1));
  auto penalty = [&](size_t len) {
    return std::pow((5.0 + double(len)) / 6.0, alpha);
  };
  // Beams own their hypotheses; each keeps up to k, best first.
  std::vector<std::vector<std::unique_ptr<Hypothesis>>> beams(sources.size());
  for (size_t b = 0; b < sources.size(); ++b) {
    auto h = std::make_unique<Hypothesis>();
    h->example = int64_t(b);
    h->finished = maxLen <= 1;
    beams[b].push_back(std::move(h));
  }
  for (;;) {
    std::vector<Hypothesis *> live;
    for (auto &beam : beams)
      for (auto &h : beam)
        if (!h->finished)
          live.push_back(h.get());
    if (live.empty())
      break;
    Expected<TensorMap> step = decodeStep(*enc, live);
    if (!step)
      return step.takeError();
    const HostTensor &lp = (*step)[model::kLogProbs];
    std::map<const Hypothesis *, const float *> rowOf;
    for (auto [j, h] : llvm::enumerate(live))
      rowOf[h] = lp.as<float>() + j * vocab;

    for (auto &beam : beams) {
      struct Candidate {
        Hypothesis *parent;
        int64_t token; // -1: a finished hypothesis kept as it is
        double logProb, score;
      };
      std::vector<Candidate> candidates;
      for (auto &h : beam) {
        if (h->finished) {
          candidates.push_back({h.get(), -1, h->logProb, h->score});
          continue;
        }
        const float *row = rowOf[h.get()];
        std::vector<int64_t> order(vocab);
        std::iota(order.begin(), order.end(), 0);
        size_t top = std::min<size_t>(k, size_t(vocab));
        std::partial_sort(order.begin(), order.begin() + top, order.end(),
                          [&](int64_t a, int64_t b) {
                            return row[a] > row[b] ||
                                   (row[a] == row[b] && a < b);
                          });
        size_t length = h->tokens.size(); // outputs after this token
        for (size_t i = 0; i < top; ++i) {
          double logProb = h->logProb + double(row[order[i]]);
          candidates.push_back(
              {h.get(), order[i], logProb, logProb / penalty(length)});
        }
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate &a, const Candidate &b) {
                         return a.score > b.score;
                       });
      candidates.resize(std::min(candidates.size(), k));
      std::vector<std::unique_ptr<Hypothesis>> next;
      for (const Candidate &c : candidates) {
        if (c.token < 0) {
          for (auto &h : beam)
            if (h.get() == c.parent)
              next.push_back(std::move(h));
          continue;
        }
        auto h = std::make_unique<Hypothesis>(*c.parent);
        h->tokens.push_back(c.token);
        h->logProb = c.logProb;
        h->score = c.score;
        // Outputs exclude <sos>; <eos> ends a hypothesis, and so does the
        // length limit of maxLen - 1 outputs.
        h->finished =
            c.token == kEos || int64_t(h->tokens.size()) - 1 >= maxLen - 1;
        next.push_back(std::move(h));
      }
      beam = std::move(next);
    }
  }
  std::vector<Sequence> outputs;
  for (auto &beam : beams) {
    const Sequence &tokens = beam.front()->tokens;
    Sequence out(tokens.begin() + 1, tokens.end());
    if (!out.empty() && out.back() == kEos)
      out.pop_back();
    outputs.push_back(std::move(out));
  }
  return outputs;
}
