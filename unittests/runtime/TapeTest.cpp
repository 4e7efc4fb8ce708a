//===- TapeTest.cpp - the runtime's tapes of loop iterations --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/tape.h"
#include "gnnc/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {
/// A memref descriptor of rank R, as compiled code passes it.
template <typename T, int R> struct Descriptor {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};

template <typename T> struct Descriptor<T, 0> {
  T *allocated;
  T *aligned;
  int64_t offset;
};

struct TapeDeleter {
  void operator()(gnn_rt_tape *t) const { gnn_rt_tape_free(t); }
};
using Tape = std::unique_ptr<gnn_rt_tape, TapeDeleter>;

/// The memref<8xi64> descriptor of a popped type's sizes, as compiled
/// programs pass it.
gnn_tape_shape shapeOf(int64_t (&sizes)[GNN_TAPE_MAX_RANK]) {
  return {sizes, sizes, 0, {GNN_TAPE_MAX_RANK}, {1}};
}

TEST(RuntimeTape, PopsReturnDenseCopiesLastPushedFirst) {
  Tape tape(gnn_rt_tape_create(nullptr));
  ASSERT_NE(tape, nullptr);
  std::vector<float> a(12);
  std::iota(a.begin(), a.end(), 1.0f);
  Descriptor<float, 2> da{a.data(), a.data(), 0, {3, 4}, {4, 1}};
  gnn_rt_tape_push(tape.get(), 2, &da, sizeof(float));
  int64_t i = 42;
  Descriptor<int64_t, 0> di{&i, &i, 0};
  gnn_rt_tape_push(tape.get(), 0, &di, sizeof(int64_t));
  EXPECT_EQ(gnn_rt_tape_size(tape.get()), 2);
  EXPECT_EQ(gnn_rt_tape_bytes(tape.get()), 12 * 4 + 8);
  // Later changes of the pushed buffers do not reach the copies.
  a.assign(12, -1.0f);
  i = -1;

  Descriptor<int64_t, 0> pi;
  gnn_rt_tape_pop(&pi, tape.get(), 0, sizeof(int64_t), nullptr);
  EXPECT_EQ(pi.offset, 0);
  EXPECT_EQ(*pi.aligned, 42);
  gnn_rt_free(pi.allocated);
  Descriptor<float, 2> pa;
  gnn_rt_tape_pop(&pa, tape.get(), 2, sizeof(float), nullptr);
  EXPECT_EQ(pa.sizes[0], 3);
  EXPECT_EQ(pa.sizes[1], 4);
  EXPECT_EQ(pa.strides[0], 4);
  EXPECT_EQ(pa.strides[1], 1);
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(pa.aligned[k], float(k + 1));
  gnn_rt_free(pa.allocated);
  EXPECT_EQ(gnn_rt_tape_size(tape.get()), 0);
  EXPECT_EQ(gnn_rt_tape_bytes(tape.get()), 0);
}

TEST(RuntimeTape, StridedViewsAreGatheredRowMajor) {
  Tape tape(gnn_rt_tape_create(nullptr));
  // Rows 1..2, columns 1..3 (step 2 in the last dim) of a 4 x 7 matrix at
  // offset 8.
  std::vector<double> m(28);
  std::iota(m.begin(), m.end(), 0.0);
  Descriptor<double, 2> view{m.data(), m.data(), 8, {2, 3}, {7, 2}};
  gnn_rt_tape_push(tape.get(), 2, &view, sizeof(double));
  // A column (stride 7, inner dim 1) of rank 3 with a size-1 dim.
  Descriptor<double, 3> column{m.data(), m.data(), 3, {4, 1, 1}, {7, 5, 1}};
  gnn_rt_tape_push(tape.get(), 3, &column, sizeof(double));

  Descriptor<double, 3> pc;
  gnn_rt_tape_pop(&pc, tape.get(), 3, sizeof(double), nullptr);
  ASSERT_EQ(pc.sizes[0], 4);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(pc.aligned[r], 3.0 + 7 * r);
  gnn_rt_free(pc.allocated);
  Descriptor<double, 2> pv;
  gnn_rt_tape_pop(&pv, tape.get(), 2, sizeof(double), nullptr);
  std::vector<double> want = {8, 10, 12, 15, 17, 19};
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(pv.aligned[k], want[k]) << k;
  gnn_rt_free(pv.allocated);
}

TEST(RuntimeTape, EmptyBuffersAndLeftoversAreFreed) {
  // Buffers still on the tape are freed with it (leaks show under the
  // sanitizer job).
  Tape tape(gnn_rt_tape_create(nullptr));
  float none = 0;
  Descriptor<float, 2> empty{&none, &none, 0, {0, 128}, {128, 1}};
  gnn_rt_tape_push(tape.get(), 2, &empty, sizeof(float));
  std::vector<int8_t> bytes(1 << 20, 7);
  Descriptor<int8_t, 1> big{bytes.data(), bytes.data(), 0, {1 << 20}, {1}};
  gnn_rt_tape_push(tape.get(), 1, &big, 1);
  gnn_rt_tape_push(tape.get(), 2, &empty, sizeof(float));
  EXPECT_EQ(gnn_rt_tape_bytes(tape.get()), 1 << 20);
  Descriptor<float, 2> popped;
  gnn_rt_tape_pop(&popped, tape.get(), 2, sizeof(float), nullptr);
  EXPECT_EQ(popped.sizes[0], 0);
  EXPECT_EQ(popped.sizes[1], 128);
  gnn_rt_free(popped.allocated);
  EXPECT_EQ(gnn_rt_tape_size(tape.get()), 2);
  gnn_rt_tape_free(nullptr);
}

/// The error reported into `context` since the last call, or "".
std::string takeError(gnn_rt_context *context) {
  char message[256];
  if (!gnn_rt_context_take_error(context, message, sizeof message))
    return "";
  return message;
}

TEST(RuntimeTape, BadPopsAreReportedAndGiveZeros) {
  std::unique_ptr<gnn_rt_context, void (*)(gnn_rt_context *)> context(
      gnn_rt_context_create(), gnn_rt_context_destroy);
  Tape tape(gnn_rt_tape_create(context.get()));
  // Nothing pushed: a static 2 x 3 value comes back as six zeros.
  int64_t sizes2x3[GNN_TAPE_MAX_RANK] = {2, 3};
  gnn_tape_shape static2x3 = shapeOf(sizes2x3);
  Descriptor<float, 2> d;
  gnn_rt_tape_pop(&d, tape.get(), 2, sizeof(float), &static2x3);
  EXPECT_EQ(takeError(context.get()),
            "gnn.tape_pop: the tape is empty (a program pops more values "
            "than it pushed)");
  ASSERT_NE(d.aligned, nullptr);
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(d.aligned[k], 0.0f);
  EXPECT_EQ(d.sizes[0], 2);
  EXPECT_EQ(d.sizes[1], 3);
  EXPECT_EQ(d.strides[0], 3);
  gnn_rt_free(d.allocated);

  // A rank-1 float pushed, a rank-2 one popped: reported, the pushed one
  // stays.
  float x = 1;
  Descriptor<float, 1> one{&x, &x, 0, {1}, {1}};
  gnn_rt_tape_push(tape.get(), 1, &one, sizeof(float));
  gnn_rt_tape_pop(&d, tape.get(), 2, sizeof(float), nullptr);
  EXPECT_EQ(takeError(context.get()),
            "gnn.tape_pop: a value of rank 1 with 4-byte elements was "
            "pushed last, not one of rank 2 with 4-byte elements");
  EXPECT_EQ(d.sizes[0], 0);
  EXPECT_EQ(d.sizes[1], 0);
  gnn_rt_free(d.allocated);
  EXPECT_EQ(gnn_rt_tape_size(tape.get()), 1);
  // The right rank and element, another static size: reported, the
  // pushed one stays.
  int64_t sizes1[GNN_TAPE_MAX_RANK] = {1}, sizes4[GNN_TAPE_MAX_RANK] = {4};
  gnn_tape_shape static1 = shapeOf(sizes1), static4 = shapeOf(sizes4);
  Descriptor<float, 1> four;
  gnn_rt_tape_pop(&four, tape.get(), 1, sizeof(float), &static4);
  EXPECT_EQ(takeError(context.get()),
            "gnn.tape_pop: the value pushed last has size 1 in dimension 0, "
            "the popped type 4");
  EXPECT_EQ(four.sizes[0], 4);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(four.aligned[k], 0.0f);
  gnn_rt_free(four.allocated);
  Descriptor<double, 1> wider;
  gnn_rt_tape_pop(&wider, tape.get(), 1, sizeof(double), nullptr);
  EXPECT_NE(takeError(context.get()), "");
  gnn_rt_free(wider.allocated);
  Descriptor<float, 1> popped;
  gnn_rt_tape_pop(&popped, tape.get(), 1, sizeof(float), &static1);
  EXPECT_EQ(takeError(context.get()), "");
  EXPECT_EQ(popped.aligned[0], 1.0f);
  gnn_rt_free(popped.allocated);

  // A tape that could not be created keeps nothing and pops zeros.
  gnn_rt_tape_push(nullptr, 1, &one, sizeof(float));
  gnn_rt_tape_pop(&popped, nullptr, 1, sizeof(float), &static1);
  EXPECT_EQ(popped.aligned[0], 0.0f);
  gnn_rt_free(popped.allocated);
}
} // namespace

TEST(RuntimeTape, ABudgetStopsTheTapeWithOneReport) {
  std::unique_ptr<gnn_rt_context, void (*)(gnn_rt_context *)> context(
      gnn_rt_context_create(), gnn_rt_context_destroy);
  // The default is half of the machine's memory; a budget set is per
  // context, and 0 restores the default.
  int64_t half = gnn_rt_context_tape_budget(context.get());
  EXPECT_GT(half, int64_t(1) << 20);
  gnn_rt_context_set_tape_budget(context.get(), 4096);
  EXPECT_EQ(gnn_rt_context_tape_budget(context.get()), 4096);
  EXPECT_EQ(gnn_rt_context_tape_budget(nullptr), half);

  Tape tape(gnn_rt_tape_create(context.get()));
  std::vector<float> row(256, 1.0f); // 1 KiB a push
  Descriptor<float, 1> d{row.data(), row.data(), 0, {256}, {1}};
  // The loop filling the tape asks whether it was refused, and stops.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(gnn_rt_tape_refused(tape.get()), i < 4 ? 0 : 1) << i;
    gnn_rt_tape_push(tape.get(), 1, &d, sizeof(float));
  }
  EXPECT_NE(gnn_rt_tape_refused(nullptr), 0);
  // Three pushes and their bookkeeping fit in 4 KiB, the fourth does not;
  // nothing after it is kept either.
  EXPECT_EQ(gnn_rt_tape_size(tape.get()), 3);
  EXPECT_EQ(gnn_rt_tape_bytes(tape.get()), 3 * 1024);
  EXPECT_EQ(takeError(context.get()),
            "the backward of a loop needs more than its budget of 4096 bytes "
            "after keeping 3 values of its iterations; the loop runs too long "
            "to differentiate");
  EXPECT_EQ(takeError(context.get()), "");
  // 0 restores the default.
  gnn_rt_context_set_tape_budget(context.get(), 0);
  EXPECT_EQ(gnn_rt_context_tape_budget(context.get()), half);
}
