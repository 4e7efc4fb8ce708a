//===- DirectoryLock.cpp - one writer per output directory ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/DirectoryLock.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <unistd.h>

using namespace mlir::gnn;

static llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Removes `*.tmp-*` files in `dir`: what an atomic write leaves when its
/// process is killed before the rename.
static void removeTemporaries(const std::string &dir) {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.contains(".tmp-") &&
        it->type() == llvm::sys::fs::file_type::regular_file)
      llvm::sys::fs::remove(it->path());
  }
}

llvm::Expected<DirectoryLock> DirectoryLock::acquire(const std::string &dir,
                                                     llvm::StringRef what) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, kFileName);
  int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return failure("cannot lock " + what + " '" + dir +
                   "': " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int why = errno;
    char owner[32] = "";
    ssize_t n = ::pread(fd, owner, sizeof(owner) - 1, 0);
    ::close(fd);
    if (why != EWOULDBLOCK)
      return failure("cannot lock " + what + " '" + dir +
                     "': " + std::strerror(why));
    std::string pid = n > 0 ? llvm::StringRef(owner, n).trim().str() : "";
    return failure(what + " '" + dir + "' is in use by another run" +
                   (pid.empty() ? "" : " (pid " + pid + ")") +
                   "; give another directory or wait for it to end");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    ::close(fd);
    return failure("cannot lock " + what + " '" + dir +
                   "': " + std::strerror(errno));
  }
  removeTemporaries(dir);
  return DirectoryLock(fd);
}

DirectoryLock &DirectoryLock::operator=(DirectoryLock &&other) {
  if (this != &other) {
    if (fd >= 0)
      ::close(fd);
    fd = other.fd;
    other.fd = -1;
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd >= 0)
    ::close(fd);
}
