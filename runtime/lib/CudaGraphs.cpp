//===- CudaGraphs.cpp - the launches between two waits as one graph -------===//
//
// Part of gnnc's runtime. See CudaGraphs.h.
//
//===----------------------------------------------------------------------===//

#include "CudaGraphs.h"

using namespace gnnc::cuda;

namespace {
constexpr GraphResult kOk = 0;
/// CU_GRAPH_EXEC_UPDATE_SUCCESS.
constexpr int kUpdateSuccess = 0;
} // namespace

bool GraphCalls::complete() const {
  return streamBeginCapture && streamEndCapture && graphInstantiate &&
         graphExecUpdate && graphLaunch && graphDestroy && graphExecDestroy;
}

SegmentGraphs::SegmentGraphs(const GraphCalls &calls,
                             void (*fail)(const char *, GraphResult))
    : calls(calls), fail(fail) {}

SegmentGraphs::~SegmentGraphs() {
  // A segment still being captured belongs to a thread that is going
  // away without waiting for its work: end the capture so that the stream
  // is usable, and drop what it held.
  if (stream) {
    Graph graph = nullptr;
    if (calls.streamEndCapture(stream, &graph) == kOk && graph)
      calls.graphDestroy(graph);
  }
  for (auto &[key, entry] : kept)
    calls.graphExecDestroy(entry.exec);
}

bool SegmentGraphs::ok(GraphResult result, const char *call) {
  if (result == kOk)
    return true;
  fail(call, result);
  return false;
}

bool SegmentGraphs::beforeLaunch(GraphStream on) {
  if (stream)
    return true;
  if (!ok(calls.streamBeginCapture(on, kCaptureModeRelaxed),
          "cuStreamBeginCapture"))
    return false;
  stream = on;
  launches.clear();
  return true;
}

void SegmentGraphs::noteLaunch(const void *function) {
  launches.push_back(function);
}

bool SegmentGraphs::flush() {
  bool launched = launchSegment();
  part = 0;
  return launched;
}

bool SegmentGraphs::split() {
  bool launched = launchSegment();
  ++part;
  return launched;
}

bool SegmentGraphs::launchSegment() {
  if (!stream)
    return true;
  GraphStream on = stream;
  stream = nullptr;
  Graph graph = nullptr;
  if (!ok(calls.streamEndCapture(on, &graph), "cuStreamEndCapture"))
    return false;
  GraphExec exec = executableFor({part, launches}, graph);
  calls.graphDestroy(graph);
  return exec && ok(calls.graphLaunch(exec, on), "cuGraphLaunch");
}

GraphExec SegmentGraphs::executableFor(const Key &key, Graph graph) {
  if (auto found = kept.find(key); found != kept.end()) {
    GraphUpdateInfo info{};
    if (calls.graphExecUpdate(found->second.exec, graph, &info) == kOk &&
        info.result == kUpdateSuccess) {
      ++updated;
      recency.splice(recency.begin(), recency, found->second.recent);
      return found->second.exec;
    }
    // Another topology under the same kernels (a product's own kernels
    // changed): instantiated anew below.
    calls.graphExecDestroy(found->second.exec);
    recency.erase(found->second.recent);
    kept.erase(found);
  }
  GraphExec exec = nullptr;
  if (!ok(calls.graphInstantiate(&exec, graph, 0), "cuGraphInstantiate"))
    return nullptr;
  ++instantiated;
  keep(key, exec);
  return exec;
}

void SegmentGraphs::keep(const Key &key, GraphExec exec) {
  if (kept.size() == kMaxKeptGraphs) {
    auto oldest = kept.find(recency.back());
    calls.graphExecDestroy(oldest->second.exec);
    kept.erase(oldest);
    recency.pop_back();
  }
  recency.push_front(key);
  kept[key] = {exec, recency.begin()};
}
