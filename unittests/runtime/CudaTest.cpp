//===- CudaTest.cpp - gnnc's CUDA runtime with and without a device -------===//
//
// Part of gnnc. Without a driver, every entry point reports instead of
// crashing; with a device, unified memory round-trips and modules are loaded
// once per binary.
//
//===----------------------------------------------------------------------===//

#include "gnnc/cuda.h"
#include "gnnc/errors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {
std::string takeError() {
  char message[512];
  return gnn_rt_take_error(message, sizeof(message)) ? message : "";
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
  (void)takeError();
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
} // namespace
