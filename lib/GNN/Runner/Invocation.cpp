//===- Invocation.cpp - a call of a compiled entry -----------------------===//
//
// Part of gnnc. Arguments become the ABI's memref descriptors (placed by
// the device's CallMemory), the call runs with a context of the program's
// runtime instance bound to the calling thread, and results come back as
// host tensors.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "RunnerDetail.h"

#include "gnnc/errors.h"
#include "gnnc/memory.h"
#include "gnnc/runtime.h"

#include <cstring>
#include <deque>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::gnn;
using mlir::gnn::detail::error;

// From libomp, which runs the parallel loops of compiled code.
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_max_threads(void);

namespace {
/// A memref descriptor {allocated, aligned, offset, sizes..., strides...}.
std::vector<int64_t> descriptor(const void *data,
                                const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}
} // namespace

void JitProgram::setThreads(int threads) {
  // "All cores" is OpenMP's own default: OMP_NUM_THREADS where the user set
  // it (a container's CPU quota does not show in the affinity mask that
  // OpenMP counts cores by), the cores this process may run on otherwise.
  // Read before the first call here changes the calling thread's setting.
  static const int allCores = omp_get_max_threads();
  omp_set_num_threads(threads > 0 ? threads : allCores);
}

const EntryPoint *JitProgram::lookup(llvm::StringRef name) const {
  for (const EntryPoint &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

llvm::Expected<std::vector<HostTensor>>
JitProgram::run(llvm::StringRef name, llvm::ArrayRef<Argument> args,
                int threads) {
  const EntryPoint *entry = lookup(name);
  if (!entry)
    return error("the program has no entry '" + name + "'");
  return run(*entry, args, threads);
}

llvm::Expected<std::map<std::string, HostTensor>>
JitProgram::runNamed(llvm::StringRef name, Binder bind, int threads,
                     ResultListener onResult, ResultPlacement keepOnDevice) {
  const EntryPoint *entry = lookup(name);
  if (!entry)
    return error("the program has no entry '" + name + "'");
  std::vector<Argument> args;
  for (auto [i, p] : llvm::enumerate(entry->parameters)) {
    llvm::Expected<Argument> a = bind(p, i);
    if (!a)
      return a.takeError();
    args.push_back(*a);
  }
  llvm::Expected<std::vector<HostTensor>> results =
      run(*entry, args, threads, onResult, keepOnDevice);
  if (!results)
    return results.takeError();
  std::map<std::string, HostTensor> named;
  for (auto [p, t] : llvm::zip_equal(entry->results, *results))
    named[p.name] = std::move(t);
  return named;
}

llvm::Expected<std::vector<HostTensor>>
JitProgram::run(const EntryPoint &entry, llvm::ArrayRef<Argument> args,
                int threads, ResultListener onResult,
                ResultPlacement keepOnDevice) {
  if (auto e = detail::checkArguments(entry, args))
    return std::move(e);
  const std::vector<Parameter> &parameters = entry.parameters;
  const std::vector<Parameter> &results = entry.results;
  // Storage of every argument value, then pointers to each for the packed
  // call: result pointer first, then descriptors and scalars.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<int64_t> scalars;
  descriptors.reserve(args.size() * 6 + 1);
  scalars.reserve(args.size());
  std::vector<void *> pointers;
  pointers.reserve(args.size() * 6 + 1);
  std::vector<void *> packedArgs;
  std::set<const void *> inputBuffers;
  // Writable parameters: the storage the caller handed over, or a private
  // copy; where the program updated them (the argument's buffer).
  std::map<unsigned, HostTensor *> updatedTensors;
  std::map<unsigned, const void *> updatedBuffers;
  std::deque<HostTensor> privateCopies;

  // Updates of writable arguments are not returned.
  size_t resultWords = 0;
  for (const Parameter &r : results)
    if (!r.updates)
      resultWords += 3 + 2 * r.shape.size();
  std::vector<int64_t> resultStorage(std::max<size_t>(resultWords, 1));
  // A function whose results are all updates returns nothing: no result
  // pointer.
  bool returnsResults = llvm::any_of(
      results, [](const Parameter &r) { return !r.updates.has_value(); });
  if (returnsResults) {
    pointers.push_back(resultStorage.data());
    packedArgs.push_back(&pointers.back());
  }
  // This run's errors go into a context of its own (the first argument),
  // bound to this thread while it runs, so that the runtime's own failures
  // (libraries, GPU driver) go there too; buffers come from the instance's
  // pool.
  llvm::Expected<detail::ContextPtr> made = detail::newRunContext(runtime);
  if (!made)
    return made.takeError();
  detail::ContextPtr context = std::move(*made);
  detail::BoundContext bound(context.get());
  gnn_rt_context_set_tape_budget(context.get(), tapeBudget);
  // Announcements of results the entry does not have (a program compiled
  // from other IR than its signature's) are not passed on.
  struct Listener {
    ResultListener onResult;
    size_t results;
  } listener{onResult, results.size()};
  if (onResult)
    gnn_rt_context_set_result_hook(
        context.get(),
        [](void *user, int64_t slot, const void *data, int64_t bytes) {
          auto *l = static_cast<Listener *>(user);
          if (slot >= 0 && size_t(slot) < l->results && bytes >= 0)
            l->onResult(size_t(slot), data, size_t(bytes));
        },
        &listener);
  if (threads == kInstanceThreads) {
    gnn_rt_settings settings;
    gnn_rt_runtime_settings(runtime, &settings);
    threads = settings.threads;
  }
  setThreads(threads);
  void *contextArgument = context.get();
  packedArgs.push_back(&contextArgument);
  char message[512];
  auto takeError = [&] {
    return gnn_rt_context_take_error(context.get(), message, sizeof(message));
  };
  std::unique_ptr<detail::CallMemory> memory =
      detail::CallMemory::create(device, *resident);
  // The arguments in order: a graph's node count as a scalar, every other
  // part a buffer that the device's memory places (all at once, so that a
  // GPU's small inputs cross in one copy).
  struct Slot {
    std::optional<int64_t> scalar;
    std::vector<int64_t> shape;
    std::optional<unsigned> updates; // the writable parameter it holds
  };
  std::vector<Slot> slots;
  std::vector<detail::CallMemory::Buffer> buffers;
  auto addBuffer = [&](const void *data, size_t bytes,
                       std::vector<int64_t> shape, bool constant,
                       std::optional<unsigned> updates = std::nullopt) {
    buffers.push_back({data, bytes, constant});
    slots.push_back({std::nullopt, std::move(shape), updates});
  };
  for (auto [i, p] : llvm::enumerate(parameters)) {
    if (p.isGraph) {
      // The parts in gnn_graph_part order (the graph type conversion's).
      const gnn_graph &g = *args[i].graph;
      slots.push_back({g.num_src, {}, std::nullopt});
      for (auto [array, n] : llvm::zip_equal(detail::graphArrayMembers(g),
                                             detail::graphArrayCounts(g)))
        addBuffer(*array, n * sizeof(int64_t), {n}, /*constant=*/false);
      continue;
    }
    const HostTensor *t = args[i].value();
    if (p.writable)
      t = updatedTensors[i] =
          args[i].updated ? args[i].updated : &privateCopies.emplace_back(*t);
    addBuffer(t->data(), t->numElements() * dtypeSize(t->dtype), t->shape,
              args[i].constant,
              p.writable ? std::optional<unsigned>(i) : std::nullopt);
  }
  std::vector<const void *> placed(buffers.size());
  if (!memory->place(buffers, placed)) {
    (void)takeError();
    return error(llvm::Twine("cannot place an argument on the device: ") +
                 message);
  }
  size_t b = 0;
  for (Slot &slot : slots) {
    if (slot.scalar) {
      scalars.push_back(*slot.scalar);
      packedArgs.push_back(&scalars.back());
      continue;
    }
    const void *at = placed[b++];
    descriptors.push_back(descriptor(at, slot.shape));
    inputBuffers.insert(at);
    pointers.push_back(descriptors.back().data());
    packedArgs.push_back(&pointers.back());
    if (slot.updates)
      updatedBuffers[*slot.updates] = at;
  }

  packed[&entry - entries.data()](packedArgs.data());
  memory->finish();
  bool failedInside = takeError();

  // The update of writable argument i: a view of the storage the caller
  // handed over (a device's update is copied back into it first, unless
  // that storage is the memory it updated), or the private copy.
  auto updatedResult = [&](unsigned i) {
    HostTensor &in = *updatedTensors[i];
    if (!memory->hostReadable() && in.numBytes() > 0 &&
        in.data() != updatedBuffers[i] &&
        !memory->copyToHost(in.data(), updatedBuffers[i], in.numBytes()))
      failedInside |= takeError();
    if (!args[i].updated)
      return std::move(in);
    return in.view();
  };
  std::vector<HostTensor> outputs;
  std::set<void *> released;
  std::vector<void *> copied;
  const int64_t *word = resultStorage.data();
  for (const Parameter &r : results) {
    if (r.updates) {
      outputs.push_back(updatedResult(*r.updates));
      continue;
    }
    size_t rank = r.shape.size();
    auto *allocated = reinterpret_cast<void *>(word[0]);
    auto *aligned = reinterpret_cast<char *>(word[1]);
    int64_t offset = word[2];
    HostTensor t;
    t.dtype = r.dtype;
    t.shape.assign(word + 3, word + 3 + rank);
    const int64_t *strides = word + 3 + rank;
    word += 3 + 2 * rank;
    size_t elem = dtypeSize(r.dtype);
    int64_t count = t.numElements();
    bool rowMajor = true;
    for (int64_t d = int64_t(rank) - 1, stride = 1; d >= 0; --d) {
      rowMajor &= t.shape[d] <= 1 || strides[d] == stride;
      stride *= t.shape[d];
    }
    const char *from = aligned + offset * elem;
    // Buffers the program allocated are ours: a row-major result the host
    // can read is taken over as it is (the first result in a buffer; the
    // runtime's pool gets it back when the tensor goes); others are freed
    // once every result is copied (results may share a buffer). An input
    // handed back is not ours.
    bool owned = allocated && !inputBuffers.count(allocated) &&
                 !released.count(allocated);
    if (owned)
      released.insert(allocated);
    if (owned && rowMajor && memory->hostReadable()) {
      t.adopt(allocated, const_cast<char *>(from), memory->deleter());
      outputs.push_back(std::move(t));
      continue;
    }
    // A row-major result that stays on the device: a copy there.
    if (!memory->hostReadable() && rowMajor && count > 0 && keepOnDevice &&
        keepOnDevice(r)) {
      void *kept = memory->keepOnDevice(from, count * elem);
      if (kept)
        t.adopt(kept, kept, memory->deleter());
      else
        failedInside |= takeError();
      if (owned)
        copied.push_back(allocated);
      outputs.push_back(std::move(t));
      continue;
    }
    t.allocate();
    // Strided results are copied element by element in row order. A device
    // result comes to the host by its copies: a row-major one straight into
    // the tensor, a strided one as all the elements it spans.
    std::vector<char> staged;
    bool onDevice = !memory->hostReadable() && count > 0;
    if (onDevice && !rowMajor) {
      int64_t span = 1;
      for (size_t d = 0; d < rank; ++d)
        span += (t.shape[d] - 1) * strides[d];
      staged.resize(span * elem);
      from = staged.data();
    }
    if (onDevice &&
        !memory->copyToHost(rowMajor ? t.data() : staged.data(),
                            aligned + offset * elem,
                            rowMajor ? count * elem : staged.size()))
      failedInside |= takeError();
    std::vector<int64_t> index(rank, 0);
    if (rowMajor && count > 0 && !onDevice)
      std::memcpy(t.data(), from, count * elem);
    for (int64_t n = 0; !rowMajor && n < count; ++n) {
      int64_t at = 0;
      for (size_t d = 0; d < rank; ++d)
        at += index[d] * strides[d];
      std::memcpy(static_cast<char *>(t.data()) + n * elem, from + at * elem,
                  elem);
      for (int d = int(rank) - 1; d >= 0; --d) {
        if (++index[d] < t.shape[d])
          break;
        index[d] = 0;
      }
    }
    if (owned)
      copied.push_back(allocated);
    outputs.push_back(std::move(t));
  }
  for (void *buffer : copied)
    memory->deleter()(buffer);
  if (failedInside)
    return error(llvm::Twine(message));
  return outputs;
}
