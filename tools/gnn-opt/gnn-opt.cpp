//===- gnn-opt.cpp - the mlir-opt of the gnn dialect ----------------------===//
//
// Part of gnnc. Parses, verifies, transforms and prints gnn IR, with the
// upstream dialects and passes that the gnn lowerings produce and use.
// Unlike mlir-opt, `-o FILE` is written whole or not at all: a failed run
// leaves an existing FILE as it was, an endless input (a device, a pipe)
// is read only up to a bound, a parse that fails cannot corrupt the heap
// (ParserQuarantine.h), and MLIR bytecode, whose reader crashes on damaged
// files, is read only when the user vouches for it.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/InitAll.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/ParserHazards.h"
#include "GNN/Support/ParserQuarantine.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

static llvm::cl::opt<bool> trustedBytecode(
    "trusted-bytecode",
    llvm::cl::desc("read an input in MLIR bytecode (MLIR 19's bytecode "
                   "reader crashes on damaged files: only for files MLIR "
                   "wrote and nobody changed)"),
    llvm::cl::init(false));

/// mlir-opt's work on each chunk of the input (one, or those that
/// `--split-input-file` makes): a chunk with text that crashes MLIR 19's
/// parsers (ParserHazards.h) is an error, the others are parsed inside a
/// ParserQuarantine that ends where the pass pipeline is set up, once the
/// parse has succeeded, or when the chunk is done.
static mlir::LogicalResult optimize(llvm::raw_ostream &os,
                                    std::unique_ptr<llvm::MemoryBuffer> input,
                                    mlir::DialectRegistry &registry,
                                    const mlir::MlirOptMainConfig &config) {
  auto chunk = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                   llvm::raw_ostream &out) -> mlir::LogicalResult {
    if (mlir::gnn::reportParserHazard(buffer->getMemBufferRef()))
      return mlir::failure();
    mlir::gnn::ParserQuarantine quarantine;
    mlir::MlirOptMainConfig one = config;
    one.splitInputFile("");
    one.outputSplitMarker("");
    one.setPassPipelineSetupFn([&](mlir::PassManager &pm) {
      quarantine.release();
      return config.setupPassPipeline(pm);
    });
    return mlir::MlirOptMain(out, std::move(buffer), registry, one);
  };
  return mlir::splitAndProcessBuffer(std::move(input), chunk, os,
                                     config.inputSplitMarker(),
                                     config.outputSplitMarker());
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::gnn::installFatalErrorHandlers("gnn-opt");
  mlir::registerAllPasses();
  mlir::gnn::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::gnn::registerAllDialectsAndExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "gnn optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  auto fail = [](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "gnn-opt") << message << "\n";
    return 1;
  };
  auto input = mlir::gnn::readInputFile(inputFile, /*isText=*/true);
  if (!input)
    return fail("cannot read '" + inputFile +
                "': " + llvm::toString(input.takeError()));
  if (mlir::isBytecode((*input)->getMemBufferRef()) && !trustedBytecode)
    return fail("'" + inputFile +
                "' is MLIR bytecode, which gnn-opt reads only with "
                "--trusted-bytecode (MLIR 19's bytecode reader crashes on "
                "damaged files)");
  if (outputFile == "-")
    return mlir::gnn::finishStandardOutput(
        "gnn-opt", mlir::asMainReturnCode(optimize(
                       llvm::outs(), std::move(*input), registry, config)));
  std::string output;
  llvm::raw_string_ostream os(output);
  if (mlir::failed(optimize(os, std::move(*input), registry, config)))
    return 1;
  if (llvm::Error e = mlir::gnn::writeFileAtomically(outputFile, output))
    return fail(llvm::toString(std::move(e)));
  return 0;
}
