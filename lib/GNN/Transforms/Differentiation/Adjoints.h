//===- Adjoints.h - adjoint rules of gnn-differentiate ----------*- C++ -*-===//
//
// Part of gnnc. The reverse sweep of gnn-differentiate visits the ops of a
// function backwards; each op's rule reads the adjoints of its results and
// adds to the adjoints of its active operands through an AdjointBuilder.
// The rules for message passing are in GraphAdjoints.cpp, those for
// node-wise and dense ops in NodeAdjoints.cpp, symbolic differentiation of
// element bodies in ScalarAdjoints.cpp. Private to lib/GNN/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_DIFFERENTIATION_ADJOINTS_H
#define GNN_TRANSFORMS_DIFFERENTIATION_ADJOINTS_H

#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::gnn::autodiff {

/// Whether `type` is a ranked tensor of floats (what gets gradients).
inline bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Builds an element function's value from one scalar per input at the
/// builder's insertion point.
using ElementBody = llvm::function_ref<Value(OpBuilder &, ValueRange)>;

/// The symbolic reverse mode of element bodies: `ops` are the scalar ops
/// that computed `root` (in order, in the block being built); returns the
/// adjoint of each of `wrt` for the seed `seed` (a zero constant where the
/// seed does not reach it), built at the insertion point. Fails with an
/// error naming an op that has no derivative.
FailureOr<SmallVector<Value>> scalarAdjoints(OpBuilder &b, Location loc,
                                             ArrayRef<Operation *> ops,
                                             Value root, Value seed,
                                             ValueRange wrt);

/// Emits the element forward of a built-in message function followed by its
/// elementwise chain; `dot` multiplies (the sum over the last dim is the
/// caller's: the adjoint of a sum is a broadcast).
Value emitMessage(OpBuilder &b, Location loc, MessageFnAttr fn, ArrayAttr post,
                  ValueRange x);

/// The state of one reverse sweep.
class AdjointBuilder {
public:
  AdjointBuilder(OpBuilder &builder, Location loc, llvm::DenseSet<Value> active)
      : b(loc, builder.getContext()), active(std::move(active)) {
    b.setInsertionPoint(builder.getInsertionBlock(),
                        builder.getInsertionPoint());
  }

  ImplicitLocOpBuilder b;

  /// Whether `v` depends on a differentiable argument and the loss on it.
  bool isActive(Value v) const { return active.contains(v); }
  /// The adjoint accumulated for `v` so far, or null.
  Value adjoint(Value v) const { return adjoints.lookup(v); }
  /// Adds `contribution` (of `v`'s type) to the adjoint of `v`.
  void accumulate(Value v, Value contribution);
  /// Adds `contribution` of any shape that broadcasts to `v`'s, summed
  /// to it.
  void accumulateSummed(Value v, Value contribution);

  // Tensors.
  Value constantLike(Value like, double value, Type elementType = {});
  Value zerosLike(Value like) { return constantLike(like, 0.0); }
  Value add(Value x, Value y);
  /// `x` summed to `type` (a no-op when the types agree).
  Value sumTo(Value x, Type type);

  // Graphs.
  /// `graph` with every edge reversed, same edge ids (built once per graph).
  Value reversed(Value graph);
  /// The edge tensor `t` (one row per edge) gathered to a node or edge
  /// feature of `type` at `target`: summed over the in-edges of each
  /// destination, the out-edges of each source (over the reversed graph),
  /// or kept, then summed to `type`'s per-row shape.
  Value edgesToTarget(Value t, Target target, Value graph, Value edges,
                      RankedTensorType type);

  /// An apply_edges (graph) or apply_nodes (no graph) whose body builds
  /// `forward` over the elements of `inputs` and yields the adjoint of
  /// input `wrt` times the element of `seed` (the last input); `roles` are
  /// the inputs' targets for apply_edges. The result's per-row shape is the
  /// inputs' broadcast.
  FailureOr<Value> elementAdjoint(Value graph, Value edges, ValueRange inputs,
                                  ArrayRef<Target> roles, Value seed,
                                  Target seedRole, unsigned wrt,
                                  ElementBody forward);

  /// gnn.apply_nodes / gnn.apply_edges (inputs tagged with `roles`) of
  /// result `type` with the element body `body`.
  Value applyNodes(ValueRange inputs, RankedTensorType type, ElementBody body);
  Value applyEdges(Value graph, Value edges, ValueRange inputs,
                   ArrayRef<Target> roles, RankedTensorType type,
                   ElementBody body);

  /// Emits `op`'s error that it has no adjoint.
  LogicalResult noAdjoint(Operation *op, const Twine &why = "");

private:
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> adjoints;
  llvm::DenseMap<Value, Value> reversedGraphs;
};

/// Builds the backward function of a callee (Differentiate.cpp): its
/// arguments and its float results' gradients in, its float arguments'
/// gradients out.
/// A callee split into a forward that also returns its residuals (the
/// tensors its backward reads) and a backward that reads them after the
/// callee's arguments and its float results' gradients.
struct CalleeTape {
  /// Null where the callee has no tape (its residuals are not all tensors);
  /// `fwd` is the callee itself where the backward reads only arguments.
  func::FuncOp fwd, vjp;
  unsigned numResiduals = 0;
};

class CalleeDifferentiator {
public:
  virtual ~CalleeDifferentiator() = default;
  virtual FailureOr<func::FuncOp> vjpOf(func::FuncOp callee,
                                        Operation *user) = 0;
  virtual FailureOr<CalleeTape> tapeOf(func::FuncOp callee,
                                       Operation *user) = 0;
};

/// `name` followed by `suffix`, with a number after it if `module` already
/// has that symbol: a name for a function the pass adds.
std::string freshSymbolName(ModuleOp module, StringRef name, StringRef suffix);

/// A region of `loop` (its block's arguments mapped to the function's
/// first arguments, `captured` after them) as a private function named
/// after the enclosing function and `suffix`, returning the operands of its
/// terminator.
func::FuncOp outlineRegion(Operation *loop, Region &region,
                           ArrayRef<Value> captured, StringRef suffix);

/// The adjoint of an scf.for (LoopAdjoints.cpp): its body outlined and
/// differentiated as a callee, iterations reversed with the state of each
/// recomputed from the initial values.
LogicalResult differentiateFor(scf::ForOp loop, AdjointBuilder &ad,
                               CalleeDifferentiator &callees);

/// The adjoint of an scf.while (WhileAdjoint.cpp), through its condition
/// region and its body as functions: the forward keeps each iteration's
/// state and body residuals on a gnn.tape and counts the iterations; the
/// backward pops them in reverse, recomputing nothing. A loop whose values a
/// tape cannot keep (a graph in its state) is counted by running it again and
/// reversed like scf.for.
LogicalResult differentiateWhile(scf::WhileOp loop, AdjointBuilder &ad,
                                 CalleeDifferentiator &callees);

/// The adjoint of an scf.if: both branches outlined and differentiated as
/// callees, the backward an scf.if on the same condition.
LogicalResult differentiateIf(scf::IfOp op, AdjointBuilder &ad,
                              CalleeDifferentiator &callees);

/// Adds the adjoints of `op`'s active operands; the rules per family.
LogicalResult differentiateGraphOp(Operation *op, AdjointBuilder &ad,
                                   bool &handled);
LogicalResult differentiateNodeOp(Operation *op, AdjointBuilder &ad,
                                  bool &handled);

/// Whether `op` is differentiated by gnn.fused_attention_grad (static
/// feature sizes); otherwise it is unfused first.
bool hasFusedBackward(FusedAttentionOp op);

/// Makes a normalized gnn.fused_attention with a fused backward also return
/// its log-sum-exp, which the backward then takes instead of recomputing
/// the forward.
void saveAttentionStatistics(FusedAttentionOp op);

/// Replaces a gnn.fused_attention by the DGL form it fuses, so that the
/// backward differentiates that; values whose gradient contributions cancel
/// (the exact softmax's maximum) are added to `constants`.
void unfuseAttention(FusedAttentionOp op, llvm::DenseSet<Value> &constants);

} // namespace mlir::gnn::autodiff

#endif // GNN_TRANSFORMS_DIFFERENTIATION_ADJOINTS_H
