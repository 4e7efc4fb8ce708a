//===- Program.cpp - gnn programs from source to results ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/Program.h"

#include "GNN/IR/GNNOps.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/ParserHazards.h"
#include "GNN/Support/ParserQuarantine.h"
#include "GNN/Support/SafeTensors.h"
#include "GNN/Transforms/Differentiate.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::gnn;
using llvm::Error;
using llvm::Expected;
using llvm::Twine;

char ReportedError::ID = 0;
char MissingArgument::ID = 0;

static Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// The names the entry function's arguments are bound by: their gnn.name
/// attributes, else their SSA names as written.
std::vector<std::string> argumentNames(func::FuncOp fn,
                                       const AsmParserState &state) {
  std::vector<std::string> names;
  const AsmParserState::BlockDefinition *def =
      fn.isExternal() ? nullptr : state.getBlockDef(&fn.getBody().front());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    std::string name;
    // An explicit name first: a program gnn-opt printed calls its
    // arguments %arg0, %arg1, ... but keeps their gnn.name attributes.
    if (auto attr =
            fn.getArgAttrOfType<StringAttr>(i, gnn::GNNDialect::kNameAttrName))
      name = attr.str();
    else if (def && i < def->arguments.size()) {
      llvm::SMRange loc = def->arguments[i].loc;
      name = std::string(loc.Start.getPointer(), loc.End.getPointer());
      if (!name.empty() && name[0] == '%')
        name.erase(0, 1);
    }
    names.push_back(name);
  }
  return names;
}

/// Parses `sourceMgr`'s buffer into a module (a program written as one
/// `module { ... }`, as gnn-opt prints it, is that module).
LogicalResult parse(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                    OwningOpRef<ModuleOp> &module, AsmParserState &state) {
  module = ModuleOp::create(UnknownLoc::get(&context));
  LogicalResult parsed = failure();
  {
    // A failed parse can write into memory the parser freed
    // (ParserQuarantine.h).
    ParserQuarantine quarantine;
    parsed = parseAsmSourceFile(sourceMgr, module->getBody(),
                                ParserConfig(&context), &state);
  }
  if (failed(parsed) || failed(verify(*module)))
    return failure();
  if (Block *body = module->getBody(); llvm::hasSingleElement(*body))
    if (auto inner = dyn_cast<ModuleOp>(body->front())) {
      inner->remove();
      module = OwningOpRef<ModuleOp>(inner);
    }
  return success();
}

/// The program is compiled into this process: it may not call or write the
/// process's own symbols, nor take LLVM hours to compile; its large stack
/// buffers go to the heap (a thread's stack is a few MiB).
LogicalResult admit(ModuleOp module) {
  MLIRContext &context = *module.getContext();
  // The errors point at the source line; the op's whole text would only
  // repeat it.
  bool printOp = context.shouldPrintOpOnDiagnostic();
  context.printOpOnDiagnostic(false);
  PassManager pm(&context);
  pm.addPass(gnn::createCheckProgramSizePass());
  pm.addPass(gnn::createCheckSelfContainedPass());
  pm.addPass(gnn::createCheckVectorSizesPass());
  pm.addPass(gnn::createHeapLargeAllocasPass());
  LogicalResult admitted = pm.run(module);
  context.printOpOnDiagnostic(printOp);
  return admitted;
}

/// Adds @<entry>_grad (a fresh name) to `module`: `fn`'s results, then the
/// gradient of its first with respect to each float argument, named after
/// the arguments as `names` binds them. Attention written the DGL way is
/// fused first, so that its backward is the fused one too.
Expected<std::string> differentiate(ModuleOp module, func::FuncOp fn,
                                    llvm::ArrayRef<std::string> names,
                                    bool fuse) {
  MLIRContext *context = module.getContext();
  SmallVector<unsigned> wrt;
  for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
    if (!names[i].empty())
      fn.setArgAttr(i, gnn::GNNDialect::kNameAttrName,
                    StringAttr::get(context, names[i]));
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && isa<FloatType>(tensor.getElementType()))
      wrt.push_back(i);
  }
  if (fuse) {
    PassManager pm(context);
    pm.addNestedPass<func::FuncOp>(gnn::createFuseAttentionPass());
    if (failed(pm.run(module)))
      return fail("fusing attention before differentiating failed");
  }
  std::string gradName = fn.getName().str() + "_grad";
  for (int i = 1; module.lookupSymbol(gradName); ++i)
    gradName = fn.getName().str() + "_grad" + std::to_string(i);
  if (failed(gnn::differentiateFunction(fn, wrt, gradName)))
    return llvm::make_error<ReportedError>();
  return gradName;
}
} // namespace

Expected<std::unique_ptr<Program>> Program::compile(
    MLIRContext &context, std::unique_ptr<llvm::MemoryBuffer> source,
    const ProgramOptions &options, llvm::raw_ostream &diagnostics) {
  if (reportParserHazard(source->getMemBufferRef(), diagnostics))
    return llvm::make_error<ReportedError>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(source), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnostics);
  OwningOpRef<ModuleOp> module;
  AsmParserState state;
  if (failed(parse(context, sourceMgr, module, state)) ||
      failed(admit(*module)))
    return llvm::make_error<ReportedError>();
  auto fn = module->lookupSymbol<func::FuncOp>(options.entry);
  if (!fn)
    return fail("the program has no function '" + options.entry + "'");
  std::vector<std::string> names = argumentNames(fn, state);
  std::unique_ptr<Program> program(new Program());
  program->entry = options.entry;
  if (options.grad) {
    Expected<std::string> gradName =
        differentiate(*module, fn, names, options.compile.fuse);
    if (!gradName)
      return gradName.takeError();
    program->entry = *gradName;
  }
  auto jit = JitProgram::compile(std::move(module), program->entry, names,
                                 options.compile);
  if (!jit)
    return jit.takeError();
  program->jit = std::move(*jit);
  program->jit->setTapeBudget(options.tapeBudget);
  return program;
}

bool Program::parses(MLIRContext &context, llvm::MemoryBufferRef source,
                     llvm::raw_ostream &diagnostics) {
  if (reportParserHazard(source, diagnostics))
    return false;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(source),
                               llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnostics);
  OwningOpRef<ModuleOp> module;
  AsmParserState state;
  return succeeded(parse(context, sourceMgr, module, state));
}

Expected<std::unique_ptr<Program>>
Program::compileFile(MLIRContext &context, llvm::StringRef path,
                     const ProgramOptions &options,
                     llvm::raw_ostream &diagnostics) {
  auto buffer = readInputFile(path, /*isText=*/true);
  if (!buffer)
    return fail("cannot read '" + path +
                "': " + llvm::toString(buffer.takeError()));
  return compile(context, std::move(*buffer), options, diagnostics);
}

Expected<std::unique_ptr<Program>>
Program::compileString(MLIRContext &context, llvm::StringRef text,
                       const ProgramOptions &options, llvm::StringRef name,
                       llvm::raw_ostream &diagnostics) {
  return compile(context, llvm::MemoryBuffer::getMemBufferCopy(text, name),
                 options, diagnostics);
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

namespace {
/// Reads a count stored as an int64 scalar or one-element tensor.
Expected<int64_t> readCount(const TensorMap &tensors, const std::string &name) {
  auto it = tensors.find(name);
  if (it == tensors.end())
    return fail("graph file has no tensor '" + name + "'");
  const HostTensor &t = it->second;
  if (t.dtype != DType::I64 || t.numElements() != 1 || t.shape.size() > 1)
    return fail("graph tensor '" + name + "' must be one int64, got " +
                t.describe());
  return t.as<int64_t>()[0];
}

/// Rows that the program requires of a tensor argument in terms of one
/// graph's counts: checked against the graph's counts before the graph is
/// built, so that a bad count is an error before anything large is
/// allocated.
struct CountCheck {
  RowRequirement::Kind kind;
  std::string tensor;
  int64_t rows;
};

Error checkCounts(llvm::ArrayRef<CountCheck> checks, int64_t numSrc,
                  int64_t numDst, int64_t numEdges,
                  const std::string &graphName) {
  for (const CountCheck &c : checks) {
    if (c.kind == RowRequirement::EdgeIds)
      continue;
    int64_t count = c.kind == RowRequirement::SrcRows   ? numSrc
                    : c.kind == RowRequirement::DstRows ? numDst
                                                        : numEdges;
    const char *what = c.kind == RowRequirement::SrcRows   ? "source nodes"
                       : c.kind == RowRequirement::DstRows ? "destination nodes"
                                                           : "edges";
    if (count != c.rows)
      return fail("argument '" + c.tensor + "' has " + Twine(c.rows) +
                  " rows, but graph '" + graphName + "' has " + Twine(count) +
                  " " + what);
  }
  return Error::success();
}

Expected<gnn_graph *> buildGraph(const TensorMap &tensors,
                                 const std::string &prefix,
                                 const std::string &graphName,
                                 llvm::ArrayRef<CountCheck> checks) {
  const HostTensor *lists[2];
  const char *keys[2] = {"src", "dst"};
  for (int i = 0; i < 2; ++i) {
    auto it = tensors.find(prefix + keys[i]);
    if (it == tensors.end())
      return fail("graph file has no tensor '" + prefix + keys[i] + "'");
    lists[i] = &it->second;
    if (lists[i]->dtype != DType::I64 || lists[i]->shape.size() != 1)
      return fail("graph tensor '" + prefix + keys[i] +
                  "' must be a 1-D int64 tensor, got " + lists[i]->describe());
  }
  int64_t numEdges = lists[0]->shape[0];
  if (numEdges != lists[1]->shape[0])
    return fail("graph has " + Twine(numEdges) + " source ids but " +
                Twine(lists[1]->shape[0]) + " destination ids");
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
  if (Error e = checkCounts(checks, numSrc, numDst, numEdges, graphName))
    return std::move(e);
  gnn_graph *graph = nullptr;
  char message[512];
  if (gnn_graph_from_coo(numSrc, numDst, numEdges, lists[0]->as<int64_t>(),
                         lists[1]->as<int64_t>(), &graph, message,
                         sizeof(message)))
    return fail("graph" + (prefix.empty() ? "" : " '" + prefix + "'") + ": " +
                message);
  return graph;
}
} // namespace

Expected<ProgramArguments> Program::bind(const TensorMap *graphs,
                                         const TensorMap &inputs) const {
  const std::vector<Parameter> &params = getParameters();
  const EntryPoint &signature = *jit->lookup(entry);
  unsigned graphParams =
      llvm::count_if(params, [](const Parameter &p) { return p.isGraph; });
  ProgramArguments bound;
  for (auto [i, p] : llvm::enumerate(params)) {
    if (p.isGraph) {
      if (!graphs)
        return llvm::make_error<MissingArgument>(entry, p.name, true);
      std::string prefix = p.name + ".";
      if (graphParams == 1 && !graphs->count(prefix + "src"))
        prefix.clear();
      std::vector<CountCheck> checks;
      for (const RowRequirement &r : signature.requirements) {
        auto input = inputs.find(params[r.arg].name);
        if (r.graphArg == i && input != inputs.end() &&
            !input->second.shape.empty())
          checks.push_back({r.kind, input->first, input->second.shape[0]});
      }
      auto graph = buildGraph(*graphs, prefix, p.name, checks);
      if (!graph)
        return graph.takeError();
      bound.graphs.emplace_back(*graph, gnn_graph_free);
      bound.arguments.push_back({*graph, nullptr});
      continue;
    }
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      return llvm::make_error<MissingArgument>(entry, p.name, false);
    bound.arguments.push_back({nullptr, &it->second});
  }
  for (const auto &[name, tensor] : inputs)
    if (llvm::none_of(params, [&](const Parameter &p) {
          return !p.isGraph && p.name == name;
        }))
      return fail("input tensor '" + name + "' is not an argument of '" +
                  entry + "'");
  return bound;
}

Expected<TensorMap> Program::run(const ProgramArguments &arguments) {
  auto results = jit->run(arguments.arguments);
  if (!results)
    return results.takeError();
  TensorMap out;
  for (auto [i, r] : llvm::enumerate(*results))
    out[getResults()[i].name] = std::move(r);
  return out;
}

Expected<TensorMap> Program::run(const TensorMap *graphs,
                                 const TensorMap &inputs) {
  Expected<ProgramArguments> arguments = bind(graphs, inputs);
  if (!arguments)
    return arguments.takeError();
  return run(*arguments);
}
