//===- Program.h - gnn programs from source to results ----------*- C++ -*-===//
//
// Part of gnnc. The library behind `gnn-run PROGRAM.mlir`: a program's text
// is parsed, admitted (self-contained, sizes LLVM can compile), optionally
// differentiated, and compiled once; its entry then runs on graphs given as
// COO tensors and on inputs bound by argument name, results by name.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_PROGRAM_H
#define GNN_RUNNER_PROGRAM_H

#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/SafeTensors.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::gnn {

/// An error whose details were already written to the diagnostics stream
/// (MLIR's located messages); its own message only says so.
class ReportedError : public llvm::ErrorInfo<ReportedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override {
    os << "the program is not valid (see the diagnostics)";
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
};

/// A parameter that bind() found nothing for: a graph when no graphs were
/// given, or a tensor not among the inputs.
class MissingArgument : public llvm::ErrorInfo<MissingArgument> {
public:
  static char ID;
  MissingArgument(std::string entry, std::string name, bool isGraph)
      : entry(std::move(entry)), name(std::move(name)), isGraph(isGraph) {}
  void log(llvm::raw_ostream &os) const override {
    if (isGraph)
      os << "'" << entry << "' takes a graph ('" << name
         << "'), and none was given";
    else
      os << "no input tensor named '" << name << "'";
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string entry, name;
  bool isGraph;
};

struct ProgramOptions {
  /// The function to run.
  std::string entry = "main";
  /// Run the entry's gradient instead (gnn-differentiate; its first result
  /// is the loss): its results, then `grad.<name>` for each float argument.
  bool grad = false;
  /// The most bytes the backward of the program's loops may keep per run
  /// (0: half of the machine's memory).
  int64_t tapeBudget = 0;
  CompileOptions compile;
};

/// The arguments of one run: graphs built from COO tensors, inputs by name.
struct ProgramArguments {
  std::vector<std::unique_ptr<gnn_graph, void (*)(gnn_graph *)>> graphs;
  std::vector<Argument> arguments;
};

class Program {
public:
  /// Parses `source` (diagnostics name it by its buffer identifier),
  /// admits, differentiates (with options.grad) and compiles it.
  /// Diagnostics are written to `diagnostics`; an invalid program is a
  /// ReportedError.
  static llvm::Expected<std::unique_ptr<Program>>
  compile(MLIRContext &context, std::unique_ptr<llvm::MemoryBuffer> source,
          const ProgramOptions &options,
          llvm::raw_ostream &diagnostics = llvm::errs());
  /// compile() of the text of `path` (bounded, checked as a text file).
  static llvm::Expected<std::unique_ptr<Program>>
  compileFile(MLIRContext &context, llvm::StringRef path,
              const ProgramOptions &options,
              llvm::raw_ostream &diagnostics = llvm::errs());
  /// compile() of `text`, named `name` in diagnostics.
  static llvm::Expected<std::unique_ptr<Program>>
  compileString(MLIRContext &context, llvm::StringRef text,
                const ProgramOptions &options,
                llvm::StringRef name = "<string>",
                llvm::raw_ostream &diagnostics = llvm::errs());

  /// Whether `source` parses and verifies (what compile() does first),
  /// its diagnostics written to `diagnostics`. A host that cannot rely on
  /// ParserQuarantine (an interpreter that loaded gnnc) calls this in a
  /// child process before compiling in its own.
  static bool parses(MLIRContext &context, llvm::MemoryBufferRef source,
                     llvm::raw_ostream &diagnostics);

  /// The function that runs (the entry, or its gradient).
  const std::string &getEntry() const { return entry; }
  const std::vector<Parameter> &getParameters() const {
    return jit->getParameters();
  }
  const std::vector<Parameter> &getResults() const { return jit->getResults(); }
  const CompileInfo &getCompileInfo() const { return jit->getCompileInfo(); }

  /// Binds every parameter: a graph from `graphs` (tensors `src`, `dst`
  /// and `num_nodes`, or `num_src` and `num_dst`; with several graph
  /// parameters each prefixed by its name, as in `g.src`; null: none
  /// given), a tensor from `inputs` by name. Counts are checked against the
  /// rows the program needs before a graph is built; a parameter without a
  /// value is a MissingArgument, an input that is no parameter an error.
  /// `inputs` must outlive the arguments.
  llvm::Expected<ProgramArguments> bind(const TensorMap *graphs,
                                        const TensorMap &inputs) const;
  /// Runs the program; its results by name.
  llvm::Expected<TensorMap> run(const ProgramArguments &arguments);
  /// bind() and run().
  llvm::Expected<TensorMap> run(const TensorMap *graphs,
                                const TensorMap &inputs);

private:
  Program() = default;
  std::string entry;
  std::unique_ptr<JitProgram> jit;
};

} // namespace mlir::gnn

#endif // GNN_RUNNER_PROGRAM_H
