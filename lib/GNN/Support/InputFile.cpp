//===- InputFile.cpp - files read whole, with a bound ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

using namespace llvm;

Expected<std::unique_ptr<MemoryBuffer>>
mlir::gnn::readInputFile(StringRef path, bool isText,
                         uint64_t maxStreamedBytes) {
  auto fail = [&](const Twine &why) {
    return createStringError(inconvertibleErrorCode(), why);
  };
  sys::fs::file_status status;
  bool standardInput = path == "-";
  if (!standardInput) {
    if (std::error_code ec = sys::fs::status(path, status))
      return fail(ec.message());
    if (status.type() == sys::fs::file_type::directory_file)
      return fail("is a directory");
    if (status.type() == sys::fs::file_type::regular_file) {
      // Text is null-terminated for parsers; binary files may be mapped.
      ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(
          path, isText, /*RequiresNullTerminator=*/isText);
      if (!buffer)
        return fail(buffer.getError().message());
      return std::move(*buffer);
    }
  }
  // A device, a pipe or standard input: read in chunks, at most the bound.
  int fd = 0;
  if (!standardInput) {
    if (std::error_code ec = sys::fs::openFileForRead(
            path, fd, isText ? sys::fs::OF_Text : sys::fs::OF_None))
      return fail(ec.message());
  }
  SmallString<0> contents;
  while (true) {
    uint64_t room = maxStreamedBytes + 1 - contents.size();
    size_t chunk = size_t(std::min<uint64_t>(room, 1 << 20));
    size_t before = contents.size();
    contents.resize_for_overwrite(before + chunk);
    Expected<size_t> got = sys::fs::readNativeFile(
        sys::fs::convertFDToNativeFile(fd),
        MutableArrayRef<char>(contents.data() + before, chunk));
    if (!got) {
      if (!standardInput)
        (void)sys::Process::SafelyCloseFileDescriptor(fd);
      return fail(toString(got.takeError()));
    }
    contents.truncate(before + *got);
    if (*got == 0)
      break;
    if (contents.size() > maxStreamedBytes) {
      if (!standardInput)
        (void)sys::Process::SafelyCloseFileDescriptor(fd);
      return fail("is not a regular file and holds more than " +
                  Twine(maxStreamedBytes) + " bytes");
    }
  }
  if (!standardInput)
    (void)sys::Process::SafelyCloseFileDescriptor(fd);
  return MemoryBuffer::getMemBufferCopy(contents, path);
}
