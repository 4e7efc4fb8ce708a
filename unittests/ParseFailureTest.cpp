//===- ParseFailureTest.cpp - failed parses inside a ParserQuarantine -----===//
//
// Part of gnnc. MLIR 19's parser writes into operations it freed when a
// parse fails after uses before their definitions were resolved into a
// region that the failure destroys; outside a quarantine, the process
// aborts within a few such parses ("malloc(): unsorted double linked list
// corrupted").
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Support/ParserQuarantine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;

namespace {
/// `uses` values used in a function's body before an apply_nodes region
/// defines them, then a redefinition inside that region.
std::string forwardReferencesIntoAFailedRegion(int uses) {
  std::string text = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n";
  for (int i = 0; i < uses; ++i)
    text += "  %u" + std::to_string(i) + " = arith.addf %v" +
            std::to_string(i) + ", %v" + std::to_string(i) + " : f32\n";
  text += "  %r = gnn.apply_nodes(%x) {\n  ^bb0(%a: f32):\n";
  for (int i = 0; i < uses; ++i)
    text += "    %v" + std::to_string(i) + " = arith.addf %a, %a : f32\n";
  text += "    %v0 = arith.addf %a, %a : f32\n"
          "    gnn.yield %a : f32\n"
          "  } : (tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %r : tensor<4xf32>\n}\n";
  return text;
}
} // namespace

TEST(ParseFailure, ForwardReferencesIntoAFailedRegion) {
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors.push_back(diag.str());
    return success();
  });
  for (int uses : {1, 20, 100}) {
    for (int repeat = 0; repeat < 20; ++repeat) {
      errors.clear();
      OwningOpRef<ModuleOp> module;
      {
        gnn::ParserQuarantine quarantine;
        module = parseSourceString<ModuleOp>(
            forwardReferencesIntoAFailedRegion(uses), ParserConfig(&context));
      }
      EXPECT_FALSE(module);
      ASSERT_FALSE(errors.empty());
      EXPECT_EQ(errors.front(), "redefinition of SSA value '%v0'");
      // The heap is whole: blocks of every size come and go.
      std::vector<std::string> blocks;
      for (int i = 0; i < 2000; ++i)
        blocks.emplace_back(16 + i % 300, 'x');
    }
  }
}
