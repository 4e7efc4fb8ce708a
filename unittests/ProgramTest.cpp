//===- ProgramTest.cpp - gnn programs through the library API -------------===//
//
// Part of gnnc. A program compiled from a string through Program (the
// library behind `gnn-run PROGRAM.mlir`) runs twice with different graphs
// and inputs, each against a naive sum; its gradient is the closed form's;
// bad programs and bad arguments are errors, with diagnostics in the stream
// given.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/Program.h"
#include "GNN/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <unistd.h>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// out[d] = sum over edges s -> d of x[s] * 2, and a loss: the sum of out.
constexpr const char *kSource = R"mlir(
func.func @main(%g: !gnn.graph<general>, %x: tensor<?x3xf32>)
    -> (tensor<f32>, tensor<?x3xf32>) {
  %s = gnn.send_and_recv %g, [copy_u(%x) -> sum]
      : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %o = gnn.apply_nodes(%s) {
  ^bb0(%a: f32):
    %two = arith.constant 2.0 : f32
    %d = arith.mulf %a, %two : f32
    gnn.yield %d : f32
  } : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %loss = gnn.sum_to %o : tensor<?x3xf32> -> tensor<f32>
  return %loss, %o : tensor<f32>, tensor<?x3xf32>
}
)mlir";

class ProgramTest : public ::testing::Test {
protected:
  ProgramTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

HostTensor random(std::vector<int64_t> shape, unsigned seed) {
  HostTensor t;
  t.shape = std::move(shape);
  t.allocate();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = u(rng);
  return t;
}

TensorMap graph(std::vector<int64_t> src, std::vector<int64_t> dst,
                int64_t nodes) {
  return {{"src", HostTensor::ids(src)},
          {"dst", HostTensor::ids(dst)},
          {"num_nodes", HostTensor::ids({nodes})}};
}
} // namespace

TEST_F(ProgramTest, CompiledFromAStringRunsTwiceWithDifferentInputs) {
  ProgramOptions options;
  options.compile.cache = nullptr;
  auto program = Program::compileString(context, kSource, options);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  ASSERT_EQ((*program)->getParameters().size(), 2u);
  EXPECT_EQ((*program)->getParameters()[1].name, "x");

  struct Case {
    std::vector<int64_t> src, dst;
    int64_t nodes;
  };
  for (auto [run, c] : llvm::enumerate(std::vector<Case>{
           {{0, 1, 3, 3, 2}, {1, 1, 0, 2, 2}, 4},
           {{5, 0, 0, 2, 4, 1, 6}, {0, 6, 3, 3, 3, 2, 5}, 7}})) {
    TensorMap g = graph(c.src, c.dst, c.nodes);
    TensorMap inputs = {{"x", random({c.nodes, 3}, 11 + run)}};
    auto results = (*program)->run(&g, inputs);
    ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
    ASSERT_EQ(results->size(), 2u);
    ASSERT_TRUE(results->count("result1"));
    const HostTensor &out = results->at("result1");
    ASSERT_EQ(out.shape, (std::vector<int64_t>{c.nodes, 3}));
    std::vector<double> expected(c.nodes * 3, 0.0);
    const float *x = inputs.at("x").as<float>();
    for (size_t e = 0; e < c.src.size(); ++e)
      for (int k = 0; k < 3; ++k)
        expected[c.dst[e] * 3 + k] += 2.0 * x[c.src[e] * 3 + k];
    for (int64_t i = 0; i < c.nodes * 3; ++i)
      EXPECT_NEAR(out.as<float>()[i], expected[i], 1e-5) << "run " << run;
  }
}

TEST_F(ProgramTest, PerfMapListsTheCompiledFunctions) {
  std::string map = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::remove(map.c_str());
  ProgramOptions options;
  options.compile.cache = nullptr;
  auto quiet = Program::compileString(context, kSource, options);
  ASSERT_TRUE(bool(quiet)) << llvm::toString(quiet.takeError());
  // Not asked: no map.
  EXPECT_NE(access(map.c_str(), F_OK), 0);

  options.compile.perfMap = true;
  auto listed = Program::compileString(context, kSource, options);
  ASSERT_TRUE(bool(listed)) << llvm::toString(listed.takeError());
  std::ifstream in(map);
  ASSERT_TRUE(in.good()) << map;
  // Lines of perf's map: hexadecimal address and size, then the name.
  std::regex line("[0-9a-f]+ [0-9a-f]+ (.+)");
  bool entry = false;
  int lines = 0;
  for (std::string text; std::getline(in, text); ++lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, line)) << text;
    entry |= m[1] == "_mlir_ciface_main";
  }
  EXPECT_GT(lines, 1);
  EXPECT_TRUE(entry);
  std::remove(map.c_str());
}

TEST_F(ProgramTest, GradientsAreNamedAfterTheArguments) {
  ProgramOptions options;
  options.grad = true;
  auto program = Program::compileString(context, kSource, options);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  EXPECT_EQ((*program)->getEntry(), "main_grad");
  TensorMap g = graph({0, 1, 1, 2}, {1, 2, 0, 2}, 3);
  TensorMap inputs = {{"x", random({3, 3}, 5)}};
  auto results = (*program)->run(&g, inputs);
  ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
  auto grad = results->find("grad.x");
  ASSERT_NE(grad, results->end());
  // d(sum of 2 * sums)/dx[s] = 2 * out-degree(s), in every column.
  const int64_t outDegree[] = {1, 2, 1};
  for (int64_t s = 0; s < 3; ++s)
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(grad->second.as<float>()[s * 3 + k], 2.0 * outDegree[s],
                  1e-6);
}

TEST_F(ProgramTest, BadProgramsAndArgumentsAreErrors) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  auto bad = Program::compileString(context, "func.func @main( {", {},
                                    "broken.mlir", os);
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(bad.errorIsA<ReportedError>());
  llvm::consumeError(bad.takeError());
  EXPECT_NE(os.str().find("broken.mlir:1:"), std::string::npos) << os.str();

  ProgramOptions other;
  other.entry = "nope";
  auto missing = Program::compileString(context, kSource, other);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "the program has no function 'nope'");

  auto program = Program::compileString(context, kSource, {});
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  TensorMap g = graph({0, 1}, {1, 0}, 2);
  TensorMap none;
  auto unbound = (*program)->bind(&g, none);
  ASSERT_FALSE(bool(unbound));
  EXPECT_TRUE(unbound.errorIsA<MissingArgument>());
  EXPECT_EQ(llvm::toString(unbound.takeError()), "no input tensor named 'x'");
  TensorMap inputs = {{"x", random({2, 3}, 1)}};
  auto noGraph = (*program)->bind(nullptr, inputs);
  ASSERT_FALSE(bool(noGraph));
  EXPECT_TRUE(noGraph.errorIsA<MissingArgument>());
  llvm::consumeError(noGraph.takeError());
  TensorMap tooMany = {{"x", random({3, 3}, 1)}};
  auto rows = (*program)->run(&g, tooMany);
  ASSERT_FALSE(bool(rows));
  EXPECT_EQ(llvm::toString(rows.takeError()),
            "argument 'x' has 3 rows, but graph 'g' has 2 source nodes");
  TensorMap extra = {{"x", random({2, 3}, 1)}, {"y", random({2, 3}, 2)}};
  auto unknown = (*program)->run(&g, extra);
  ASSERT_FALSE(bool(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "input tensor 'y' is not an argument of 'main'");
}
