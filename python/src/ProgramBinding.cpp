//===- ProgramBinding.cpp - gnnc.compile's programs -----------------------===//
//
// Part of gnnc's Python package. A compiled program (mlir::gnn::Program)
// with its own compile session; runs bind graphs and inputs by name, as
// gnn-run's --graph and --inputs files do.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "GNN/Runner/Program.h"
#include "GNN/Support/InputFile.h"

#include <pybind11/stl.h>

#include <shared_mutex>

using namespace gnnc::python;
using mlir::gnn::Parameter;
using mlir::gnn::Program;

namespace {
py::dict describe(const Parameter &p) {
  py::dict d;
  d["name"] = p.name;
  d["graph"] = p.isGraph;
  if (!p.isGraph) {
    d["dtype"] = mlir::gnn::dtypeName(p.dtype).str();
    py::list shape;
    for (int64_t s : p.shape)
      shape.append(s < 0 ? py::object(py::none()) : py::object(py::int_(s)));
    d["shape"] = shape;
  }
  return d;
}

class CompiledProgram {
public:
  CompiledProgram(const std::string &source, bool isPath, bool fuse,
                  const std::string &device, int threads,
                  std::optional<std::string> cacheDir, const std::string &entry,
                  bool grad)
      : session(threads, device, std::move(cacheDir)) {
    std::string text = source, name = "<string>";
    if (isPath) {
      auto buffer = mlir::gnn::readInputFile(source, /*isText=*/true);
      if (!buffer)
        raise("cannot read '" + source +
              "': " + llvm::toString(buffer.takeError()));
      text = (*buffer)->getBuffer().str();
      name = source;
    }
    checkParsesApart(text, name);
    mlir::gnn::ProgramOptions options;
    options.entry = entry;
    options.grad = grad;
    options.compile = session.compileOptions(fuse);
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    llvm::Expected<std::unique_ptr<Program>> compiled = [&] {
      py::gil_scoped_release released;
      return Program::compileString(session.context(), text, options, name, os);
    }();
    if (!compiled) {
      if (compiled.errorIsA<mlir::gnn::ReportedError>()) {
        llvm::consumeError(compiled.takeError());
        os.flush();
        while (!diagnostics.empty() && diagnostics.back() == '\n')
          diagnostics.pop_back();
        raise(diagnostics.empty() ? "the program is not valid" : diagnostics);
      }
      raise(compiled.takeError());
    }
    program = std::move(*compiled);
  }

  py::dict run(const py::dict &graphs, const py::dict &inputs) {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (!program)
      raise("the program is closed");
    TensorMap graphTensors = borrowDict(graphs, "graph tensor");
    TensorMap inputTensors = borrowDict(inputs, "input");
    llvm::Expected<TensorMap> results = TensorMap();
    {
      py::gil_scoped_release released;
      results =
          program->run(graphs.empty() ? nullptr : &graphTensors, inputTensors);
    }
    if (!results)
      raiseRunError(results.takeError());
    return toDict(std::move(*results));
  }

  py::list parameters() const { return describeAll(true); }
  py::list results() const { return describeAll(false); }
  std::string entry() const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    return program ? program->getEntry() : "";
  }
  bool cacheHit() const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    return program && program->getCompileInfo().cacheHit;
  }

  /// Frees the compiled code; later calls are errors.
  void close() {
    py::gil_scoped_release released;
    std::unique_lock<std::shared_mutex> lock(mutex);
    program.reset();
  }
  bool closed() const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    return !program;
  }

private:
  py::list describeAll(bool parameters) const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (!program)
      raise("the program is closed");
    py::list out;
    for (const Parameter &p :
         parameters ? program->getParameters() : program->getResults())
      out.append(describe(p));
    return out;
  }

  /// A binding error in the words of the Python call.
  [[noreturn]] static void raiseRunError(llvm::Error error) {
    std::string message;
    llvm::handleAllErrors(
        std::move(error),
        [&](const mlir::gnn::MissingArgument &missing) {
          message = missing.isGraph
                        ? "'" + missing.entry + "' takes a graph ('" +
                              missing.name + "'): pass graph="
                        : "no input named '" + missing.name + "'";
        },
        [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
    raise(message);
  }

  CompileSession session;
  mutable std::shared_mutex mutex;
  std::unique_ptr<Program> program;
};
} // namespace

void gnnc::python::bindPrograms(py::module_ &m) {
  py::class_<CompiledProgram>(m, "CompiledProgram")
      .def(py::init<const std::string &, bool, bool, const std::string &, int,
                    std::optional<std::string>, const std::string &, bool>(),
           py::arg("source"), py::arg("is_path"), py::arg("fuse"),
           py::arg("device"), py::arg("threads"), py::arg("cache_dir"),
           py::arg("entry"), py::arg("grad"))
      .def("run", &CompiledProgram::run, py::arg("graphs"), py::arg("inputs"))
      .def("parameters", &CompiledProgram::parameters)
      .def("results", &CompiledProgram::results)
      .def_property_readonly("entry", &CompiledProgram::entry)
      .def_property_readonly("cache_hit", &CompiledProgram::cacheHit)
      .def_property_readonly("closed", &CompiledProgram::closed)
      .def("close", &CompiledProgram::close);
}
