//===- OutputFile.cpp - files written whole or not at all -----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

Error mlir::gnn::writeFileAtomically(StringRef path, StringRef content) {
  return writeFileAtomically(path, [&](raw_ostream &out) {
    out << content;
    return Error::success();
  });
}

/// The stream's write error, if it has one (cleared: a stream destroyed
/// with an error set aborts the process).
static std::optional<std::string> takeError(raw_fd_ostream &out) {
  out.flush();
  if (!out.has_error())
    return std::nullopt;
  std::string why = out.error().message();
  out.clear_error();
  return why;
}

/// Runs `write` on `out` and flushes it: the callback's error, or else the
/// stream's, if either failed.
static std::optional<std::string>
writeTo(raw_fd_ostream &out, function_ref<Error(raw_ostream &)> write) {
  std::optional<std::string> why;
  if (Error e = write(out))
    why = toString(std::move(e));
  std::optional<std::string> streamError = takeError(out);
  return why ? why : streamError;
}

Error mlir::gnn::writeFileAtomically(StringRef path,
                                     function_ref<Error(raw_ostream &)> write) {
  auto failure = [&](const Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "cannot write '" + path + "': " + why);
  };
  if (path == "-") {
    if (std::optional<std::string> why = writeTo(outs(), write))
      return failure(*why);
    return Error::success();
  }
  // A device, pipe or socket (/dev/stdout, a FIFO) is written where it is:
  // replacing it would not write it, and would remove it.
  sys::fs::file_status status;
  if (!sys::fs::status(path, status) && sys::fs::exists(status) &&
      !sys::fs::is_regular_file(status) && !sys::fs::is_directory(status)) {
    std::error_code ec;
    raw_fd_ostream out(path, ec);
    if (ec)
      return failure(ec.message());
    if (std::optional<std::string> why = writeTo(out, write))
      return failure(*why);
    return Error::success();
  }
  // A temporary file beside the target (removed if the process is
  // interrupted) replaces it only once all of it is written: a full disk
  // or a failed write leaves the target as it was. (llvm::writeToOutput
  // renames before it checks the stream, then aborts on its error.)
  Expected<sys::fs::TempFile> temporary = sys::fs::TempFile::create(
      path + ".tmp-%%%%%%%%", sys::fs::all_read | sys::fs::all_write);
  if (!temporary)
    return failure(toString(temporary.takeError()));
  std::optional<std::string> why;
  {
    raw_fd_ostream out(temporary->FD, /*shouldClose=*/false);
    why = writeTo(out, write);
  }
  if (why) {
    consumeError(temporary->discard());
    return failure(*why);
  }
  if (Error e = temporary->keep(path))
    return failure(toString(std::move(e)));
  return Error::success();
}

int mlir::gnn::finishStandardOutput(StringRef tool, int rc) {
  std::optional<std::string> why = takeError(outs());
  if (!why)
    return rc;
  WithColor::error(errs(), tool)
      << "cannot write standard output: " << *why << "\n";
  return rc ? rc : 1;
}
