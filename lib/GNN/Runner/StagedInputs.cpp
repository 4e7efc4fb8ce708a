//===- StagedInputs.cpp - inputs placed ahead of a call ------------------===//
//
// Part of gnnc. A GPU program's inputs cross to the device before the call
// that reads them, placed by the device's CallMemory as a call would place
// them (small ones gathered into one block, one copy), on the staging
// thread's stream; the staged arguments then refer to unified memory, which
// a call takes as it is.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "RunnerDetail.h"

#include "gnnc/cuda.h"
#include "gnnc/errors.h"

using namespace mlir::gnn;
using mlir::gnn::detail::error;

StagedInputs::StagedInputs() = default;
StagedInputs::~StagedInputs() = default;

llvm::Expected<std::unique_ptr<StagedInputs>>
JitProgram::stage(llvm::ArrayRef<Argument> inputs) const {
  std::unique_ptr<StagedInputs> staged(new StagedInputs());
  staged->arguments.assign(inputs.begin(), inputs.end());
  for (const Argument &a : inputs)
    if (a.updated || (!a.graph && !a.tensor))
      return error("only graphs and read-only tensors can be staged");
  if (device != Device::CUDA)
    return staged;

  // Allocations come from the program's instance's pool; failures go into
  // this context.
  llvm::Expected<detail::ContextPtr> made = detail::newRunContext(runtime);
  if (!made)
    return made.takeError();
  detail::ContextPtr context = std::move(*made);
  detail::BoundContext bound(context.get());
  char message[512] = "";
  auto failed = [&] {
    return error(llvm::Twine("cannot stage an input on the device: ") +
                 message);
  };
  auto takeError = [&] {
    return gnn_rt_context_take_error(context.get(), message, sizeof(message));
  };

  std::vector<detail::CallMemory::Buffer> buffers;
  for (const Argument &a : inputs) {
    if (a.graph) {
      for (auto [array, n] :
           llvm::zip_equal(detail::graphArrayMembers(*a.graph),
                           detail::graphArrayCounts(*a.graph)))
        buffers.push_back({*array, n * sizeof(int64_t), /*constant=*/false});
    } else if (!a.constant) {
      buffers.push_back({a.tensor->data(), a.tensor->numBytes(), false});
    }
  }
  staged->memory = detail::CallMemory::create(device, *resident);
  std::vector<const void *> placed(buffers.size());
  if (!staged->memory->place(buffers, placed)) {
    (void)takeError();
    return failed();
  }
  // The copies were queued on this thread's stream: the arguments are
  // ready once it has run them (a failed copy is the context's error).
  gnn_cuda_wait_for_launches();
  if (takeError())
    return failed();

  auto at = [&](size_t b) { return const_cast<void *>(placed[b]); };
  size_t b = 0;
  for (Argument &a : staged->arguments) {
    if (a.graph) {
      auto copy = std::make_unique<gnn_graph>(*a.graph);
      for (int64_t **array : detail::graphArrayMembers(*copy))
        *array = static_cast<int64_t *>(at(b++));
      a.graph = staged->graphs.emplace_back(std::move(copy)).get();
    } else if (!a.constant) {
      auto copy = std::make_unique<HostTensor>();
      copy->dtype = a.tensor->dtype;
      copy->shape = a.tensor->shape;
      copy->borrow(at(b++));
      a.tensor = staged->tensors.emplace_back(std::move(copy)).get();
    }
  }
  return staged;
}
