//===- DirectoryLock.h - one writer per output directory --------*- C++ -*-===//
//
// Part of gnnc. A training run writes its checkpoints and state into one
// directory; two runs writing into the same one would replace each
// other's files. The first takes an advisory lock (flock) on a file in
// the directory that names its pid; a second is refused. The lock ends
// with the process, however it ends, so a killed run leaves none behind.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_DIRECTORYLOCK_H
#define GNN_SUPPORT_DIRECTORYLOCK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::gnn {

class DirectoryLock {
public:
  /// The name of the lock file in a locked directory.
  static constexpr const char *kFileName = ".gnnc.lock";

  /// Locks `dir` for this process; an error naming the holder's pid if
  /// another process holds it (`what` names the directory, "--out-dir").
  /// Once locked, removes the temporary files (`*.tmp-*`) that atomic
  /// writes of a killed process left in it.
  static llvm::Expected<DirectoryLock> acquire(const std::string &dir,
                                               llvm::StringRef what);

  DirectoryLock(DirectoryLock &&other) : fd(other.fd) { other.fd = -1; }
  DirectoryLock &operator=(DirectoryLock &&other);
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;
  ~DirectoryLock();

private:
  explicit DirectoryLock(int fd) : fd(fd) {}
  int fd = -1;
};

} // namespace mlir::gnn

#endif // GNN_SUPPORT_DIRECTORYLOCK_H
