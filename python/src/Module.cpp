//===- Module.cpp - the gnnc._core extension module -----------------------===//
//
// Part of gnnc's Python package.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "GNN/InitAll.h"
#include "GNN/Support/Environment.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"

using namespace gnnc::python;

void gnnc::python::raise(llvm::Error error) {
  raise(llvm::toString(std::move(error)));
}

void gnnc::python::raise(const std::string &message) { throw Error(message); }

const mlir::gnn::EnvironmentOptions &gnnc::python::environment() {
  static const mlir::gnn::EnvironmentOptions read =
      mlir::gnn::readEnvironment();
  return read;
}

/// OpenBLAS chooses its kernels once, when it loads: where numpy (or
/// another library) loaded it before gnnc, gnnc's choice for this CPU
/// (prepareProcess) came too late. On CPUs newer than OpenBLAS that
/// choice is generic code (Debian's 0.3.21 picks Prescott, SSE3, on a
/// 5th-generation Xeon), and the results differ from the tools' in the
/// last bits: a RuntimeWarning says so, and how to avoid it.
static void warnOfForeignBlasKernels() {
  const std::string &wanted = environment().blasCore;
  const char *actual = gnn_rt_blas_core();
  if (wanted.empty() || !actual ||
      llvm::StringRef(actual).equals_insensitive(wanted))
    return;
  std::string message =
      std::string("OpenBLAS was loaded before gnnc with its ") + actual +
      " kernels, not the " + wanted +
      " kernels gnnc names for this CPU: dense layers may be slower and "
      "results differ from gnn-run's in the last bits; import gnnc before "
      "numpy";
  if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) < 0)
    throw pybind11::error_already_set();
}

CompileSession::CompileSession(int threads, const std::string &deviceName,
                               std::optional<std::string> cacheDir)
    : runThreads(threads) {
  gnn_rt_settings settings = environment().runtime;
  settings.threads = threads;
  runtime = take(mlir::gnn::createRuntime(settings));
  if (deviceName == "cuda") {
    char why[256];
    if (!gnn_cuda_init(why, sizeof(why)))
      raise("device 'cuda': " + std::string(why) + "; use device='cpu'");
    device = mlir::gnn::Device::CUDA;
  } else if (deviceName != "cpu") {
    raise("device must be 'cpu' or 'cuda', not '" + deviceName + "'");
  }
  compileThreads = std::make_unique<mlir::gnn::CompileThreads>(
      environment().compileThreads(unsigned(threads)));
  mlir::DialectRegistry registry;
  mlir::gnn::registerAllDialectsAndExtensions(registry);
  mlirContext = std::make_unique<mlir::MLIRContext>(registry);
  compileThreads->attach(*mlirContext);
  mlirContext->loadAllAvailableDialects();
  if (cacheDir) {
    std::string dir = cacheDir->empty()
                          ? mlir::gnn::defaultCompileCacheDirectory()
                          : *cacheDir;
    if (!dir.empty())
      cache = std::make_unique<mlir::gnn::CompileCache>(dir);
  }
}

mlir::gnn::CompileOptions CompileSession::compileOptions(bool fuse) const {
  mlir::gnn::CompileOptions options;
  options.fuse = fuse;
  options.parallel = runThreads != 1;
  options.device = device;
  options.cache = cache.get();
  options.compileThreads = compileThreads->count();
  options.runtime = runtime.get();
  options.asyncLaunches = environment().asyncLaunches;
  options.deviceBuffers = environment().deviceBuffers;
  options.perfMap = environment().perfMap;
  return options;
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "gnnc's compiler, models and trainer (the library API); use "
            "the gnnc package, not this module";
  mlir::gnn::prepareProcess(environment());
  warnOfForeignBlasKernels();
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  bindPrograms(m);
  bindModels(m);
  bindTraining(m);
}
