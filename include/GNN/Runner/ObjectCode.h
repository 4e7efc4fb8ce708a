//===- ObjectCode.h - host object code and a JIT that loads it --*- C++ -*-===//
//
// Part of gnnc. A program in the LLVM dialect becomes relocatable object
// files for the host CPU (optimized once, code generated on all cores), and
// object files, fresh or from the compile cache, become callable code. The
// objects are self-contained: each entry has a packed wrapper
// (`packedName`), and what the module ran as global constructors and
// destructors (a GPU program's kernel module loads) is gathered into
// `_gnn_init` / `_gnn_fini`, which the JIT calls itself, so cached code
// needs no platform support for initializers.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_OBJECTCODE_H
#define GNN_RUNNER_OBJECTCODE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace mlir::gnn {

/// The host's target triple, CPU name and features: machine code is
/// specific to them (part of every compile cache key).
std::string hostTargetDescription();

/// The symbol of entry `name`'s packed wrapper: `void(void **args)`, where
/// args[i] points at the i-th argument of `_mlir_ciface_<name>` (its
/// result pointer first when it has results).
std::string packedName(llvm::StringRef name);

/// How emitHostObjects' error begins when the rewrite of large results
/// (returnLargeResultsThroughMemory) left a module LLVM's verifier rejects:
/// a fault of the compiler, not of the program.
inline constexpr llvm::StringLiteral kInvalidAfterRewrite =
    "internal error: returning large results through memory left invalid "
    "LLVM IR";

/// Object files for the host that hold `module` (LLVM dialect), with packed
/// wrappers for `entries`; code generation is split over up to `threads`
/// threads (0: all cores). Optimized at -O2.
llvm::Expected<std::vector<std::string>>
emitHostObjects(ModuleOp module, llvm::ArrayRef<std::string> entries,
                unsigned threads = 0);

/// Has code generated the fast way (`optnone` after -O2: fast instruction
/// selection, no machine-level optimization) for functions with a basic
/// block of over 2,000 instructions that compute on no vectors: straight-line
/// glue that runs once per call (a training step's sequence of calls, the C
/// interface wrappers that unpack thousands of buffer descriptors into one
/// call), already optimized as IR. Selecting a call of 6,500 arguments took
/// 1.7 s of the 12-layer training program's code generation. Every long
/// block, vectors or not, is tuned for the generic CPU: some hosts'
/// scheduling models (AMD Zen's) turn on a post-register-allocation list
/// scheduler whose time grows as the square of a block's length. Kernels'
/// loop bodies are far shorter and keep the host's -O2 code. (Part of
/// emitHostObjects.)
void generateLongBlocksQuickly(llvm::Module &module);

/// LLVM's -O2 module pipeline (vectorizers and unrolling on, no
/// interleaving of vectorized loops) with the cost model of `machine`, the
/// host's: without it LLVM's vectorizers see no vector registers, and every
/// elementwise kernel ran one float at a time (Adam's second-moment update,
/// 1M floats in cache: 0.27 ms scalar, 0.06 ms in AVX-512 vectors, the same
/// bits). Less CalledValuePropagation: that
/// pass only annotates indirect calls, which this code makes none of
/// through its own values, and its solver visits a call again for every
/// argument whose state changes: on the call of a training step with
/// thousands of buffer arguments from its C interface wrapper it took 7.9
/// of the 12.5 s of -O2 on the 12-layer d_model 512 program. (Part of
/// emitHostObjects.)
void optimizeForHost(llvm::Module &module, llvm::TargetMachine &machine);

/// Results of at least this many scalars are returned through memory.
constexpr unsigned kLargeResultScalars = 32;

/// Rewrites every function of `module` that returns a struct of at least
/// kLargeResultScalars scalars, is only called directly and is not among
/// `exported` (the symbols other objects look up) to store its result
/// through a new first parameter, and its calls to pass a stack slot and
/// load from it. Code generation copies a struct value whole at each part
/// built or read (its time grew as the square of a result's size: a
/// training step returns a buffer descriptor per parameter); in memory each
/// part is a store and a load. (Part of emitHostObjects, before -O2.)
void returnLargeResultsThroughMemory(llvm::Module &module,
                                     llvm::ArrayRef<std::string> exported);

/// Object code linked in memory and ready to call.
class ObjectJit {
public:
  ~ObjectJit();

  /// Links `objects` against `symbols` (by name), the shared libraries
  /// `libraries` and the running process, then runs `_gnn_init` if the
  /// objects define it. With `perfMap`, its functions are listed for perf
  /// (PerfMap.h).
  static llvm::Expected<std::unique_ptr<ObjectJit>>
  load(llvm::ArrayRef<std::string> objects,
       const std::map<std::string, void *> &symbols,
       llvm::ArrayRef<std::string> libraries, bool perfMap = false);

  using PackedFunction = void (*)(void **);
  /// Entry `name`'s packed wrapper.
  llvm::Expected<PackedFunction> lookupPacked(llvm::StringRef name);

private:
  ObjectJit() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*fini)() = nullptr;
};

} // namespace mlir::gnn

#endif // GNN_RUNNER_OBJECTCODE_H
