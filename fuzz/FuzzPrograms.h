//===- FuzzPrograms.h - compiled programs for fuzz targets ------*- C++ -*-===//
//
// Part of gnnc. What the fuzz targets that run compiled programs share: a
// context with gnnc's dialects in a process prepared as the tools prepare
// theirs, and a program compiled once per mode (parallel loops, or every
// memory access checked) before the first input.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_FUZZ_FUZZPROGRAMS_H
#define GNN_FUZZ_FUZZPROGRAMS_H

#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/Environment.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace gnnfuzz {

/// A context for compiling, after the process is prepared as the tools do
/// at start-up (OpenBLAS with one thread of its own).
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::gnn::prepareProcess(mlir::gnn::readEnvironment());
  mlir::DialectRegistry registry;
  mlir::gnn::registerAllDialectsAndExtensions(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// `entries` of `text`, compiled; with `checked`, every memory access
/// checked. Aborts on failure: a fuzz target has nothing to run without.
inline std::unique_ptr<mlir::gnn::JitProgram>
compileOrAbort(mlir::MLIRContext &context, const char *text,
               const std::vector<std::string> &entries, bool checked) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text,
                                              mlir::ParserConfig(&context));
  mlir::gnn::CompileOptions options;
  options.checked = checked;
  auto program =
      mlir::gnn::JitProgram::compile(std::move(module), entries, options);
  if (!program) {
    llvm::errs() << llvm::toString(program.takeError()) << "\n";
    std::abort();
  }
  return std::move(*program);
}

} // namespace gnnfuzz

#endif // GNN_FUZZ_FUZZPROGRAMS_H
