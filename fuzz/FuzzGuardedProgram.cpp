//===- FuzzGuardedProgram.cpp - run-time values under libFuzzer -----------===//
//
// Part of gnnc. A program of the ops gnn-guard-runtime-values checks
// (integer divisions of scalars and of vectors, index reads), compiled once
// with parallel loops and once with every memory access checked, runs on
// values decoded from the fuzzer's bytes: divisors that are often 0 or -1,
// dividends that are often the smallest value, indices often just outside
// the tensor or far from it. A valid input must give C++'s exact results,
// an invalid one a runtime error; anything else, or a sanitizer report,
// aborts.
//
//===----------------------------------------------------------------------===//

#include "FuzzPrograms.h"

#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::gnn;

namespace {
constexpr const char *kProgram = R"mlir(
func.func @divide(%a: tensor<?xi64>, %b: tensor<?xi64>) -> tensor<?x6xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?xi64>
  %init = tensor.empty(%n) : tensor<?x6xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<?x6xi64> {
    %x = tensor.extract %a[%i] : tensor<?xi64>
    %y = tensor.extract %b[%i] : tensor<?xi64>
    %q = arith.divsi %x, %y : i64
    %m = arith.remsi %x, %y : i64
    %f = arith.floordivsi %x, %y : i64
    %c = arith.ceildivsi %x, %y : i64
    %u = arith.divui %x, %y : i64
    %v = arith.remui %x, %y : i64
    %row = tensor.from_elements %q, %m, %f, %c, %u, %v : tensor<6xi64>
    %next = tensor.insert_slice %row into %acc[%i, 0] [1, 6] [1, 1] : tensor<6xi64> into tensor<?x6xi64>
    scf.yield %next : tensor<?x6xi64>
  }
  return %r : tensor<?x6xi64>
}

func.func @vdivide(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<4x8xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %pad = arith.constant 0 : i32
  %x = vector.transfer_read %a[%c0], %pad : tensor<8xi32>, vector<8xi32>
  %y = vector.transfer_read %b[%c0], %pad : tensor<8xi32>, vector<8xi32>
  %q = arith.divsi %x, %y : vector<8xi32>
  %m = arith.remsi %x, %y : vector<8xi32>
  %u = arith.divui %x, %y : vector<8xi32>
  %v = arith.remui %x, %y : vector<8xi32>
  %init = tensor.empty() : tensor<4x8xi32>
  %r0 = vector.transfer_write %q, %init[%c0, %c0] : vector<8xi32>, tensor<4x8xi32>
  %r1 = vector.transfer_write %m, %r0[%c1, %c0] : vector<8xi32>, tensor<4x8xi32>
  %r2 = vector.transfer_write %u, %r1[%c2, %c0] : vector<8xi32>, tensor<4x8xi32>
  %r3 = vector.transfer_write %v, %r2[%c3, %c0] : vector<8xi32>, tensor<4x8xi32>
  return %r3 : tensor<4x8xi32>
}

func.func @gather(%x: tensor<?xi64>, %at: tensor<?xindex>) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %at, %c0 : tensor<?xindex>
  %init = tensor.empty(%n) : tensor<?xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<?xi64> {
    %j = tensor.extract %at[%i] : tensor<?xindex>
    %v = tensor.extract %x[%j] : tensor<?xi64>
    %next = tensor.insert %v into %acc[%i] : tensor<?xi64>
    scf.yield %next : tensor<?xi64>
  }
  return %r : tensor<?xi64>
}
)mlir";

std::unique_ptr<MLIRContext> context;
std::unique_ptr<JitProgram> programs[2];

/// A value of T: often 0, -1 or the smallest, else any.
template <typename T> T integer(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
  case 0:
    return 0;
  case 1:
    return -1;
  case 2:
    return std::numeric_limits<T>::min();
  case 3:
    return T(in.ConsumeIntegralInRange<int>(-9, 9));
  default:
    return in.ConsumeIntegral<T>();
  }
}

/// The six results of divide for one pair, as the arith ops define them;
/// false where an op is undefined (the program must fail).
template <typename T>
bool divisions(T x, T y, std::vector<T> &out, bool floorAndCeil) {
  using U = std::make_unsigned_t<T>;
  if (y == 0 || (x == std::numeric_limits<T>::min() && y == -1))
    return false;
  T q = x / y, m = x % y;
  out.push_back(q);
  out.push_back(m);
  if (floorAndCeil) {
    bool inexact = m != 0;
    bool negative = (x < 0) != (y < 0);
    out.push_back(inexact && negative ? q - 1 : q);
    out.push_back(inexact && !negative ? q + 1 : q);
  }
  out.push_back(T(U(x) / U(y)));
  out.push_back(T(U(x) % U(y)));
  return true;
}

/// A vector's eight lanes as an I32 tensor (the I64 inputs are
/// HostTensor::ids).
HostTensor lanesOf(const int32_t (&values)[8]) {
  HostTensor t;
  t.dtype = DType::I32;
  t.shape = {8};
  t.allocate();
  std::memcpy(t.data(), values, sizeof(values));
  return t;
}

/// Runs `entry`: a `valid` input must give `want`, another must fail.
template <typename T>
std::string judge(JitProgram &program, llvm::StringRef entry,
                  std::vector<Argument> args, bool valid,
                  const std::vector<T> &want) {
  auto results = program.run(entry, args);
  if (!valid) {
    if (results)
      return entry.str() + ": an invalid input ran without an error";
    llvm::consumeError(results.takeError());
    return "";
  }
  if (!results)
    return entry.str() +
           ": a valid input failed: " + llvm::toString(results.takeError());
  const HostTensor &r = results->front();
  if (size_t(r.numElements()) != want.size())
    return entry.str() + ": wrong number of results";
  for (size_t i = 0; i < want.size(); ++i)
    if (r.as<T>()[i] != want[i])
      return entry.str() + ": element " + std::to_string(i) + " is " +
             std::to_string(r.as<T>()[i]) + ", expected " +
             std::to_string(want[i]);
  return "";
}

std::string divide(JitProgram &program, FuzzedDataProvider &in) {
  size_t n = in.ConsumeIntegralInRange<size_t>(0, 12);
  std::vector<int64_t> a, b, want;
  bool valid = true;
  for (size_t i = 0; i < n; ++i) {
    a.push_back(integer<int64_t>(in));
    b.push_back(integer<int64_t>(in));
    valid &= divisions<int64_t>(a.back(), b.back(), want, true);
  }
  HostTensor ta = HostTensor::ids(a), tb = HostTensor::ids(b);
  return judge<int64_t>(program, "divide", {{nullptr, &ta}, {nullptr, &tb}},
                        valid, want);
}

std::string vdivide(JitProgram &program, FuzzedDataProvider &in) {
  int32_t a[8], b[8];
  std::vector<int32_t> lanes[8];
  bool valid = true;
  for (int i = 0; i < 8; ++i) {
    a[i] = integer<int32_t>(in);
    b[i] = integer<int32_t>(in);
    valid &= divisions<int32_t>(a[i], b[i], lanes[i], false);
  }
  // Rows: divsi, remsi, divui, remui; a column per lane.
  std::vector<int32_t> want;
  if (valid)
    for (int op = 0; op < 4; ++op)
      for (int i = 0; i < 8; ++i)
        want.push_back(lanes[i][op]);
  HostTensor ta = lanesOf(a), tb = lanesOf(b);
  return judge<int32_t>(program, "vdivide", {{nullptr, &ta}, {nullptr, &tb}},
                        valid, want);
}

std::string gather(JitProgram &program, FuzzedDataProvider &in) {
  int64_t n = in.ConsumeIntegralInRange<int64_t>(0, 9);
  std::vector<int64_t> x, at, want;
  for (int64_t i = 0; i < n; ++i)
    x.push_back(1000 + i);
  size_t m = in.ConsumeIntegralInRange<size_t>(0, 12);
  bool valid = true;
  for (size_t i = 0; i < m; ++i) {
    int64_t j;
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
      j = n + in.ConsumeIntegralInRange<int64_t>(0, 2);
      break;
    case 1:
      j = in.ConsumeIntegral<int64_t>();
      break;
    default:
      j = in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(n, 1) - 1);
    }
    at.push_back(j);
    if (j >= 0 && j < n)
      want.push_back(x[j]);
    else
      valid = false;
  }
  HostTensor tx = HostTensor::ids(x);
  HostTensor tat = HostTensor::ids(at);
  return judge<int64_t>(program, "gather", {{nullptr, &tx}, {nullptr, &tat}},
                        valid, want);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  context = gnnfuzz::makeContext();
  for (bool checked : {false, true})
    programs[checked] = gnnfuzz::compileOrAbort(
        *context, kProgram, {"divide", "vdivide", "gather"}, checked);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (auto &program : programs) {
    // Each program sees the same values.
    FuzzedDataProvider in(data, size);
    int which = in.ConsumeIntegralInRange<int>(0, 2);
    std::string wrong = which == 0   ? divide(*program, in)
                        : which == 1 ? vdivide(*program, in)
                                     : gather(*program, in);
    if (!wrong.empty()) {
      llvm::errs() << "gnn-fuzz-guarded-program: " << wrong << "\n";
      std::abort();
    }
  }
  return 0;
}
