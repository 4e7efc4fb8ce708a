//===- Bindings.h - what the Python extension's parts share -----*- C++ -*-===//
//
// Part of gnnc's Python package. The extension binds the library API
// (Program, TransformerModel, Trainer and fit) and nothing else: errors
// become gnnc.Error with the tools' one-line messages, tensors cross as
// numpy arrays (borrowed going in, owned by the array coming out), and
// compiled code runs with the GIL released.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_PYTHON_BINDINGS_H
#define GNNC_PYTHON_BINDINGS_H

#include "GNN/Runner/CompileThreads.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/CompileCache.h"
#include "GNN/Support/Environment.h"
#include "GNN/Support/SafeTensors.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace gnnc::python {
namespace py = pybind11;
using mlir::gnn::HostTensor;
using mlir::gnn::TensorMap;

/// Raised as gnnc.Error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws `error`'s message as gnnc.Error.
[[noreturn]] void raise(llvm::Error error);
[[noreturn]] void raise(const std::string &message);

/// The value of an Expected, or its error raised.
template <typename T> T take(llvm::Expected<T> value) {
  if (!value)
    raise(value.takeError());
  return std::move(*value);
}

/// A view of `array` (C-contiguous, of a gnnc dtype; gnnc.Error otherwise,
/// naming it `name`): valid while the array lives.
HostTensor borrowArray(const py::array &array, const std::string &name);
/// A numpy array that owns `tensor`'s storage.
py::array toArray(HostTensor tensor);
TensorMap borrowDict(const py::dict &arrays, const char *what);
py::dict toDict(TensorMap tensors);

/// What the environment asked for when the package was imported (read
/// once, as the tools do at start-up).
const mlir::gnn::EnvironmentOptions &environment();

/// Where and how compiled code is made for one Python object: its own
/// MLIR context on its own compile threads (objects compile concurrently),
/// and the compile cache it was given.
class CompileSession {
public:
  /// `threads`: run and compile threads (0: all cores); `device`: "cpu" or
  /// "cuda"; `cacheDir`: none for no cache, empty for the default one.
  CompileSession(int threads, const std::string &device,
                 std::optional<std::string> cacheDir);
  mlir::MLIRContext &context() { return *mlirContext; }
  /// CompileOptions for this session (fuse and parallel as given).
  mlir::gnn::CompileOptions compileOptions(bool fuse) const;
  int threads() const { return runThreads; }

private:
  int runThreads;
  /// The runtime instance this object's programs run with (its pool, its
  /// threads, its errors): declared first, so it outlives them.
  mlir::gnn::RuntimeInstance runtime;
  mlir::gnn::Device device = mlir::gnn::Device::CPU;
  std::unique_ptr<mlir::gnn::CompileThreads> compileThreads;
  std::unique_ptr<mlir::MLIRContext> mlirContext;
  std::unique_ptr<mlir::gnn::CompileCache> cache;
};

/// Whether `text` parses, checked in a child process (MLIR's parser can
/// damage the heap on some invalid programs, ParserQuarantine.h, which
/// the tools survive and an interpreter would not): gnnc.Error with the
/// parser's diagnostics if not.
void checkParsesApart(const std::string &text, const std::string &name);

void bindPrograms(py::module_ &m);
void bindModels(py::module_ &m);
void bindTraining(py::module_ &m);
} // namespace gnnc::python

#endif // GNNC_PYTHON_BINDINGS_H
