//===- TrainBinding.cpp - gnnc.train --------------------------------------===//
//
// Part of gnnc's Python package. Trains as gnn-train does (the same
// Trainer and fit(), so the same weights bit for bit): epochs come back as
// dicts, one per epoch, and a callback may stop training after any epoch.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "GNN/Models/Fit.h"
#include "GNN/Models/Trainer.h"

#include <pybind11/stl.h>

using namespace gnnc::python;
using mlir::gnn::EpochReport;
using mlir::gnn::Trainer;
using mlir::gnn::TrainingExample;

namespace {
/// The flags of gnn-train, as gnnc.train passes them (checked there).
struct TrainRequest {
  std::string config, trainSrc, trainTgt, outDir, validSrc, validTgt;
  int64_t epochs = 10, maxSteps = 0;
  mlir::gnn::TrainerOptions options;
  std::string init;
  bool resume = false;
  std::string device = "cpu";
  std::optional<std::string> cacheDir;
  bool ids = false;
};

py::dict epochDict(const EpochReport &r) {
  py::dict d;
  d["epoch"] = r.epoch;
  d["train_loss"] = r.train.averageLoss();
  d["train_acc"] = r.train.accuracy();
  d["valid_loss"] = r.validated ? py::object(py::float_(r.valid.averageLoss()))
                                : py::object(py::none());
  d["valid_acc"] = r.validated ? py::object(py::float_(r.valid.accuracy()))
                               : py::object(py::none());
  d["seconds"] = r.seconds;
  d["tokens_per_s"] = r.tokensPerSecond();
  d["step"] = r.step;
  d["tokens"] = r.train.tokens;
  if (r.train.nodes) {
    py::list entered;
    for (int64_t n : r.train.entered)
      entered.append(double(n) / double(r.train.nodes));
    d["act_steps"] = entered;
  }
  d["line"] = mlir::gnn::formatEpochLine(r);
  return d;
}

/// fit()'s callbacks into Python: each takes the GIL, and a Python error
/// (from the callback, or an interrupt) stops training and is kept to be
/// raised once fit() has returned.
struct PythonCallbacks {
  py::object callback;
  py::object print;
  py::list history;
  std::optional<py::error_already_set> pending;

  mlir::gnn::FitCallbacks make() {
    mlir::gnn::FitCallbacks callbacks;
    callbacks.onEpoch = [this](const EpochReport &r) {
      py::gil_scoped_acquire held;
      try {
        py::dict d = epochDict(r);
        history.append(d);
        if (!print.is_none())
          print(d["line"]);
        if (!callback.is_none()) {
          py::object goOn = callback(d);
          return goOn.is_none() || goOn.cast<bool>();
        }
        return true;
      } catch (py::error_already_set &e) {
        pending.emplace(std::move(e));
        return false;
      } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        pending.emplace();
        return false;
      }
    };
    callbacks.interrupted = [this] {
      py::gil_scoped_acquire held;
      if (pending)
        return true;
      if (PyErr_CheckSignals() == 0)
        return false;
      pending.emplace();
      return true;
    };
    return callbacks;
  }
};

py::list train(const TrainRequest &request, py::object callback,
               py::object print) {
  CompileSession session(request.options.threads, request.device,
                         request.cacheDir);
  mlir::gnn::ModelConfig config =
      take(mlir::gnn::readModelConfig(request.config));
  std::vector<TrainingExample> trainPairs, validPairs;
  if (llvm::Error e = mlir::gnn::readTrainingData(
          config, request.ids, request.trainSrc, request.trainTgt,
          request.validSrc, request.validTgt, trainPairs, validPairs))
    raise(std::move(e));
  if (!request.outDir.empty())
    if (llvm::Error e =
            mlir::gnn::prepareRunDirectory(request.outDir, "out_dir"))
      raise(std::move(e));
  TensorMap weights = take(mlir::gnn::initialTrainingWeights(
      config, request.init, "init", request.options.seed,
      request.options.tieWeights));
  mlir::gnn::TrainerOptions options = request.options;
  options.compile = session.compileOptions(/*fuse=*/true);
  llvm::Expected<std::unique_ptr<Trainer>> trainer = nullptr;
  {
    py::gil_scoped_release released;
    trainer =
        Trainer::create(session.context(), config, std::move(weights), options);
  }
  std::unique_ptr<Trainer> t = take(std::move(trainer));
  if (request.resume)
    if (llvm::Error e = mlir::gnn::resumeFrom(*t, request.outDir))
      raise(std::move(e));
  PythonCallbacks callbacks{callback, print, py::list(), std::nullopt};
  mlir::gnn::FitOptions fitOptions;
  fitOptions.epochs = request.epochs;
  fitOptions.maxSteps = request.maxSteps;
  fitOptions.outDir = request.outDir;
  llvm::Expected<mlir::gnn::FitEnd> end = mlir::gnn::FitEnd::Epochs;
  {
    py::gil_scoped_release released;
    end = mlir::gnn::fit(*t, trainPairs, validPairs, fitOptions,
                         callbacks.make());
  }
  if (callbacks.pending) {
    if (!end)
      llvm::consumeError(end.takeError());
    throw *callbacks.pending;
  }
  if (!end)
    raise(end.takeError());
  return callbacks.history;
}
} // namespace

void gnnc::python::bindTraining(py::module_ &m) {
  m.def(
      "train",
      [](const std::string &config, const std::string &trainSrc,
         const std::string &trainTgt, const std::string &outDir,
         const std::string &validSrc, const std::string &validTgt,
         int64_t epochs, std::optional<int64_t> maxSteps, int64_t batchSize,
         double labelSmoothing, double dropout, double lrFactor, int64_t warmup,
         int64_t gradAccum, bool tieWeights, double actLossWeight,
         uint64_t seed, int threads, const std::string &init, bool resume,
         const std::string &device, bool shuffle, bool ids,
         std::optional<std::string> cacheDir, py::object callback,
         py::object print) {
        TrainRequest r;
        r.config = config;
        r.trainSrc = trainSrc;
        r.trainTgt = trainTgt;
        r.outDir = outDir;
        r.validSrc = validSrc;
        r.validTgt = validTgt;
        r.epochs = epochs;
        r.maxSteps = maxSteps.value_or(0);
        r.options.batchSize = batchSize;
        r.options.labelSmoothing = labelSmoothing;
        r.options.dropout = dropout;
        r.options.lrFactor = lrFactor;
        r.options.warmup = warmup;
        r.options.gradAccum = gradAccum;
        r.options.tieWeights = tieWeights;
        r.options.actLossWeight = actLossWeight;
        r.options.seed = seed;
        r.options.shuffle = shuffle;
        r.options.threads = threads;
        r.init = init;
        r.resume = resume;
        r.device = device;
        r.ids = ids;
        r.cacheDir = std::move(cacheDir);
        // gnn-train's checks, in the options' names.
        mlir::gnn::TrainingSettings settings;
        settings.trainer = r.options;
        settings.epochs = epochs;
        settings.maxSteps = maxSteps;
        settings.device = device;
        settings.resume = resume;
        settings.init = !init.empty();
        if (llvm::Error e = mlir::gnn::checkTrainingSettings(
                settings, [](llvm::StringRef name) { return name.str(); }))
          raise(std::move(e));
        if (resume && outDir.empty())
          raise("resume needs out_dir (the state is read from it)");
        return train(r, std::move(callback), std::move(print));
      },
      py::arg("config"), py::arg("train_src"), py::arg("train_tgt"),
      py::arg("out_dir"), py::arg("valid_src"), py::arg("valid_tgt"),
      py::arg("epochs"), py::arg("max_steps"), py::arg("batch_size"),
      py::arg("label_smoothing"), py::arg("dropout"), py::arg("lr_factor"),
      py::arg("warmup"), py::arg("grad_accum"), py::arg("tie_weights"),
      py::arg("act_loss_weight"), py::arg("seed"), py::arg("threads"),
      py::arg("init"), py::arg("resume"), py::arg("device"), py::arg("shuffle"),
      py::arg("ids"), py::arg("cache_dir"), py::arg("callback"),
      py::arg("print"));
}
