//===- CheckSelfContained.cpp - programs that reach outside themselves ----===//
//
// Part of gnnc. A JIT-compiled program resolves the symbols it declares but
// does not define against the running process; a program given to the
// runner may define what it calls, never borrow the process's symbols, and
// may not use the llvm dialect, whose pointers reach anything.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CHECKSELFCONTAINEDPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Prefixes of the names the lowering gives the functions it declares and
/// generates (the runtime's ABI, outlined kernels, C interface wrappers,
/// the OpenMP runtime).
constexpr llvm::StringLiteral kReservedPrefixes[] = {
    "gnn_rt_", "gnn_kernel_", "_mlir_", "__kmpc_", "omp_"};

/// C library functions that compiled code calls (memory, and the math
/// functions without an LLVM intrinsic, in float and double): a program's
/// own function of that name would be called in their place.
bool isLibraryName(StringRef name) {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> set;
    for (StringRef fn :
         {"malloc", "calloc", "realloc", "free", "aligned_alloc",
          "posix_memalign", "abort", "memcpy", "memmove", "memset", "memcmp"})
      set.insert(fn);
    for (StringRef fn :
         {"acos", "acosh", "asin",     "asinh", "atan",  "atan2", "atanh",
          "cbrt", "ceil",  "copysign", "cos",   "cosh",  "erf",   "erfc",
          "exp",  "exp2",  "expm1",    "fabs",  "floor", "fma",   "fmod",
          "log",  "log10", "log1p",    "log2",  "pow",   "round", "roundeven",
          "sin",  "sinh",  "sqrt",     "tan",   "tanh",  "trunc"}) {
      set.insert(fn);
      set.insert((fn + "f").str());
    }
    return set;
  }();
  return names.contains(name);
}

/// What is wrong with `op` as part of a self-contained program, or "".
std::string problem(Operation *op) {
  if (auto fn = dyn_cast<func::FuncOp>(op); fn && fn.isExternal())
    return "is declared without a body; a program may call only functions "
           "it defines";
  if (auto global = dyn_cast<memref::GlobalOp>(op);
      global && global.isExternal() && !global.isPrivate())
    return "is an external global; a program may use only globals it "
           "defines";
  return "";
}

struct CheckSelfContainedPass
    : gnn::impl::CheckSelfContainedPassBase<CheckSelfContainedPass> {
  void runOnOperation() override {
    bool failed = false;
    // The llvm dialect's raw pointers, inline assembly and calls through
    // pointers reach any memory and code of the process: once per op, not
    // for what is nested in it.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa_and_nonnull<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      failed = true;
      op->emitOpError() << "is in the llvm dialect, which a program may not "
                           "use: its pointers, inline assembly and calls "
                           "reach the memory and code of the process that "
                           "runs it";
      return WalkResult::skip();
    });
    getOperation()->walk([&](SymbolOpInterface symbol) {
      if (isa_and_nonnull<LLVM::LLVMDialect>(symbol->getDialect()))
        return;
      StringRef name = symbol.getName();
      std::string why = problem(symbol);
      if (why.empty())
        for (StringRef prefix : kReservedPrefixes)
          if (name.starts_with(prefix))
            why = ("has a name the lowering reserves for its own "
                   "functions ('" +
                   prefix + "...')")
                      .str();
      if (why.empty() && isLibraryName(name))
        why = "has the name of a C library function that compiled code "
              "calls; the program's function would be called in its place";
      if (why.empty())
        return;
      failed = true;
      symbol->emitOpError() << "@" << name << " " << why;
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
