//===- CudaGraphs.h - the launches between two waits as one graph -*- C++
//-*-===//
//
// Part of gnnc's runtime (internal). With launches that do not wait (see
// gnn-gpu-async-launches), a thread's kernels between two waits of its host
// code form a segment that a training or decoding step repeats, the same
// kernels in the same order, with other buffers. Launched one by one, each
// costs the host a driver call and the device a gap between kernels. Here a
// segment is captured from the thread's stream into a CUDA graph
// (cuStreamBeginCapture at its first launch, cuStreamEndCapture at the
// wait), and the host launches it whole: the first time a segment's
// kernels are seen its graph is instantiated; after that, the executable
// graph kept for the same kernels in the same order is updated from the
// new capture (cuGraphExecUpdate: new buffers and grids, the same
// topology) and launched, which is cheaper than instantiating, or
// instantiated anew where the update fails (a cuBLAS product that chose
// other kernels for another shape). Executable graphs are
// kept per thread for the most recent segments (kMaxKeptGraphs).
//
// A long stretch between two waits (a training step: hundreds of kernels)
// is split into segments of at most kMaxSegmentLaunches kernels, each
// launched as soon as it is captured: the device runs the first while the
// host still captures the next, where one graph for the whole stretch
// left the device idle until the host had issued every launch of the step.
// A segment's key is its place in the stretch and its kernels.
//
// The driver entry points come as a table, so that the host side is tested
// against a recording fake (unittests/runtime/CudaGraphsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDAGRAPHS_H
#define GNNC_RUNTIME_CUDAGRAPHS_H

#include <cstddef>
#include <list>
#include <map>
#include <vector>

namespace gnnc::cuda {
using GraphResult = int;
using GraphStream = void *;
using Graph = void *;
using GraphExec = void *;

/// cuGraphExecUpdate_v2's result information.
struct GraphUpdateInfo {
  int result;
  void *errorNode;
  void *errorFromNode;
};

/// CU_STREAM_CAPTURE_MODE_RELAXED: the capturing thread may still allocate
/// (the runtime's pool may ask the driver for a block mid-segment).
constexpr int kCaptureModeRelaxed = 2;

/// The driver's graph entry points (null where the driver lacks them).
struct GraphCalls {
  GraphResult (*streamBeginCapture)(GraphStream, int mode) = nullptr;
  GraphResult (*streamEndCapture)(GraphStream, Graph *) = nullptr;
  GraphResult (*graphInstantiate)(GraphExec *, Graph,
                                  unsigned long long flags) = nullptr;
  GraphResult (*graphExecUpdate)(GraphExec, Graph, GraphUpdateInfo *) = nullptr;
  GraphResult (*graphLaunch)(GraphExec, GraphStream) = nullptr;
  GraphResult (*graphDestroy)(Graph) = nullptr;
  GraphResult (*graphExecDestroy)(GraphExec) = nullptr;

  /// Whether every entry point is there.
  bool complete() const;
};

/// One thread's segments (see the file comment).
class SegmentGraphs {
public:
  /// Most executable graphs kept; the least recently launched goes first.
  static constexpr size_t kMaxKeptGraphs = 64;
  /// Most kernels of one segment (see the file comment): a graph launch
  /// costs the host a few microseconds, a segment's capture delays the
  /// device's start by its launches' host time.
  static constexpr size_t kMaxSegmentLaunches = 64;

  /// `calls` must be complete; `fail` receives a failed call's name and
  /// result (the runtime reports it).
  SegmentGraphs(const GraphCalls &calls,
                void (*fail)(const char *call, GraphResult result));
  ~SegmentGraphs();
  SegmentGraphs(const SegmentGraphs &) = delete;
  SegmentGraphs &operator=(const SegmentGraphs &) = delete;

  /// Before a launch on `stream`: starts capturing the segment there if it
  /// is not yet. False (reported) if the driver refuses: the launch then
  /// runs as it is.
  bool beforeLaunch(GraphStream stream);
  /// After a launch of `function` captured into the segment. A segment's
  /// key is its kernels in order, not their grids: a step of another batch
  /// launches the same kernels on more or fewer nodes, which an update of
  /// the kept graph takes (kernel nodes' grids may change).
  void noteLaunch(const void *function);
  /// Whether a segment is being captured.
  bool capturing() const { return stream != nullptr; }
  /// Whether the segment has its most launches: the caller splits it.
  bool full() const { return launches.size() >= kMaxSegmentLaunches; }
  /// At a wait: ends the capture and launches the segment's graph on its
  /// stream (nothing without a segment). False (reported) if the driver
  /// fails: the segment's kernels may not have run, and the caller must
  /// treat the program's results as lost.
  bool flush();
  /// As flush(), between two launches of one stretch: the next segment is
  /// the stretch's next part.
  bool split();

  /// Executable graphs kept, and how many launches instantiated a graph
  /// or updated a kept one (for tests and profiles).
  size_t keptGraphs() const { return kept.size(); }
  size_t instantiations() const { return instantiated; }
  size_t updates() const { return updated; }

private:
  /// A segment's part of its stretch (0: the first after a wait) and its
  /// kernels in order.
  using Key = std::pair<size_t, std::vector<const void *>>;
  struct Kept {
    GraphExec exec;
    std::list<Key>::iterator recent;
  };

  /// The executable graph for the captured `graph` of `key`: a kept one
  /// updated from it, or a new instantiation; null after a failure.
  GraphExec executableFor(const Key &key, Graph graph);
  void keep(const Key &key, GraphExec exec);
  bool ok(GraphResult result, const char *call);
  /// Ends the capture and launches the segment (flush and split).
  bool launchSegment();

  GraphCalls calls;
  void (*fail)(const char *, GraphResult);
  /// The stream being captured (null: none), the segment's launches and
  /// its part of the stretch.
  GraphStream stream = nullptr;
  std::vector<const void *> launches;
  size_t part = 0;
  std::map<Key, Kept> kept;
  /// Keys from the most to the least recently launched.
  std::list<Key> recency;
  size_t instantiated = 0, updated = 0;
};

} // namespace gnnc::cuda

#endif // GNNC_RUNTIME_CUDAGRAPHS_H
