//===- JitRunner.h - compile and run gnn functions --------------*- C++ -*-===//
//
// Part of gnnc. Lowers a gnn function through gnn-lower-to-cpu (or
// gnn-lower-to-nvvm for a GPU), JIT-compiles it and calls it on host
// tensors and runtime graphs, after checking every argument against the
// function's signature and the graphs it uses.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_JITRUNNER_H
#define GNN_RUNNER_JITRUNNER_H

#include "GNN/Support/HostTensor.h"
#include "gnnc/graph.h"
#include "gnnc/runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace gnn {
namespace detail {
class CallMemory;
class ResidentCopies;
} // namespace detail
class CompileCache;
class ObjectJit;

/// One parameter of the entry function, as the user sees it.
struct Parameter {
  std::string name;
  bool isGraph = false;
  /// The program updates this tensor argument in place (it is marked
  /// `bufferization.writable = true`; other arguments are read-only).
  bool writable = false;
  /// For a result marked `gnn.updates`: the writable parameter whose update
  /// it is. The program leaves it in that argument's buffer (it is not one
  /// of the compiled function's results).
  std::optional<unsigned> updates;
  DType dtype = DType::F32;
  /// Static sizes, or ShapedType::kDynamic.
  std::vector<int64_t> shape;
};

/// A requirement on a tensor argument that its type cannot state.
struct RowRequirement {
  unsigned arg;      // tensor argument
  unsigned graphArg; // graph argument
  enum Kind { SrcRows, DstRows, EdgeRows, EdgeIds } kind;
};

/// An argument: a graph or a tensor.
struct Argument {
  const gnn_graph *graph = nullptr;
  const HostTensor *tensor = nullptr;
  /// Set instead of `tensor` for a writable parameter whose storage the
  /// caller hands over for the call: the program updates it in place, and
  /// the result that is its update (`gnn.updates`) comes back as a view of
  /// it (no copy; valid while this tensor lives). A writable parameter given
  /// a `tensor` instead is updated in a private copy, which that result
  /// then owns.
  HostTensor *updated = nullptr;
  /// The tensor (a weight) keeps its address and contents for as long as
  /// the program lives: a GPU program copies it to the device at its first
  /// call and reuses that copy afterwards.
  bool constant = false;

  const HostTensor *value() const { return updated ? updated : tensor; }
};

/// Where compiled code runs.
enum class Device { CPU, CUDA };

/// Inputs of a program's later calls, placed ahead of them where its device
/// reads them (JitProgram::stage): a GPU program's copied to the device,
/// gathered into one block of unified memory by one copy, so that a call
/// handed them copies nothing; a CPU program's as they are. Staging may run
/// on another thread than the calls: a worker readying the next batch while
/// the device runs this one.
class StagedInputs {
public:
  StagedInputs(const StagedInputs &) = delete;
  StagedInputs &operator=(const StagedInputs &) = delete;
  ~StagedInputs();

  /// The argument to hand a call in place of the i-th staged one: a tensor
  /// or graph in the device's copy, or the caller's own where nothing was
  /// copied (a CPU program's inputs, constants, tensors already in unified
  /// memory), which must then outlive this.
  const Argument &operator[](size_t i) const { return arguments[i]; }
  size_t size() const { return arguments.size(); }

private:
  friend class JitProgram;
  StagedInputs();
  std::unique_ptr<detail::CallMemory> memory;
  std::vector<std::unique_ptr<HostTensor>> tensors;
  std::vector<std::unique_ptr<gnn_graph>> graphs;
  std::vector<Argument> arguments;
};

/// The runtime functions bound into programs compiled for `device`, by
/// linked symbol: one for each entry of abi::kRuntimeFunctions (null where
/// the runtime lacks one, which a unit test rules out). `asyncLaunches`: a
/// GPU program whose kernels are launched without waiting gets the dense
/// products that queue their work rather than wait for it.
std::map<std::string, void *> runtimeSymbols(Device device,
                                             bool asyncLaunches = false);

/// A runtime instance of the host's (gnnc/runtime.h), destroyed with it.
struct RuntimeDeleter {
  void operator()(gnn_rt_runtime *runtime) const {
    gnn_rt_runtime_destroy(runtime);
  }
};
using RuntimeInstance = std::unique_ptr<gnn_rt_runtime, RuntimeDeleter>;

/// A new runtime instance with `settings`; an error if one is out of range
/// or memory is exhausted.
llvm::Expected<RuntimeInstance> createRuntime(const gnn_rt_settings &settings);

struct CompileOptions {
  bool fuse = true;
  /// CPU: outer loops on all cores.
  bool parallel = true;
  /// CPU: every memref access checked against its bounds (gnn-lower-to-cpu's
  /// `checked`); a failed check prints the op and aborts.
  bool checked = false;
  /// CPU: the ops whose GPU form is plain loops take it (gnn-lower-to-cpu's
  /// `device-loops`), so that tests check the GPU form's arithmetic here.
  bool deviceLoops = false;
  /// CUDA: gnn-lower-to-nvvm for device 0 of gnnc's CUDA runtime, buffers
  /// in unified memory.
  Device device = Device::CPU;
  /// CUDA: kernels launched without waiting for each
  /// (gnn-gpu-async-launches; the tools turn it off on
  /// GNNC_CUDA_ASYNC_LAUNCHES=0).
  bool asyncLaunches = true;
  /// CUDA: buffers that only kernels and cuBLAS touch in device memory,
  /// those only the host touches in host memory (gnn-gpu-place-buffers; the
  /// tools turn it off on GNNC_CUDA_DEVICE_BUFFERS=0).
  bool deviceBuffers = true;
  /// The compiled functions listed in /tmp/perf-PID.map for perf (the
  /// tools on GNNC_PERF_MAP=1).
  bool perfMap = false;
  /// The runtime instance the program runs with (gnnc/runtime.h): its
  /// threads, pool and tape budget; null for the default instance. It
  /// must outlive the program.
  gnn_rt_runtime *runtime = nullptr;
  /// Object code is looked up here first and stored here after compiling
  /// (none: always compile).
  CompileCache *cache = nullptr;
  /// Code generation split over at most this many threads (0: all cores;
  /// the code is the same however it is split). The MLIR passes run on the
  /// context's threads (CompileThreads.h).
  unsigned compileThreads = 0;
};

/// How a program came to be.
struct CompileInfo {
  /// Its object code came from the compile cache.
  bool cacheHit = false;
  /// Wall time of compile(): passes, code generation or cache lookup, and
  /// linking.
  double seconds = 0;
  /// Its parts: MLIR passes (gnn-level and, on a miss, the lowering), LLVM
  /// (translation, -O2, code generation; 0 on a hit), linking in memory.
  double passSeconds = 0, llvmSeconds = 0, linkSeconds = 0;
};

/// The signature of one compiled function.
struct EntryPoint {
  std::string name;
  std::vector<Parameter> parameters;
  std::vector<Parameter> results;
  std::vector<RowRequirement> requirements;
};

class JitProgram {
public:
  ~JitProgram();

  /// Compiles function `entry` of `module` (which it takes over). Names of
  /// parameters come from `names` (one per argument, may be empty), else
  /// from a `gnn.name` argument attribute.
  static llvm::Expected<std::unique_ptr<JitProgram>>
  compile(OwningOpRef<ModuleOp> module, llvm::StringRef entry,
          std::vector<std::string> names, const CompileOptions &options);

  /// Compiles `module` once and makes each function in `entries` callable;
  /// parameter names come from `gnn.name` argument attributes.
  static llvm::Expected<std::unique_ptr<JitProgram>>
  compile(OwningOpRef<ModuleOp> module, llvm::ArrayRef<std::string> entries,
          const CompileOptions &options);

  /// The first (or only) entry's signature.
  const std::vector<Parameter> &getParameters() const {
    return entries.front().parameters;
  }
  const std::vector<Parameter> &getResults() const {
    return entries.front().results;
  }
  /// Sets the number of threads the calling thread's next calls run
  /// compiled parallel loops on (0: all cores, or OMP_NUM_THREADS where
  /// set). run() does so for each call.
  static void setThreads(int threads);

  /// The most bytes the tapes of one call may keep for the backward of its
  /// loops (0: the runtime instance's budget).
  void setTapeBudget(int64_t bytes) { tapeBudget = bytes; }

  /// A call's thread count that the runtime instance's settings give.
  static constexpr int kInstanceThreads = -1;

  const CompileInfo &getCompileInfo() const { return info; }

  /// The signature of entry `name`, or null.
  const EntryPoint *lookup(llvm::StringRef name) const;

  /// Checks the arguments and runs the first entry. Every call runs with
  /// a context of the program's runtime instance, bound to the calling
  /// thread, which gets the call's errors alone; its parallel loops run on
  /// `threads` threads (0: all cores; kInstanceThreads: the instance's).
  llvm::Expected<std::vector<HostTensor>> run(llvm::ArrayRef<Argument> args,
                                              int threads = kInstanceThreads) {
    return run(entries.front(), args, threads);
  }
  /// Checks the arguments and runs entry `name`.
  llvm::Expected<std::vector<HostTensor>> run(llvm::StringRef name,
                                              llvm::ArrayRef<Argument> args,
                                              int threads = kInstanceThreads);

  /// Sees a result that the program announces (gnn.result_ready) before it
  /// returns: its number among the entry's results and its dense bytes,
  /// valid during the call only. Called on the calling thread.
  using ResultListener =
      llvm::function_ref<void(size_t result, const void *data, size_t bytes)>;

  /// Which results of a GPU program's call stay on the device: they come
  /// back in unified memory (UnifiedMemory.h), copied there on the device,
  /// for later calls to take as they are (a decoder's cross-attention k/v
  /// at every step); the others come to host memory. A CPU program's
  /// results are all in host memory.
  using ResultPlacement = llvm::function_ref<bool(const Parameter &)>;

  /// Runs entry `name` with the argument `bind` gives each parameter (by
  /// position; an error stops the call) and returns the results by name;
  /// `onResult` sees the results the entry announces while it runs;
  /// `keepOnDevice` picks results that stay on a GPU.
  using Binder =
      llvm::function_ref<llvm::Expected<Argument>(const Parameter &, size_t)>;
  llvm::Expected<std::map<std::string, HostTensor>>
  runNamed(llvm::StringRef name, Binder bind, int threads = kInstanceThreads,
           ResultListener onResult = {}, ResultPlacement keepOnDevice = {});

  /// The runtime instance the program runs with.
  gnn_rt_runtime *getRuntime() const { return runtime; }

  /// Stages `inputs` (graphs and tensors; no writable ones) for later
  /// calls: a GPU program's cross to the device now, on the calling
  /// thread's stream, which waits for them (not for other threads' work).
  /// Errors (the device's) are the runtime's reports.
  llvm::Expected<std::unique_ptr<StagedInputs>>
  stage(llvm::ArrayRef<Argument> inputs) const;

private:
  JitProgram() = default;
  /// compile() without handing the compiler's freed heap back.
  static llvm::Expected<std::unique_ptr<JitProgram>>
  compileModule(OwningOpRef<ModuleOp> module,
                llvm::ArrayRef<std::string> entries,
                const CompileOptions &options);
  llvm::Expected<std::vector<HostTensor>>
  run(const EntryPoint &entry, llvm::ArrayRef<Argument> args, int threads,
      ResultListener onResult = {}, ResultPlacement keepOnDevice = {});

  std::unique_ptr<ObjectJit> jit;
  std::vector<EntryPoint> entries;
  /// The packed wrapper of each entry.
  std::vector<void (*)(void **)> packed;
  CompileInfo info;
  Device device = Device::CPU;
  /// Its kernels are launched without waiting (gnn-gpu-async-launches).
  bool asyncLaunches = false;
  int64_t tapeBudget = 0;
  gnn_rt_runtime *runtime = nullptr;
  /// Device copies of constant arguments, by host address (GPU programs).
  std::unique_ptr<detail::ResidentCopies> resident;
};

} // namespace gnn
} // namespace mlir

#endif // GNN_RUNNER_JITRUNNER_H
