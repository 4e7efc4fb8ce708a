//===- CodegenTarget.h - what compiling for a device takes ------*- C++ -*-===//
//
// Part of gnnc. The compile-side device interface: for the CPU or a CUDA
// device, the lowering pipeline from gnn-level IR, what the compile cache
// keys on besides the program, the runtime functions the objects link
// against and the libraries they load. JitProgram::compile asks this
// interface, never the device's kind; a call's side is DeviceMemory.h's.
// Private to lib/GNN/Runner.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_CODEGENTARGET_H
#define GNN_RUNNER_CODEGENTARGET_H

#include "GNN/Runner/JitRunner.h"

#include "mlir/Pass/PassManager.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::gnn::detail {

class CodegenTarget {
public:
  virtual ~CodegenTarget() = default;

  /// For `options.device`: the CPU, or CUDA device 0 (its architecture
  /// queried now: no device is an error). May register translations in
  /// `ctx`.
  static llvm::Expected<std::unique_ptr<CodegenTarget>>
  create(const CompileOptions &options, MLIRContext *ctx);

  /// What the code depends on besides the program and the host (part of
  /// the compile cache's key).
  virtual std::string description() const = 0;
  /// The lowering from gnn-level IR to the LLVM dialect.
  virtual LogicalResult buildPipeline(PassManager &pm) const = 0;
  /// Runtime set-up before the program's first call.
  virtual void prepareRuntime() const {}
  /// The symbols the objects resolve against the runtime.
  virtual std::map<std::string, void *> linkedSymbols() const = 0;
  /// Shared libraries the objects need loaded.
  virtual std::vector<std::string> libraries() const { return {}; }
  /// Kernels are launched without a wait after each.
  virtual bool asyncLaunches() const { return false; }
};

} // namespace mlir::gnn::detail

#endif // GNN_RUNNER_CODEGENTARGET_H
