//===- GPUAttention.cpp - gnn.fused_attention as a GPU kernel -------------===//
//
// Part of gnnc. A group of G lanes (a power of two up to a warp) handles one
// destination and head: lane j holds elements j, j + G, ... of the query row
// and of the running weighted sum in registers, the dot product with each
// source's key row is reduced by butterfly shuffles within the group, and
// every lane keeps the softmax state (running maximum and sum) of its group.
// Loads of key and value rows are coalesced across the lanes of a group. No
// per-edge value is written to memory.
//
// Groups tile warps (G divides 32) and warps tile blocks, so the shuffles
// (xor offsets below G) never cross groups.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
constexpr int64_t kWarp = 32;
constexpr int64_t kBlockThreads = 128;

/// The kernel's static layout: rows are [heads?, d] with at most one head
/// dim, q and k share d, and no operand broadcasts a head.
struct KernelShape {
  int64_t d, dv, lanes;
  int64_t perLaneD() const { return llvm::divideCeil(d, lanes); }
  int64_t perLaneDv() const { return llvm::divideCeil(dv, lanes); }
};

std::optional<KernelShape> kernelShape(FusedAttentionOp op) {
  auto itemOf = [](Value v) {
    return getItemShape(cast<RankedTensorType>(v.getType()));
  };
  ArrayRef<int64_t> q = itemOf(op.getQuery()), k = itemOf(op.getKey()),
                    v = itemOf(op.getValue());
  if (q.size() > 2 || k.size() != q.size() || v.size() != q.size())
    return std::nullopt;
  if (!cast<RankedTensorType>(op.getQuery().getType()).getElementType().isF32())
    return std::nullopt;
  if (q.size() == 2 && (k[0] != q[0] || v[0] != q[0]))
    return std::nullopt;
  if (ShapedType::isDynamic(q.back()) || k.back() != q.back() ||
      ShapedType::isDynamic(v.back()))
    return std::nullopt;
  KernelShape shape{q.back(), v.back(), 0};
  shape.lanes =
      std::min<int64_t>(kWarp, llvm::PowerOf2Ceil(std::max(shape.d, shape.dv)));
  return shape;
}

/// Builds the kernel body for one group (destination v, head h). Shuffles
/// need every lane of the warp, so the edge loop runs for the largest
/// in-degree among the warp's groups; a group past its own edges (or past
/// the last destination) computes nothing in those iterations.
class GroupBody {
public:
  GroupBody(Lowering &l, const AttentionPlan &p, const KernelShape &shape,
            Value valid, Value v, Value head, Value lane)
      : l(l), p(p), shape(shape), valid(valid), v(v), head(head), lane(lane) {}

  void build() {
    Type t = p.elem;
    SmallVector<Value> qRegs;
    for (int64_t j = 0; j < shape.perLaneD(); ++j)
      qRegs.push_back(loadMasked(p.q.memref, v, j, shape.d));
    // This group's CSR slots (none for a group past the end).
    Value first = l.b.create<memref::LoadOp>(l.loc, p.g.inPtr, v);
    Value last = l.b.create<memref::LoadOp>(
        l.loc, p.g.inPtr,
        ValueRange{l.b.create<arith::AddIOp>(l.loc, v, l.idx(1))});
    Value degree = l.b.create<arith::SelectOp>(
        l.loc, valid, l.b.create<arith::SubIOp>(l.loc, last, first), l.idx(0));
    Value rounds = warpMax(degree);

    Value negInf = l.floatConst(t, -std::numeric_limits<double>::infinity());
    SmallVector<Value> init = {l.floatConst(t, 0.0), negInf};
    for (int64_t j = 0; j < shape.perLaneDv(); ++j)
      init.push_back(l.floatConst(t, 0.0));
    auto loop = l.b.create<scf::ForOp>(
        l.loc, l.idx(0), rounds, l.idx(1), init,
        [&](OpBuilder &nested, Location, Value i, ValueRange state) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
          l.b.create<scf::YieldOp>(l.loc,
                                   round(first, degree, i, qRegs, state));
        });
    store(loop.getResults());
  }

private:
  /// One round: this group's i-th in-edge, if it has one and it is listed.
  SmallVector<Value> round(Value first, Value degree, Value i,
                           ArrayRef<Value> qRegs, ValueRange state) {
    Type t = p.elem;
    Value hasEdge =
        l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult, i, degree);
    // (listed, source, partial dot) of the edge; loads only for real edges.
    auto edge = l.b.create<scf::IfOp>(
        l.loc, hasEdge,
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          Value slot = l.b.create<arith::AddIOp>(l.loc, first, i);
          Value u = l.b.create<memref::LoadOp>(l.loc, p.g.inSrc, slot);
          Value listed = l.b.create<arith::ConstantIntOp>(l.loc, 1, 1);
          if (p.mask) {
            Value e = l.b.create<memref::LoadOp>(l.loc, p.g.inEid, slot);
            listed = l.b.create<arith::CmpIOp>(
                l.loc, arith::CmpIPredicate::ne,
                l.b.create<memref::LoadOp>(l.loc, p.mask, e),
                l.b.create<arith::ConstantIntOp>(l.loc, 0, 8));
          }
          Value partial = l.floatConst(t, 0.0);
          for (auto [j, qj] : llvm::enumerate(qRegs))
            partial = l.b.create<math::FmaOp>(
                l.loc, qj, loadMasked(p.k.memref, u, j, shape.d), partial);
          l.b.create<scf::YieldOp>(l.loc, ValueRange{listed, u, partial});
        },
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          l.b.create<scf::YieldOp>(
              l.loc, ValueRange{l.b.create<arith::ConstantIntOp>(l.loc, 0, 1),
                                l.idx(0), l.floatConst(t, 0.0)});
        });
    Value listed = edge.getResult(0), u = edge.getResult(1);
    Value score = attentionScore(l, p, groupSum(edge.getResult(2)));
    auto update = l.b.create<scf::IfOp>(
        l.loc, listed,
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          l.b.create<scf::YieldOp>(l.loc, accumulate(u, score, state));
        },
        [&](OpBuilder &b, Location) { b.create<scf::YieldOp>(l.loc, state); });
    return update.getResults();
  }

  /// The softmax state after edge (u -> v) with the given score.
  SmallVector<Value> accumulate(Value u, Value score, ValueRange state) {
    SoftmaxStep step = softmaxStep(l, p, state[1], score);
    Value z = state[0];
    SmallVector<Value> acc(state.drop_front(2));
    if (step.rescale) {
      z = l.b.create<arith::MulFOp>(l.loc, z, step.rescale);
      for (Value &a : acc)
        a = l.b.create<arith::MulFOp>(l.loc, a, step.rescale);
    }
    z = l.b.create<arith::AddFOp>(l.loc, z, step.weight);
    for (auto [j, a] : llvm::enumerate(acc))
      a = l.b.create<math::FmaOp>(l.loc, step.weight,
                                  loadClamped(p.val.memref, u, j, shape.dv), a);
    SmallVector<Value> next = {z, step.max};
    llvm::append_range(next, acc);
    return next;
  }

  /// Writes this lane's part of the output row (and z).
  void store(ValueRange state) {
    l.guarded(valid, [&] {
      Value z = state[0];
      Value scale = p.zOut ? Value() : inverseSum(l, z);
      for (int64_t j = 0; j < shape.perLaneDv(); ++j) {
        Value c = column(j);
        Value x = state[2 + j];
        if (scale)
          x = l.b.create<arith::MulFOp>(l.loc, x, scale);
        l.guarded(below(c, shape.dv), [&] {
          l.b.create<memref::StoreOp>(l.loc, x, p.out, at(v, c));
        });
      }
      if (p.zOut)
        l.guarded(below(lane, 1), [&] {
          l.b.create<memref::StoreOp>(l.loc, z, p.zOut, at(v, l.idx(0)));
        });
    });
  }

  Value column(int64_t j) {
    return l.b.create<arith::AddIOp>(l.loc, lane, l.idx(j * shape.lanes));
  }

  Value below(Value c, int64_t bound) {
    return l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult, c,
                                     l.idx(bound));
  }

  SmallVector<Value> at(Value row, Value c) {
    SmallVector<Value> index = {row};
    if (head)
      index.push_back(head);
    index.push_back(c);
    return index;
  }

  /// Element j of this lane's slice of a row; the last element stands in for
  /// columns past the end (only lanes beyond a row's size read it).
  Value loadClamped(Value memref, Value row, int64_t j, int64_t size) {
    Value c = l.b.create<arith::MinUIOp>(l.loc, column(j), l.idx(size - 1));
    return l.b.create<memref::LoadOp>(l.loc, memref, at(row, c));
  }

  /// As loadClamped, but 0 past the end.
  Value loadMasked(Value memref, Value row, int64_t j, int64_t size) {
    Value x = loadClamped(memref, row, j, size);
    return l.b.create<arith::SelectOp>(l.loc, below(column(j), size), x,
                                       l.floatConst(p.elem, 0.0));
  }

  Value shuffleXor(Value x, int64_t offset) {
    auto i32 = [&](int64_t c) {
      return l.b.create<arith::ConstantIntOp>(l.loc, c, 32);
    };
    return l.b
        .create<gpu::ShuffleOp>(l.loc, x, i32(offset), i32(kWarp),
                                gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  /// The sum of `x` over the group's lanes, in every lane: offsets below
  /// the group size stay within the (aligned) group.
  Value groupSum(Value x) {
    for (int64_t offset = shape.lanes / 2; offset > 0; offset /= 2)
      x = l.b.create<arith::AddFOp>(l.loc, x, shuffleXor(x, offset));
    return x;
  }

  /// The maximum of `n` over the warp, in every lane.
  Value warpMax(Value n) {
    if (shape.lanes == kWarp)
      return n; // one group per warp
    Value x = l.b.create<arith::IndexCastUIOp>(l.loc, l.b.getI32Type(), n);
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2)
      x = l.b.create<arith::MaxUIOp>(l.loc, x, shuffleXor(x, offset));
    return l.b.create<arith::IndexCastUIOp>(l.loc, l.b.getIndexType(), x);
  }

  Lowering &l;
  const AttentionPlan &p;
  const KernelShape &shape;
  Value valid, v, head, lane;
};
} // namespace

LogicalResult loops::lowerFusedAttentionToGPU(FusedAttentionOp op) {
  std::optional<KernelShape> shape = kernelShape(op);
  if (!shape)
    return lowerFusedAttentionToLoops(op);
  Lowering l(op);
  FailureOr<AttentionPlan> p = planAttention(l, op);
  if (failed(p))
    return failure();
  Value numHeads = p->heads.empty() ? l.idx(1) : p->heads.front();
  Value groups = l.b.create<arith::MulIOp>(l.loc, p->g.numDst, numHeads);
  int64_t groupsPerBlock = kBlockThreads / shape->lanes;
  // A launch needs at least one block.
  Value nonEmpty = l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ugt,
                                             groups, l.idx(0));
  l.guarded(l.b.create<arith::AndIOp>(l.loc, p->inputsOk, nonEmpty), [&] {
    Value blocks =
        l.b.create<arith::CeilDivUIOp>(l.loc, groups, l.idx(groupsPerBlock));
    Value one = l.idx(1);
    auto launch = l.b.create<gpu::LaunchOp>(l.loc, blocks, one, one,
                                            l.idx(kBlockThreads), one, one);
    OpBuilder::InsertionGuard guard(l.b);
    l.b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value group = l.b.create<arith::AddIOp>(
        l.loc,
        l.b.create<arith::MulIOp>(l.loc, launch.getBlockIds().x,
                                  l.idx(groupsPerBlock)),
        l.b.create<arith::DivUIOp>(l.loc, tid, l.idx(shape->lanes)));
    Value lane = l.b.create<arith::RemUIOp>(l.loc, tid, l.idx(shape->lanes));
    // Groups past the end run the warp's loop without edges (see GroupBody).
    Value valid = l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult,
                                            group, groups);
    Value safeGroup =
        l.b.create<arith::SelectOp>(l.loc, valid, group, l.idx(0));
    Value v = l.b.create<arith::DivUIOp>(l.loc, safeGroup, numHeads);
    Value head = p->heads.empty()
                     ? Value()
                     : l.b.create<arith::RemUIOp>(l.loc, safeGroup, numHeads);
    GroupBody(l, *p, *shape, valid, v, head, lane).build();
    l.b.create<gpu::TerminatorOp>(l.loc);
  });
  return l.replaceWithBuffers(op, p->buffers());
}
