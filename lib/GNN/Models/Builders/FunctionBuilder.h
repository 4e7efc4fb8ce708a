//===- FunctionBuilder.h - model functions built as gnn IR ------*- C++ -*-===//
//
// Part of gnnc. The model builders create their functions with an
// ImplicitLocOpBuilder through helpers that read like the model's math
// (linear, layerNorm, attention, ...): every op is built typed, so a mistake
// is a verifier error at build time, not a parse error in the runner.
// Weight arguments are added as the body first uses them. Private to
// lib/GNN/Models.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_FUNCTIONBUILDER_H
#define GNN_MODELS_FUNCTIONBUILDER_H

#include "GNN/IR/GNNOps.h"
#include "GNN/Models/ModelConfig.h"
#include "GNN/Models/TransformerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlir::gnn::models {

/// What a layer function's body calls its own layer in weight names.
constexpr llvm::StringLiteral kLayerPrefix = "layer";

/// Builds one function of a model module.
class FunctionBuilder {
public:
  FunctionBuilder(ModuleOp module, llvm::StringRef name,
                  const ModelConfig &config,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight);

  // Types.
  RankedTensorType rows(int64_t width);
  RankedTensorType x() { return rows(d); }
  RankedTensorType heads();
  RankedTensorType heads1();
  RankedTensorType ids();
  /// A graph of dynamic counts; `structure` is what the runner's graphs
  /// for it promise (the GPU's tiled attention kernel serves the
  /// structured ones).
  GraphType graph(GraphStructure structure = GraphStructure::General);

  /// A run-time argument named `name` (its gnn.name).
  Value input(llvm::StringRef name, Type type);
  /// An input the function updates in place and returns (a decoder cache
  /// whose storage the runner hands over): marked
  /// `bufferization.writable = true`, so it is not copied first.
  Value updatedInput(llvm::StringRef name, Type type);
  /// A weight argument, added on first use.
  Value weight(const std::string &name, llvm::ArrayRef<int64_t> shape);

  // Scalars (in the body of an elementwise function) and index constants.
  Value constant(double v);
  Value index(int64_t v);

  Value linear(Value in, const std::string &prefix, int64_t inWidth,
               int64_t outWidth);
  Value layerNorm(Value in, const std::string &prefix);
  Value logSoftmax(Value in);

  /// An elementwise node function (gnn.apply_nodes) of `in`: `body` builds
  /// the result element from the input elements.
  Value apply(ValueRange in, Type resultType,
              llvm::function_ref<Value(ValueRange)> body);
  Value gather(Value source, Value ids, Type resultType = {});
  Value scatter(Value source, Value dest, Value ids);
  /// The ids of the rows of `in` (or of `candidates`) for which `keep`
  /// holds.
  Value filterNodes(ValueRange in, Value candidates,
                    llvm::function_ref<Value(ValueRange)> keep);
  /// The in-edges of `nodes` in `graph`; `eids` (if given) is set to their
  /// ids in `graph`.
  Value inSubgraph(Value graph, Value nodes, Value *eids = nullptr);

  Value residual(Value a, Value b);
  /// Training: inverted dropout of `in` at the function's dropout rate, with
  /// its own range of counter offsets (one range per call in a function;
  /// a layer function's calls get ranges of their own, see callLayer). The
  /// identity when the rate is 0 or the function has no `rng` input.
  Value dropout(Value in);
  /// Makes this function take `rng` (tensor<2xi64>: Philox seed, first
  /// counter offset) and drop out at `rate` (> 0) wherever dropout() is
  /// called, here and in the layer functions it calls.
  void enableDropout(double rate);
  /// Inside a loop over ACT steps: dropout() takes offsets of step `step`
  /// (an index; null: none), so each step draws its own masks.
  void setDropoutStep(Value step) { dropoutStep = step; }
  Value feedForward(Value in, const std::string &prefix);
  /// lut[token] * sqrt(d).
  Value embedTokens(const std::string &lutName, int64_t vocab, Value tokens);
  /// lut[token] * sqrt(d) + pe[position].
  Value embed(const std::string &lutName, int64_t vocab, Value tokens,
              Value positions, Value pe);
  /// [?, d] viewed as [?, h, dk] (head-major), and back.
  Value splitHeads(Value in);
  Value mergeHeads(Value in);
  /// The number of rows of `in`.
  Value numRows(Value in);
  /// Attention of queries q (destinations) over keys/values k, v (sources)
  /// along `graph`, written as DGL's propagate_attention. With `weights`,
  /// also sets it to each edge's normalized weight e / z ([edges, h, 1]).
  Value attention(Value graph, Value q, Value k, Value v,
                  Value *weights = nullptr);

  /// Returns `results`, each with its gnn.name (a result named like a
  /// writable input is marked as its update), and sets the signature.
  void finish(llvm::ArrayRef<std::pair<Value, std::string>> results);

  /// Named values: a function's inputs or results.
  using Named = std::vector<std::pair<Value, std::string>>;
  /// The body of a layer function: its results from its inputs.
  using LayerBody =
      llvm::function_ref<Named(FunctionBuilder &layer, ValueRange inputs)>;
  /// Calls a private function `name` that `body` builds, with `inputs` and
  /// the weights the body uses. The body names weights under kLayerPrefix
  /// ("layer.sublayer.0.norm.weight"); the call passes this function's
  /// weight named under `prefix` ("encoder.layers.3.sublayer.0.norm.weight").
  /// Names outside kLayerPrefix are passed as they are. A function that an
  /// earlier call built the same is called instead of a new one, so a stack
  /// of N layers compiles one layer body, not N. With dropout enabled, the
  /// layer also takes an `rng` input (last), whose offsets start where this
  /// function's n-th layer call's range begins. Inputs named in `updated`
  /// are writable, and the body's results of the same names their updates
  /// (which the caller's buffers may then keep).
  SmallVector<Value> callLayer(llvm::StringRef name, llvm::StringRef prefix,
                               const Named &inputs, LayerBody body,
                               llvm::ArrayRef<std::string> updated = {});

  ImplicitLocOpBuilder b;
  const ModelConfig &c;
  int64_t d, h, dk;

private:
  ModuleOp module;
  func::FuncOp fn;
  Block *entry;
  Value zero; // index 0, for tensor.dim
  llvm::function_ref<bool(llvm::StringRef)> hasWeight;
  struct Arg {
    std::string name;
    bool writable = false;
  };
  std::vector<Arg> args;
  std::map<std::string, Value> weights;
  /// Dropout: tensor<2xi64> (seed, first offset), the rate, and how many
  /// dropouts and layer calls took an offset range so far.
  Value rng, dropoutStep;
  double dropoutRate = 0;
  int64_t dropoutSites = 0, layerCalls = 0;
};

/// Builds one function of a model module.
using FunctionBuild = void (*)(ModuleOp, const ModelConfig &,
                               const BuildOptions &,
                               llvm::function_ref<bool(llvm::StringRef)>);

/// A verified module that `build` fills; null (with the verifier's
/// diagnostics emitted) when it made invalid IR.
OwningOpRef<ModuleOp> buildModule(MLIRContext &context,
                                  llvm::function_ref<void(ModuleOp)> build);

/// A verified model module of `functions`; null (with the verifier's
/// diagnostics emitted) when a builder made invalid IR.
OwningOpRef<ModuleOp>
buildModule(MLIRContext &context, const ModelConfig &config,
            const BuildOptions &options,
            llvm::function_ref<bool(llvm::StringRef)> hasWeight,
            std::initializer_list<FunctionBuild> functions);

} // namespace mlir::gnn::models

#endif // GNN_MODELS_FUNCTIONBUILDER_H
