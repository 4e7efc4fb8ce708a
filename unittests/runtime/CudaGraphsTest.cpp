//===- CudaGraphsTest.cpp - segments captured and replayed, on a fake -----===//
//
// Part of gnnc. The host side of SegmentGraphs against a recording fake of
// the driver's graph calls: which calls a sequence of segments makes, in
// which order, with which graphs; updates of kept graphs, instantiation
// where an update fails, the bound on kept graphs, and failures reported
// instead of dropped.
//
//===----------------------------------------------------------------------===//

#include "CudaGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace gnnc::cuda;

namespace {
/// What the fake driver saw, and what it is told to do.
struct FakeDriver {
  std::vector<std::string> log;
  int nextHandle = 1;
  /// Results to return (0: success).
  int beginResult = 0, endResult = 0, instantiateResult = 0;
  /// cuGraphExecUpdate's verdict on the next update.
  bool updateSucceeds = true;
  /// Handles not yet destroyed.
  int liveGraphs = 0, liveExecs = 0;
  std::vector<std::string> failures;
};
FakeDriver *fake = nullptr;

std::string name(const void *handle) {
  return std::to_string(reinterpret_cast<intptr_t>(handle));
}

GraphResult begin(GraphStream s, int mode) {
  fake->log.push_back("begin " + name(s) + " mode " + std::to_string(mode));
  return fake->beginResult;
}
GraphResult end(GraphStream s, Graph *g) {
  if (fake->endResult != 0) {
    fake->log.push_back("end " + name(s) + " failed");
    return fake->endResult;
  }
  *g = reinterpret_cast<Graph>(intptr_t(fake->nextHandle++));
  ++fake->liveGraphs;
  fake->log.push_back("end " + name(s) + " -> graph " + name(*g));
  return 0;
}
GraphResult instantiate(GraphExec *e, Graph g, unsigned long long) {
  if (fake->instantiateResult != 0) {
    fake->log.push_back("instantiate " + name(g) + " failed");
    return fake->instantiateResult;
  }
  *e = reinterpret_cast<GraphExec>(intptr_t(100 + fake->nextHandle++));
  ++fake->liveExecs;
  fake->log.push_back("instantiate " + name(g) + " -> exec " + name(*e));
  return 0;
}
GraphResult update(GraphExec e, Graph g, GraphUpdateInfo *info) {
  fake->log.push_back("update exec " + name(e) + " from " + name(g) +
                      (fake->updateSucceeds ? "" : " refused"));
  info->result = fake->updateSucceeds ? 0 : 2; // 2: topology changed
  return fake->updateSucceeds ? 0 : 910; // CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
}
GraphResult launch(GraphExec e, GraphStream s) {
  fake->log.push_back("launch exec " + name(e) + " on " + name(s));
  return 0;
}
GraphResult destroyGraph(Graph g) {
  --fake->liveGraphs;
  fake->log.push_back("destroy graph " + name(g));
  return 0;
}
GraphResult destroyExec(GraphExec e) {
  --fake->liveExecs;
  fake->log.push_back("destroy exec " + name(e));
  return 0;
}
void fail(const char *call, GraphResult result) {
  fake->failures.push_back(std::string(call) + " " + std::to_string(result));
}

GraphCalls fakeCalls() {
  GraphCalls c;
  c.streamBeginCapture = begin;
  c.streamEndCapture = end;
  c.graphInstantiate = instantiate;
  c.graphExecUpdate = update;
  c.graphLaunch = launch;
  c.graphDestroy = destroyGraph;
  c.graphExecDestroy = destroyExec;
  return c;
}

const GraphStream kStream = reinterpret_cast<GraphStream>(intptr_t(7));

const void *kernel(intptr_t function) {
  return reinterpret_cast<const void *>(function);
}

class SegmentGraphsTest : public ::testing::Test {
protected:
  void SetUp() override { fake = &driver; }
  void TearDown() override { fake = nullptr; }

  /// A stretch launching `kernels` captured (split where a segment is
  /// full, as the runtime splits it) and flushed.
  bool segment(SegmentGraphs &graphs,
               const std::vector<const void *> &kernels) {
    for (const void *function : kernels) {
      if (!graphs.beforeLaunch(kStream))
        return false;
      graphs.noteLaunch(function);
      if (graphs.full() && !graphs.split())
        return false;
    }
    return graphs.flush();
  }

  FakeDriver driver;
};
} // namespace

TEST_F(SegmentGraphsTest, TheFakeIsComplete) {
  EXPECT_TRUE(fakeCalls().complete());
  GraphCalls partial = fakeCalls();
  partial.graphExecUpdate = nullptr;
  EXPECT_FALSE(partial.complete());
}

TEST_F(SegmentGraphsTest, FirstSegmentIsCapturedInstantiatedAndLaunched) {
  SegmentGraphs graphs(fakeCalls(), fail);
  EXPECT_FALSE(graphs.capturing());
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2), kernel(1)}));
  EXPECT_FALSE(graphs.capturing());
  // One capture for the three launches, begun at the first.
  EXPECT_EQ(driver.log, (std::vector<std::string>{
                            "begin 7 mode 2", "end 7 -> graph 1",
                            "instantiate 1 -> exec 102", "destroy graph 1",
                            "launch exec 102 on 7"}));
  EXPECT_EQ(graphs.instantiations(), 1u);
  EXPECT_EQ(graphs.updates(), 0u);
  EXPECT_EQ(graphs.keptGraphs(), 1u);
  EXPECT_EQ(driver.liveGraphs, 0);
}

TEST_F(SegmentGraphsTest, TheSameKernelsAgainUpdateTheKeptGraph) {
  SegmentGraphs graphs(fakeCalls(), fail);
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2)}));
  driver.log.clear();
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2)}));
  EXPECT_EQ(driver.log,
            (std::vector<std::string>{
                "begin 7 mode 2", "end 7 -> graph 3", "update exec 102 from 3",
                "destroy graph 3", "launch exec 102 on 7"}));
  EXPECT_EQ(graphs.instantiations(), 1u);
  EXPECT_EQ(graphs.updates(), 1u);
  EXPECT_EQ(driver.liveExecs, 1);
}

TEST_F(SegmentGraphsTest, OtherKernelsTakeAGraphOfTheirOwn) {
  SegmentGraphs graphs(fakeCalls(), fail);
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2)}));
  ASSERT_TRUE(segment(graphs, {kernel(2), kernel(1)}));            // order
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2), kernel(2)})); // length
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(3)}));            // kernel
  EXPECT_EQ(graphs.instantiations(), 4u);
  EXPECT_EQ(graphs.updates(), 0u);
  EXPECT_EQ(graphs.keptGraphs(), 4u);
  // Each again: updates, no instantiation. (Grids are not the key: a batch
  // of another size updates the same graph, as the driver allows for
  // kernel nodes.)
  ASSERT_TRUE(segment(graphs, {kernel(1), kernel(2), kernel(2)}));
  ASSERT_TRUE(segment(graphs, {kernel(2), kernel(1)}));
  EXPECT_EQ(graphs.instantiations(), 4u);
  EXPECT_EQ(graphs.updates(), 2u);
}

TEST_F(SegmentGraphsTest, ARefusedUpdateInstantiatesAnew) {
  SegmentGraphs graphs(fakeCalls(), fail);
  ASSERT_TRUE(segment(graphs, {kernel(1)}));
  driver.log.clear();
  driver.updateSucceeds = false;
  ASSERT_TRUE(segment(graphs, {kernel(1)}));
  EXPECT_EQ(driver.log, (std::vector<std::string>{
                            "begin 7 mode 2", "end 7 -> graph 3",
                            "update exec 102 from 3 refused",
                            "destroy exec 102", "instantiate 3 -> exec 104",
                            "destroy graph 3", "launch exec 104 on 7"}));
  EXPECT_TRUE(driver.failures.empty());
  EXPECT_EQ(graphs.keptGraphs(), 1u);
  EXPECT_EQ(driver.liveExecs, 1);
}

TEST_F(SegmentGraphsTest, KeptGraphsAreBoundedLeastRecentFirst) {
  SegmentGraphs graphs(fakeCalls(), fail);
  const size_t n = SegmentGraphs::kMaxKeptGraphs;
  for (size_t i = 0; i < n; ++i)
    ASSERT_TRUE(segment(graphs, {kernel(intptr_t(i) + 1)}));
  // The first segment launched again: the most recent now.
  ASSERT_TRUE(segment(graphs, {kernel(1)}));
  EXPECT_EQ(graphs.keptGraphs(), n);
  EXPECT_EQ(driver.liveExecs, int(n));
  // A new one evicts the least recently launched: the second.
  ASSERT_TRUE(segment(graphs, {kernel(intptr_t(n) + 1)}));
  EXPECT_EQ(graphs.keptGraphs(), n);
  EXPECT_EQ(driver.liveExecs, int(n));
  size_t before = graphs.instantiations();
  ASSERT_TRUE(segment(graphs, {kernel(1)})); // still kept: an update
  EXPECT_EQ(graphs.instantiations(), before);
  ASSERT_TRUE(segment(graphs, {kernel(2)})); // evicted: instantiated
  EXPECT_EQ(graphs.instantiations(), before + 1);
}

TEST_F(SegmentGraphsTest, AFlushWithoutLaunchesDoesNothing) {
  SegmentGraphs graphs(fakeCalls(), fail);
  EXPECT_TRUE(graphs.flush());
  EXPECT_TRUE(driver.log.empty());
}

TEST_F(SegmentGraphsTest, FailuresAreReportedNotDropped) {
  {
    SegmentGraphs graphs(fakeCalls(), fail);
    driver.beginResult = 900; // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
    EXPECT_FALSE(graphs.beforeLaunch(kStream));
    EXPECT_FALSE(graphs.capturing());
    driver.beginResult = 0;
    // A capture invalidated mid-segment (its kernels did not run).
    ASSERT_TRUE(graphs.beforeLaunch(kStream));
    graphs.noteLaunch(kernel(1));
    driver.endResult = 901; // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
    EXPECT_FALSE(graphs.flush());
    EXPECT_FALSE(graphs.capturing());
    driver.endResult = 0;
    driver.instantiateResult = 1;
    EXPECT_FALSE(segment(graphs, {kernel(1)}));
  }
  EXPECT_EQ(driver.failures,
            (std::vector<std::string>{"cuStreamBeginCapture 900",
                                      "cuStreamEndCapture 901",
                                      "cuGraphInstantiate 1"}));
  EXPECT_EQ(driver.liveGraphs, 0);
  EXPECT_EQ(driver.liveExecs, 0);
}

TEST_F(SegmentGraphsTest, DestructionEndsACaptureAndFreesKeptGraphs) {
  {
    SegmentGraphs graphs(fakeCalls(), fail);
    ASSERT_TRUE(segment(graphs, {kernel(1)}));
    ASSERT_TRUE(segment(graphs, {kernel(2)}));
    ASSERT_TRUE(graphs.beforeLaunch(kStream));
    graphs.noteLaunch(kernel(3));
    driver.log.clear();
  }
  EXPECT_EQ(driver.log.front(), "end 7 -> graph 5");
  EXPECT_EQ(driver.liveGraphs, 0);
  EXPECT_EQ(driver.liveExecs, 0);
  EXPECT_TRUE(driver.failures.empty());
}

TEST_F(SegmentGraphsTest, LongStretchesAreLaunchedInParts) {
  // A stretch of 2.5 segments' kernels, all the same kernel: three graphs
  // launched as each part is captured, each its own (a part's place is in
  // its key); the stretch again updates the three.
  SegmentGraphs graphs(fakeCalls(), fail);
  const size_t n = SegmentGraphs::kMaxSegmentLaunches;
  std::vector<const void *> stretch(2 * n + n / 2, kernel(1));
  ASSERT_TRUE(segment(graphs, stretch));
  auto launches = [&] {
    return std::count_if(
        driver.log.begin(), driver.log.end(),
        [](const std::string &l) { return l.rfind("launch", 0) == 0; });
  };
  EXPECT_EQ(launches(), 3);
  EXPECT_EQ(graphs.instantiations(), 3u);
  EXPECT_EQ(graphs.keptGraphs(), 3u);
  // The first part's graph is launched before the second part is begun.
  auto at = [&](const std::string &entry) {
    return std::find(driver.log.begin(), driver.log.end(), entry) -
           driver.log.begin();
  };
  EXPECT_LT(at("launch exec 102 on 7"), at("end 7 -> graph 3"));
  driver.log.clear();
  ASSERT_TRUE(segment(graphs, stretch));
  EXPECT_EQ(launches(), 3);
  EXPECT_EQ(graphs.instantiations(), 3u);
  EXPECT_EQ(graphs.updates(), 3u);
  // A stretch of exactly one segment's kernels: one graph (the wait's flush
  // finds nothing left).
  driver.log.clear();
  ASSERT_TRUE(segment(graphs, std::vector<const void *>(n, kernel(2))));
  EXPECT_EQ(launches(), 1);
}
