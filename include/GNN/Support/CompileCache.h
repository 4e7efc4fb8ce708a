//===- CompileCache.h - compiled object code kept on disk -------*- C++ -*-===//
//
// Part of gnnc (no MLIR). Object code of compiled programs, stored under a
// key that covers everything that changes the code, so that a later run of
// the same program skips compilation. Entries are checksummed (a damaged or
// foreign entry is a miss and is removed), written to a temporary file and
// renamed into place (concurrent writers are safe), and the directory is
// kept under a size limit by evicting the least recently used entries.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_COMPILECACHE_H
#define GNN_SUPPORT_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

/// Hashes the parts of a key (each length-prefixed, so no two lists of
/// parts collide by concatenation) into 64 hex digits.
std::string compileCacheKey(llvm::ArrayRef<llvm::StringRef> parts);

/// The identity of the file that holds gnnc's code (the tool, or the
/// Python extension module; its path, size and modification time): part
/// of every key, so that a rebuilt gnnc never runs code that an older
/// build compiled.
std::string executableIdentity();

/// An entry's bytes: a magic, the key, the objects' count and sizes, the
/// objects, then a SHA-256 of all that.
std::string encodeCacheEntry(llvm::StringRef key,
                             llvm::ArrayRef<std::string> objects);
/// The objects of an entry encodeCacheEntry made for `key`; nothing for
/// any other bytes (truncated, corrupt, another key's or format's).
std::optional<std::vector<std::string>> decodeCacheEntry(llvm::StringRef key,
                                                         llvm::StringRef data);

class CompileCache {
public:
  static constexpr uint64_t kDefaultMaxBytes = 512ull << 20;

  explicit CompileCache(std::string directory,
                        uint64_t maxBytes = kDefaultMaxBytes)
      : directory(std::move(directory)), maxBytes(maxBytes) {}

  /// The objects stored under `key`, or nothing: missing, or damaged
  /// (truncated, corrupt, another key's or another format's), which is
  /// removed. A hit marks the entry as recently used.
  std::optional<std::vector<std::string>> load(llvm::StringRef key);

  /// Stores `objects` under `key` (replacing any entry), then evicts least
  /// recently used entries while the directory holds more than the limit.
  llvm::Error store(llvm::StringRef key, llvm::ArrayRef<std::string> objects);

  /// Stores and, the first time storing fails, says on stderr that gnnc
  /// goes on without the cache.
  void storeOrWarn(llvm::StringRef key, llvm::ArrayRef<std::string> objects);

  /// The file holding `key`'s entry.
  std::string entryPath(llvm::StringRef key) const;
  const std::string &getDirectory() const { return directory; }

private:
  void evict();

  std::string directory;
  uint64_t maxBytes;
  /// Programs compiled on several threads may share one cache: the warning
  /// is printed once.
  std::atomic<bool> warned{false};
};

} // namespace mlir::gnn

#endif // GNN_SUPPORT_COMPILECACHE_H
