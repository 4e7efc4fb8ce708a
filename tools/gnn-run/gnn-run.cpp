//===- gnn-run.cpp - run compiled gnn programs ----------------------------===//
//
// Part of gnnc.
//
//   gnn-run PROGRAM.mlir --graph G.safetensors --inputs X.safetensors
//           --out Y.safetensors [--entry NAME] [--no-fuse]
//
// Compiles one function of a gnn program for the CPU and runs it on a user's
// graph (source/destination id arrays and node counts; a batch of graphs is
// one graph) with the features named after the function's arguments, and
// writes its results by name.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Runner/SafeTensors.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;
using namespace mlir::gnn;
namespace cl = llvm::cl;

static cl::OptionCategory category("gnn-run options");
static cl::opt<std::string> programFile(cl::Positional, cl::Required,
                                        cl::desc("<program.mlir>"),
                                        cl::cat(category));
static cl::opt<std::string>
    graphFile("graph", cl::Required, cl::cat(category),
              cl::desc("safetensors file with the graph: 'src' and 'dst' "
                       "(int64 edge lists) and 'num_nodes' or 'num_src' and "
                       "'num_dst'; with several graph arguments, each "
                       "prefixed by its argument name ('g.src', ...)"));
static cl::opt<std::string>
    inputsFile("inputs", cl::cat(category),
               cl::desc("safetensors file with one tensor per non-graph "
                        "argument, named after it"));
static cl::opt<std::string>
    outFile("out", cl::Required, cl::cat(category),
            cl::desc("safetensors file for the results"));
static cl::opt<std::string>
    entryName("entry", cl::init("main"), cl::cat(category),
              cl::desc("function to run (default main)"));
static cl::opt<bool> noFuse("no-fuse", cl::cat(category),
                            cl::desc("run the unfused lowering"));
static cl::opt<bool> serial("serial", cl::cat(category),
                            cl::desc("run on one core"));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "gnn-run") << message << "\n";
  return 1;
}

/// The SSA names of the entry function's arguments, as written.
static std::vector<std::string> argumentNames(func::FuncOp fn,
                                              const AsmParserState &state) {
  std::vector<std::string> names;
  const AsmParserState::BlockDefinition *def =
      fn.isExternal() ? nullptr : state.getBlockDef(&fn.getBody().front());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    std::string name;
    if (def && i < def->arguments.size()) {
      llvm::SMRange loc = def->arguments[i].loc;
      name = std::string(loc.Start.getPointer(), loc.End.getPointer());
      if (!name.empty() && name[0] == '%')
        name.erase(0, 1);
    }
    names.push_back(name);
  }
  return names;
}

/// Reads a count stored as an int64 scalar or one-element tensor.
static llvm::Expected<int64_t> readCount(const TensorMap &tensors,
                                         const std::string &name) {
  auto it = tensors.find(name);
  if (it == tensors.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "graph file has no tensor '" + name + "'");
  const HostTensor &t = it->second;
  if (t.dtype != DType::I64 || t.numElements() != 1 || t.shape.size() > 1)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "graph tensor '" + name + "' must be one int64, got " + t.describe());
  return t.as<int64_t>()[0];
}

static llvm::Expected<gnn_graph *> buildGraph(const TensorMap &tensors,
                                              const std::string &prefix) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  const HostTensor *lists[2];
  const char *keys[2] = {"src", "dst"};
  for (int i = 0; i < 2; ++i) {
    auto it = tensors.find(prefix + keys[i]);
    if (it == tensors.end())
      return error("graph file has no tensor '" + prefix + keys[i] + "'");
    lists[i] = &it->second;
    if (lists[i]->dtype != DType::I64 || lists[i]->shape.size() != 1)
      return error("graph tensor '" + prefix + keys[i] +
                   "' must be a 1-D int64 tensor, got " + lists[i]->describe());
  }
  if (lists[0]->shape[0] != lists[1]->shape[0])
    return error("graph has " + llvm::Twine(lists[0]->shape[0]) +
                 " source ids but " + llvm::Twine(lists[1]->shape[0]) +
                 " destination ids");
  int64_t numSrc, numDst;
  if (tensors.count(prefix + "num_nodes")) {
    auto n = readCount(tensors, prefix + "num_nodes");
    if (!n)
      return n.takeError();
    numSrc = numDst = *n;
  } else {
    auto s = readCount(tensors, prefix + "num_src");
    if (!s)
      return s.takeError();
    auto d = readCount(tensors, prefix + "num_dst");
    if (!d)
      return d.takeError();
    numSrc = *s;
    numDst = *d;
  }
  gnn_graph *graph = nullptr;
  char message[512];
  if (gnn_graph_from_coo(numSrc, numDst, lists[0]->shape[0],
                         lists[0]->as<int64_t>(), lists[1]->as<int64_t>(),
                         &graph, message, sizeof(message)))
    return error("graph" + (prefix.empty() ? "" : " '" + prefix + "'") + ": " +
                 message);
  return graph;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "run compiled gnn programs\n");

  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  gnn::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(programFile);
  if (!buffer)
    return fail("cannot read '" + programFile +
                "': " + buffer.getError().message());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module(ModuleOp::create(UnknownLoc::get(&context)));
  AsmParserState parserState;
  if (failed(parseAsmSourceFile(sourceMgr, module->getBody(),
                                ParserConfig(&context), &parserState)) ||
      failed(verify(*module)))
    return 1;
  auto fn = module->lookupSymbol<func::FuncOp>(entryName);
  if (!fn)
    return fail("the program has no function '" + entryName + "'");
  std::vector<std::string> names = argumentNames(fn, parserState);

  auto graphs = readSafeTensors(graphFile);
  if (!graphs)
    return fail(llvm::toString(graphs.takeError()));
  TensorMap inputs;
  if (!inputsFile.empty()) {
    auto read = readSafeTensors(inputsFile);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    inputs = std::move(*read);
  }

  CompileOptions options;
  options.fuse = !noFuse;
  options.parallel = !serial;
  auto start = std::chrono::steady_clock::now();
  auto program =
      JitProgram::compile(std::move(module), entryName, names, options);
  if (!program)
    return fail(llvm::toString(program.takeError()));
  auto compiled = std::chrono::steady_clock::now();

  // Bind arguments by name.
  const std::vector<Parameter> &params = (*program)->getParameters();
  unsigned graphParams =
      llvm::count_if(params, [](const Parameter &p) { return p.isGraph; });
  std::vector<std::unique_ptr<gnn_graph, void (*)(gnn_graph *)>> owned;
  std::vector<Argument> args;
  for (const Parameter &p : params) {
    if (p.isGraph) {
      std::string prefix = p.name + ".";
      if (graphParams == 1 && !graphs->count(prefix + "src"))
        prefix.clear();
      auto graph = buildGraph(*graphs, prefix);
      if (!graph)
        return fail(llvm::toString(graph.takeError()));
      owned.emplace_back(*graph, gnn_graph_free);
      args.push_back({*graph, nullptr});
      continue;
    }
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      return fail("no input tensor named '" + p.name + "'" +
                  (inputsFile.empty() ? " (no --inputs file given)" : ""));
    args.push_back({nullptr, &it->second});
  }
  for (const auto &[name, tensor] : inputs)
    if (llvm::none_of(params, [&](const Parameter &p) {
          return !p.isGraph && p.name == name;
        }))
      return fail("input tensor '" + name + "' is not an argument of '" +
                  entryName + "'");

  auto results = (*program)->run(args);
  if (!results)
    return fail(llvm::toString(results.takeError()));
  auto ran = std::chrono::steady_clock::now();

  TensorMap out;
  for (auto [i, r] : llvm::enumerate(*results))
    out[(*program)->getResults()[i].name] = std::move(r);
  if (auto e = writeSafeTensors(outFile, out))
    return fail(llvm::toString(std::move(e)));
  auto ms = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  llvm::errs() << "gnn-run: compiled @" << entryName << " in "
               << llvm::format("%.1f", ms(start, compiled)) << " ms, ran in "
               << llvm::format("%.3f", ms(compiled, ran)) << " ms ("
               << (noFuse ? "unfused" : "fused") << "), wrote " << out.size()
               << " result(s) to " << outFile << "\n";
  return 0;
}
