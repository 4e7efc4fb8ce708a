//===- CudaTest.cpp - gnnc's CUDA runtime with and without a device -------===//
//
// Part of gnnc. Without a driver, every entry point reports instead of
// crashing; with a device, unified memory round-trips and modules are loaded
// once per binary.
//
//===----------------------------------------------------------------------===//

#include "gnnc/cuda.h"
#include "gnnc/errors.h"
#include "gnnc/runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {
/// The context of the program the dense products run for.
gnn_rt_context *program() {
  static gnn_rt_context *context = gnn_rt_context_create();
  return context;
}

/// The program's error (sizes that do not fit), else the runtime's own (a
/// failed driver or cuBLAS call).
std::string takeError() {
  char message[512];
  if (gnn_rt_context_take_error(program(), message, sizeof(message)) ||
      gnn_rt_take_error(message, sizeof(message)))
    return message;
  return "";
}

bool haveDevice() { return gnn_cuda_init(nullptr, 0) != 0; }

TEST(CudaRuntime, InitExplainsAMissingDevice) {
  char why[256] = "";
  if (gnn_cuda_init(why, sizeof(why)))
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(std::string(why).find("CUDA"), std::string::npos) << why;
  // A short buffer gets a truncated, terminated reason.
  char tiny[8];
  EXPECT_EQ(gnn_cuda_init(tiny, sizeof(tiny)), 0);
  EXPECT_EQ(std::strlen(tiny), sizeof(tiny) - 1);
}

TEST(CudaRuntime, CallsWithoutADeviceReport) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  (void)takeError();
  EXPECT_EQ(gnn_cuda_alloc(64), nullptr);
  EXPECT_NE(takeError().find("CUDA"), std::string::npos);
  EXPECT_EQ(gnn_cuda_module_load(nullptr, 0), nullptr);
  EXPECT_NE(takeError(), "");
  EXPECT_EQ(gnn_cuda_module_get_function(nullptr, "k"), nullptr);
  gnn_cuda_launch_kernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr,
                         nullptr, 0);
  EXPECT_NE(takeError(), "");
  EXPECT_EQ(gnn_cuda_stream_create(), nullptr);
  EXPECT_EQ(gnn_cuda_synchronize(), 0);
  int major = 0, minor = 0;
  EXPECT_EQ(gnn_cuda_compute_capability(&major, &minor), 0);
  gnn_cuda_free(nullptr); // no-op, no report
  gnn_memref1d_i8 block;
  std::memset(&block, 0xff, sizeof(block));
  _mlir_ciface_gnn_cuda_alloc_device(&block, 64);
  EXPECT_EQ(block.allocated, nullptr);
  EXPECT_EQ(block.aligned, nullptr);
  EXPECT_EQ(block.size, 0);
  EXPECT_NE(takeError().find("CUDA"), std::string::npos);
  (void)takeError();
  // Nothing was launched: nothing to wait for, nothing reported.
  gnn_cuda_wait_for_launches();
  EXPECT_EQ(takeError(), "");
  // Asked of every argument: an answer without a report.
  int local = 0;
  EXPECT_EQ(gnn_cuda_is_unified(&local), 0);
  EXPECT_EQ(gnn_cuda_is_unified(nullptr), 0);
  EXPECT_EQ(takeError(), "");
}

TEST(CudaRuntime, UnifiedMemoryIsRecognized) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  (void)takeError();
  void *unified = gnn_cuda_alloc(1 << 20);
  ASSERT_NE(unified, nullptr);
  EXPECT_EQ(gnn_cuda_is_unified(unified), 1);
  EXPECT_EQ(gnn_cuda_is_unified(static_cast<char *>(unified) + 4096), 1);
  std::vector<char> host(64);
  EXPECT_EQ(gnn_cuda_is_unified(host.data()), 0);
  EXPECT_EQ(gnn_cuda_is_unified(nullptr), 0);
  gnn_cuda_free(unified);
  EXPECT_EQ(takeError(), "");
}

/// A row-major [rows, cols] descriptor of `data`.
gnn_memref2d_f32 matrix(float *data, int64_t rows, int64_t cols) {
  return {data, data, 0, {rows, cols}, {cols, 1}};
}

TEST(CudaRuntime, LinearChecksSizesFirst) {
  (void)takeError();
  float x[6] = {}, w[6] = {}, y[4] = {};
  gnn_memref2d_f32 input = matrix(x, 2, 3), weight = matrix(w, 3, 2),
                   out = matrix(y, 2, 2);
  gnn_cuda_linear_nobias(program(), &input, &weight, &out);
  EXPECT_NE(takeError().find("per-row dimension"), std::string::npos);
}

TEST(CudaRuntime, LinearWithoutADeviceReports) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  (void)takeError();
  float x[6] = {}, w[6] = {}, y[4] = {};
  gnn_memref2d_f32 input = matrix(x, 2, 3), weight = matrix(w, 2, 3),
                   out = matrix(y, 2, 2);
  gnn_cuda_linear_nobias(program(), &input, &weight, &out);
  EXPECT_NE(takeError(), "");
}

TEST(CudaRuntime, LinearMatchesTheCPU) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 37, in = 19, outs = 23;
  auto alloc = [](int64_t n) {
    return static_cast<float *>(gnn_cuda_alloc(n * sizeof(float)));
  };
  float *x = alloc(rows * in), *w = alloc(outs * in), *b = alloc(outs),
        *y = alloc(rows * outs);
  ASSERT_TRUE(x && w && b && y) << takeError();
  for (int64_t i = 0; i < rows * in; ++i)
    x[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (int64_t i = 0; i < outs * in; ++i)
    w[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  for (int64_t i = 0; i < outs; ++i)
    b[i] = float(i) / 10.0f;
  gnn_memref2d_f32 input = matrix(x, rows, in), weight = matrix(w, outs, in),
                   out = matrix(y, rows, outs);
  gnn_memref1d_f32 bias = {b, b, 0, {outs}, {1}};
  gnn_cuda_linear(program(), &input, &weight, &bias, &out);
  ASSERT_EQ(takeError(), "");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outs; ++o) {
      double want = b[o];
      for (int64_t i = 0; i < in; ++i)
        want += double(x[r * in + i]) * w[o * in + i];
      EXPECT_NEAR(y[r * outs + o], want, 1e-4) << r << ", " << o;
    }
  for (float *p : {x, w, b, y})
    gnn_cuda_free(p);
}

TEST(CudaRuntime, GemmChecksSizesFirst) {
  (void)takeError();
  float a[6] = {}, b[6] = {}, c[4] = {};
  // op(a) is [2, 3] and b [2, 3]: the inner sizes differ.
  gnn_memref2d_f32 x = matrix(a, 2, 3), y = matrix(b, 2, 3),
                   z = matrix(c, 2, 2);
  gnn_cuda_gemm(program(), &x, &y, &z, 0, 1.0f, 0.0f);
  EXPECT_NE(takeError().find("per-row dimension"), std::string::npos);
  // a^T is [3, 2] but c has 2 rows.
  gnn_cuda_gemm_at(program(), &x, &y, &z, 1.0f, 0.0f);
  EXPECT_NE(takeError(), "");
}

/// c = alpha * op(a) @ op(b) + beta * c on cuBLAS for every transposition,
/// against a double-precision loop; also an empty sum (k = 0), which scales
/// c by beta.
TEST(CudaRuntime, GemmMatchesALoop) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  const int64_t m = 33, n = 21, k = 17;
  auto alloc = [](int64_t count) {
    return static_cast<float *>(gnn_cuda_alloc(count * sizeof(float)));
  };
  float *a = alloc(m * k), *b = alloc(k * n), *c = alloc(m * n);
  ASSERT_TRUE(a && b && c) << takeError();
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  for (int transpose = 0; transpose < 4; ++transpose) {
    bool ta = transpose & GNN_GEMM_TRANSPOSE_A,
         tb = transpose & GNN_GEMM_TRANSPOSE_B;
    // The same data read as [k, m] / [n, k] when transposed.
    gnn_memref2d_f32 x = ta ? matrix(a, k, m) : matrix(a, m, k),
                     y = tb ? matrix(b, n, k) : matrix(b, k, n),
                     z = matrix(c, m, n);
    std::vector<double> before(m * n);
    for (int64_t i = 0; i < m * n; ++i)
      before[i] = c[i] = float(i % 5) - 2.0f;
    const float alpha = 0.75f, beta = transpose == 2 ? 0.0f : -0.5f;
    if (ta && !tb)
      gnn_cuda_gemm_at(program(), &x, &y, &z, alpha, beta);
    else
      gnn_cuda_gemm(program(), &x, &y, &z, transpose, alpha, beta);
    ASSERT_EQ(takeError(), "");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += double(ta ? a[l * m + i] : a[i * k + l]) *
                 (tb ? b[j * k + l] : b[l * n + j]);
        double want = alpha * sum + beta * before[i * n + j];
        EXPECT_NEAR(c[i * n + j], want, 1e-4)
            << "transpose " << transpose << " at " << i << ", " << j;
      }
  }
  gnn_memref2d_f32 x = matrix(a, m, 0), y = matrix(b, 0, n),
                   z = matrix(c, m, n);
  for (int64_t i = 0; i < m * n; ++i)
    c[i] = 2.0f;
  gnn_cuda_gemm(program(), &x, &y, &z, 0, 1.0f, 0.5f);
  ASSERT_EQ(takeError(), "");
  for (int64_t i = 0; i < m * n; ++i)
    EXPECT_EQ(c[i], 1.0f) << i;
  for (float *p : {a, b, c})
    gnn_cuda_free(p);
}

/// A block of device memory as compiled code gets it (a memref<?xi8>).
float *deviceFloats(int64_t count) {
  gnn_memref1d_i8 block;
  _mlir_ciface_gnn_cuda_alloc_device(&block, count * int64_t(sizeof(float)));
  return reinterpret_cast<float *>(block.aligned);
}

TEST(CudaRuntime, DeviceBlocksAreTheDevicesAndKeptForReuse) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  gnn_memref1d_i8 block;
  _mlir_ciface_gnn_cuda_alloc_device(&block, 3 << 20);
  ASSERT_NE(block.aligned, nullptr) << takeError();
  EXPECT_EQ(block.allocated, block.aligned);
  EXPECT_EQ(block.offset, 0);
  EXPECT_EQ(block.size, 3 << 20);
  EXPECT_EQ(block.stride, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.aligned) % 256, 0u);
  // Not unified: the host's fallbacks refuse it rather than touch it.
  EXPECT_EQ(gnn_cuda_is_unified(block.aligned), 0);
  EXPECT_GE(gnn_cuda_peak_memory_bytes(), uint64_t(3) << 20);
  // The driver's copies reach it.
  std::vector<int8_t> host(3 << 20), back(3 << 20, 0);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = int8_t(i * 7);
  EXPECT_EQ(gnn_cuda_copy(block.aligned, host.data(), host.size()), 1);
  EXPECT_EQ(gnn_cuda_copy(back.data(), block.aligned, back.size()), 1);
  EXPECT_EQ(back, host);
  uint64_t before = gnn_cuda_cached_memory_bytes();
  gnn_cuda_free(block.allocated);
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), before + (3 << 20));
  // The same size class: the kept device block again, not a unified one.
  gnn_memref1d_i8 again;
  _mlir_ciface_gnn_cuda_alloc_device(&again, (3 << 20) - 100);
  EXPECT_EQ(again.aligned, block.aligned);
  EXPECT_EQ(gnn_cuda_cached_memory_bytes(), before);
  void *unified = gnn_cuda_alloc((3 << 20) - 100);
  EXPECT_NE(unified, static_cast<void *>(block.aligned));
  gnn_cuda_free(unified);
  gnn_cuda_free(again.allocated);
  // Empty buffers get a block too; a negative size is refused.
  _mlir_ciface_gnn_cuda_alloc_device(&again, 0);
  EXPECT_NE(again.aligned, nullptr);
  gnn_cuda_free(again.allocated);
  EXPECT_EQ(takeError(), "");
  _mlir_ciface_gnn_cuda_alloc_device(&again, -1);
  EXPECT_EQ(again.aligned, nullptr);
  EXPECT_NE(takeError().find("negative size"), std::string::npos);
}

TEST(CudaRuntime, HostBlocksAreTheHostsAndKeptForReuse) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  gnn_memref1d_i8 block;
  _mlir_ciface_gnn_cuda_alloc_host(&block, 1000);
  ASSERT_NE(block.aligned, nullptr) << takeError();
  EXPECT_EQ(block.size, 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block.aligned) % 256, 0u);
  EXPECT_EQ(gnn_cuda_is_unified(block.aligned), 0);
  // The host's own memory: written and read in place, no fault.
  std::memset(block.aligned, 7, 1000);
  EXPECT_EQ(block.aligned[999], 7);
  uint64_t before = gnn_cuda_cached_memory_bytes();
  gnn_cuda_free(block.allocated);
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), before + 1000);
  gnn_memref1d_i8 again;
  _mlir_ciface_gnn_cuda_alloc_host(&again, 900);
  EXPECT_EQ(again.aligned, block.aligned);
  gnn_cuda_free(again.allocated);
  EXPECT_EQ(takeError(), "");
}

/// A 1-D i64 memref over `count` elements at `data`.
gnn_memref1d_i64 i64Memref(int64_t *data, int64_t count) {
  return {data, data, 0, count, 1};
}

TEST(CudaRuntime, BlocksFreedInFlightAreReusedInStreamOrder) {
  // While this thread's queued work may still run: a device block it frees
  // is reused by its own later work (queued behind), not by other threads
  // before it waits; a host block (kernels cannot touch one) is reused at
  // once, unless a pending check reads it; a unified one waits for the wait.
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  constexpr int64_t kBytes = 1 << 20;
  std::vector<float> source(1024, 1.0f);
  auto *target = static_cast<float *>(gnn_cuda_alloc(source.size() * 4));
  ASSERT_NE(target, nullptr) << takeError();
  auto queueWork = [&] {
    ASSERT_EQ(gnn_cuda_copy_queued(target, source.data(), source.size() * 4), 1)
        << takeError();
  };
  auto allocDevice = [](int64_t bytes) {
    gnn_memref1d_i8 b;
    _mlir_ciface_gnn_cuda_alloc_device(&b, bytes);
    return b.aligned;
  };
  auto allocHost = [](int64_t bytes) {
    gnn_memref1d_i8 b;
    _mlir_ciface_gnn_cuda_alloc_host(&b, bytes);
    return b.aligned;
  };
  // Whether another thread, asking for `blocks` blocks of the size, gets
  // `wanted` (the pool keeps others of the same class).
  auto otherThreadGets = [](auto alloc, void *wanted, int blocks = 2) {
    bool got = false;
    std::thread([&] {
      std::vector<int8_t *> taken;
      for (int i = 0; i < blocks; ++i)
        taken.push_back(alloc(kBytes));
      for (int8_t *b : taken) {
        got |= b == wanted;
        gnn_cuda_free(b);
      }
    }).join();
    return got;
  };

  queueWork();
  int8_t *device = allocDevice(kBytes);
  ASSERT_NE(device, nullptr) << takeError();
  gnn_cuda_free(device);
  EXPECT_FALSE(otherThreadGets(allocDevice, device));
  EXPECT_EQ(allocDevice(kBytes - 100), device);
  gnn_cuda_free(device);

  int8_t *host = allocHost(kBytes);
  ASSERT_NE(host, nullptr) << takeError();
  gnn_cuda_free(host);
  EXPECT_TRUE(otherThreadGets(allocHost, host, 1));

  void *unified = gnn_cuda_alloc(kBytes);
  ASSERT_NE(unified, nullptr) << takeError();
  gnn_cuda_free(unified);
  void *meanwhile = gnn_cuda_alloc(kBytes);
  EXPECT_NE(meanwhile, unified);

  // After the wait every freed block is the pool's again, for any thread:
  // the device block and the unified one.
  uint64_t keptBefore = gnn_cuda_cached_memory_bytes();
  gnn_cuda_wait_for_launches();
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), keptBefore + 2 * kBytes);
  void *later = gnn_cuda_alloc(kBytes);
  EXPECT_EQ(later, unified);

  // A host block a pending check reads stays out of reach until the wait.
  auto *slot = static_cast<int64_t *>(gnn_cuda_alloc(sizeof(int64_t)));
  ASSERT_NE(slot, nullptr) << takeError();
  *slot = GNN_RT_NO_ENTRY;
  queueWork();
  auto *ids = reinterpret_cast<int64_t *>(allocHost(kBytes));
  ASSERT_NE(ids, nullptr) << takeError();
  ids[0] = 0;
  gnn_memref1d_i64 slotRef = i64Memref(slot, 1), idsRef = i64Memref(ids, 1);
  _mlir_ciface_gnn_cuda_check_bad_id_queued(program(), &slotRef, &idsRef, 10);
  gnn_cuda_free(ids);
  EXPECT_FALSE(otherThreadGets(allocHost, ids));

  keptBefore = gnn_cuda_cached_memory_bytes();
  gnn_cuda_wait_for_launches();
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), keptBefore + kBytes);
  EXPECT_EQ(takeError(), "");
  for (void *b : {later, meanwhile, static_cast<void *>(slot),
                  static_cast<void *>(target)})
    gnn_cuda_free(b);
}

TEST(CudaRuntime, QueuedChecksReportAtTheNextWait) {
  // A check of what the kernels found reports at the thread's next wait,
  // after them (deferred: no host function stalls the stream); with no
  // work in flight, at once.
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  auto *slot = static_cast<int64_t *>(gnn_cuda_alloc(sizeof(int64_t)));
  ASSERT_NE(slot, nullptr) << takeError();
  *slot = 0; // entry 0 is bad
  int64_t ids[] = {12};
  gnn_memref1d_i64 slotRef = i64Memref(slot, 1), idsRef = i64Memref(ids, 1);
  float value = 1.0f;
  auto *target = static_cast<float *>(gnn_cuda_alloc(sizeof(float)));
  ASSERT_EQ(gnn_cuda_copy_queued(target, &value, sizeof(float)), 1);
  _mlir_ciface_gnn_cuda_check_bad_id_queued(program(), &slotRef, &idsRef, 10);
  EXPECT_EQ(takeError(), "");
  gnn_cuda_wait_for_launches();
  EXPECT_NE(takeError().find("12"), std::string::npos);
  _mlir_ciface_gnn_cuda_check_bad_id_queued(program(), &slotRef, &idsRef, 10);
  EXPECT_NE(takeError().find("12"), std::string::npos);
  gnn_cuda_free(target);
  gnn_cuda_free(slot);
}

TEST(CudaRuntime, ProductsOnDeviceMemory) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  const int64_t m = 5, n = 3, k = 4;
  float *a = deviceFloats(m * k), *b = deviceFloats(k * n),
        *c = deviceFloats(m * n);
  ASSERT_TRUE(a && b && c) << takeError();
  std::vector<float> ha(m * k), hb(k * n), hc(m * n);
  for (int64_t i = 0; i < m * k; ++i)
    ha[i] = float(i % 3) - 1.0f;
  for (int64_t i = 0; i < k * n; ++i)
    hb[i] = float(i % 5) * 0.25f;
  ASSERT_EQ(gnn_cuda_copy(a, ha.data(), ha.size() * sizeof(float)), 1);
  ASSERT_EQ(gnn_cuda_copy(b, hb.data(), hb.size() * sizeof(float)), 1);
  gnn_memref2d_f32 x = matrix(a, m, k), y = matrix(b, k, n),
                   z = matrix(c, m, n);
  gnn_cuda_gemm(program(), &x, &y, &z, 0, 1.0f, 0.0f);
  ASSERT_EQ(takeError(), "");
  ASSERT_EQ(gnn_cuda_copy(hc.data(), c, hc.size() * sizeof(float)), 1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t l = 0; l < k; ++l)
        want += ha[i * k + l] * hb[l * n + j];
      EXPECT_NEAR(hc[i * n + j], want, 1e-5) << i << ", " << j;
    }
  // An empty sum scales c by beta on the device (the host cannot).
  std::vector<float> twos(m * n, 2.0f);
  ASSERT_EQ(gnn_cuda_copy(c, twos.data(), twos.size() * sizeof(float)), 1);
  gnn_memref2d_f32 empty = matrix(a, m, 0), none = matrix(b, 0, n);
  gnn_cuda_gemm(program(), &empty, &none, &z, 0, 1.0f, 0.5f);
  ASSERT_EQ(takeError(), "");
  ASSERT_EQ(gnn_cuda_copy(hc.data(), c, hc.size() * sizeof(float)), 1);
  for (float v : hc)
    EXPECT_EQ(v, 1.0f);
  // A layout cuBLAS cannot take would run on the host: refused, reported.
  gnn_memref2d_f32 strided = matrix(a, m, 2);
  strided.strides[1] = 2;
  gnn_memref2d_f32 narrow = matrix(b, 2, n);
  gnn_cuda_gemm(program(), &strided, &narrow, &z, 0, 1.0f, 0.0f);
  EXPECT_NE(takeError().find("device memory"), std::string::npos);
  for (float *p : {a, b, c})
    gnn_cuda_free(p);
}

TEST(CudaRuntime, AlignmentBeyondManagedMemoryIsRefused) {
  (void)takeError();
  EXPECT_EQ(gnn_cuda_aligned_alloc(4096, 16), nullptr);
  EXPECT_NE(takeError(), "");
}

TEST(CudaRuntime, UnifiedMemoryRoundTrips) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  auto *data = static_cast<float *>(gnn_cuda_alloc(1024 * sizeof(float)));
  ASSERT_NE(data, nullptr) << takeError();
  for (int i = 0; i < 1024; ++i)
    data[i] = float(i);
  EXPECT_EQ(gnn_cuda_synchronize(), 1);
  EXPECT_EQ(data[1023], 1023.0f);
  gnn_cuda_free(data);
  EXPECT_NE(gnn_cuda_alloc(0), nullptr); // empty buffers get an address
  EXPECT_EQ(takeError(), "");
  int major = 0, minor = 0;
  EXPECT_EQ(gnn_cuda_compute_capability(&major, &minor), 1);
  EXPECT_GE(major, 3);
}

TEST(CudaRuntime, FreedUnifiedBlocksAreReused) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  void *a = gnn_cuda_alloc(3 << 20);
  ASSERT_NE(a, nullptr) << takeError();
  uint64_t before = gnn_cuda_cached_memory_bytes();
  gnn_cuda_free(a);
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), before + (3 << 20));
  // The same class: the kept block, still unified, still writable.
  auto *b = static_cast<float *>(gnn_cuda_alloc((3 << 20) - 100));
  ASSERT_NE(b, nullptr) << takeError();
  EXPECT_EQ(gnn_cuda_cached_memory_bytes(), before);
  EXPECT_EQ(gnn_cuda_is_unified(b), 1);
  b[0] = 1.0f;
  EXPECT_EQ(gnn_cuda_synchronize(), 1);
  gnn_cuda_free(b);
  EXPECT_EQ(takeError(), "");
}

TEST(CudaRuntime, PeakMemoryCountsHeldBlocks) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  // A block larger than any earlier test's: it comes from the driver, and
  // the peak is at least what was held then.
  uint64_t before = gnn_cuda_peak_memory_bytes();
  void *a = gnn_cuda_alloc(64 << 20);
  ASSERT_NE(a, nullptr) << takeError();
  uint64_t held = gnn_cuda_peak_memory_bytes();
  EXPECT_GE(held, uint64_t(64) << 20);
  EXPECT_GE(held, before);
  gnn_cuda_free(a);
  // Freeing never lowers the peak.
  EXPECT_EQ(gnn_cuda_peak_memory_bytes(), held);
  EXPECT_EQ(takeError(), "");
}

TEST(CudaRuntime, MoreThanTheDeviceHasFreeIsRefused) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  // A petabyte of managed memory: refused up front, not oversubscribed.
  uint64_t peak = gnn_cuda_peak_memory_bytes();
  EXPECT_EQ(gnn_cuda_alloc(size_t(1) << 50), nullptr);
  EXPECT_NE(takeError().find("out of device memory: a block of"),
            std::string::npos);
  EXPECT_EQ(gnn_cuda_peak_memory_bytes(), peak);
  // Nothing is left broken: the next request is served.
  void *a = gnn_cuda_alloc(1 << 20);
  EXPECT_NE(a, nullptr);
  gnn_cuda_free(a);
  EXPECT_EQ(takeError(), "");
}

TEST(CudaRuntime, PeakMemoryIsZeroWithoutADevice) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(gnn_cuda_peak_memory_bytes(), 0u);
}

TEST(CudaRuntime, EachInstanceKeepsItsOwnUnifiedBlocks) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  gnn_rt_runtime *other = gnn_rt_runtime_create(nullptr);
  ASSERT_NE(other, nullptr);
  gnn_rt_context *context = gnn_rt_context_create_in(other);
  ASSERT_NE(context, nullptr);
  uint64_t ownBefore = gnn_cuda_cached_memory_bytes();
  gnn_rt_context *previous = gnn_rt_context_bind(context);
  uint64_t otherBefore = gnn_cuda_cached_memory_bytes();
  void *a = gnn_cuda_alloc(3 << 20);
  void *b = gnn_cuda_alloc(5 << 20);
  ASSERT_NE(a, nullptr) << takeError();
  ASSERT_NE(b, nullptr) << takeError();
  gnn_cuda_free(a);
  // Kept by the other instance's pool, not the default one's.
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), otherBefore + (3 << 20));
  gnn_rt_context_bind(previous);
  EXPECT_EQ(gnn_cuda_cached_memory_bytes(), ownBefore);
  // Freed on a thread bound to no instance, a block still goes back to
  // the pool that handed it out.
  gnn_cuda_free(b);
  EXPECT_EQ(gnn_cuda_cached_memory_bytes(), ownBefore);
  previous = gnn_rt_context_bind(context);
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), otherBefore + (8 << 20));
  // A block still live when its instance goes is the default pool's then.
  void *c = gnn_cuda_alloc(2 << 20);
  ASSERT_NE(c, nullptr) << takeError();
  gnn_rt_context_bind(previous);
  gnn_rt_context_destroy(context);
  gnn_rt_runtime_destroy(other);
  gnn_cuda_free(c);
  EXPECT_GE(gnn_cuda_cached_memory_bytes(), ownBefore + (2 << 20));
  EXPECT_EQ(takeError(), "");
}

TEST(CudaRuntime, CopiesMoveDataBothWays) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  std::vector<float> host(4099), back(4099, -1.0f);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) * 0.5f;
  auto *a = static_cast<float *>(gnn_cuda_alloc(host.size() * sizeof(float)));
  auto *b = static_cast<float *>(gnn_cuda_alloc(host.size() * sizeof(float)));
  ASSERT_TRUE(a && b) << takeError();
  size_t bytes = host.size() * sizeof(float);
  EXPECT_EQ(gnn_cuda_copy(a, host.data(), bytes), 1);
  EXPECT_EQ(gnn_cuda_copy(b, a, bytes), 1); // unified to unified
  EXPECT_EQ(gnn_cuda_copy(back.data(), b, bytes), 1);
  EXPECT_EQ(back, host);
  EXPECT_EQ(b[4098], host[4098]); // still readable in place
  EXPECT_EQ(gnn_cuda_copy(back.data(), a, 0), 1);
  EXPECT_EQ(takeError(), "");
  gnn_cuda_free(a);
  gnn_cuda_free(b);
}

TEST(CudaRuntime, CopyWithoutADeviceReports) {
  if (haveDevice())
    GTEST_SKIP() << "a CUDA device is present";
  (void)takeError();
  float x = 0, y = 1;
  EXPECT_EQ(gnn_cuda_copy(&x, &y, sizeof(float)), 0);
  EXPECT_NE(takeError(), "");
}

TEST(CudaRuntime, KernelTimerIsZeroWhenOffOrIdle) {
  (void)takeError();
  gnn_cuda_time_kernels(0);
  EXPECT_EQ(gnn_cuda_take_kernel_ms(), 0.0);
  gnn_cuda_time_kernels(1);
  EXPECT_EQ(gnn_cuda_take_kernel_ms(), 0.0); // nothing launched
  gnn_cuda_time_kernels(0);
  (void)takeError();
}
} // namespace

namespace {
/// x[i] = 2 x[i] + 1 for i < n: a kernel small enough to write as PTX.
constexpr char kTwicePlusOne[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry twice_plus_one(.param .u64 x, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [x];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";
} // namespace

// Launches between waits captured into graphs (gnn_cuda_use_graphs): four
// segments of the same three launches, on buffers that change between
// them, the last over half the elements (another grid: the kept graph
// updated, as a batch of another size is); each wait sees every kernel of
// its segment done, in order. In a thread of its own, whose stream is made
// after graphs are on.
TEST(CudaRuntime, GraphsReplaySegmentsInOrder) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device";
  std::string failure;
  std::thread worker([&] {
    gnn_cuda_use_graphs(1);
    void *module = gnn_cuda_module_load(const_cast<char *>(kTwicePlusOne), 0);
    void *function =
        module ? gnn_cuda_module_get_function(module, "twice_plus_one")
               : nullptr;
    void *stream = gnn_cuda_stream_create();
    if (!function || !stream) {
      failure = "setup: " + takeError();
      return;
    }
    unsigned n = 1000;
    for (int segment = 0; segment < 4; ++segment) {
      auto *x = static_cast<float *>(gnn_cuda_alloc(n * sizeof(float)));
      for (unsigned i = 0; i < n; ++i)
        x[i] = float(i % 7);
      unsigned count = segment == 3 ? n / 2 : n; // another grid last
      void *params[] = {&x, &count};
      for (int launch = 0; launch < 3; ++launch)
        gnn_cuda_launch_kernel(function, (count + 127) / 128, 1, 1, 128, 1, 1,
                               0, stream, params, nullptr, 2);
      gnn_cuda_wait_for_launches();
      for (unsigned i = 0; i < n && failure.empty(); ++i) {
        // ((2v + 1) * 2 + 1) * 2 + 1 = 8v + 7 where launched.
        float expected = i < count ? 8 * float(i % 7) + 7 : float(i % 7);
        if (x[i] != expected)
          failure = "segment " + std::to_string(segment) + " element " +
                    std::to_string(i) + ": " + std::to_string(x[i]);
      }
      gnn_cuda_free(x);
    }
    if (failure.empty())
      failure = takeError();
    gnn_cuda_use_graphs(0);
  });
  worker.join();
  EXPECT_EQ(failure, "");
}
