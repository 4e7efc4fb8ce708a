//===- CompileCache.cpp - compiled object code kept on disk ---------------===//
//
// Part of gnnc.
//
// An entry is one file, <key>.gnnobj:
//   "GNNCOBJ" 0x01 | u32 key length | key | u32 count | u64 size x count |
//   the objects | SHA-256 of everything before it
// (integers little-endian). Anything that does not read back exactly so is
// a miss.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/CompileCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace mlir::gnn;

namespace {
constexpr char kMagicBytes[] = {'G', 'N', 'N', 'C', 'O', 'B', 'J', 1};
const StringRef kMagic(kMagicBytes, sizeof(kMagicBytes));
constexpr StringLiteral kEntrySuffix(".gnnobj");
constexpr size_t kDigestBytes = 32;
/// More objects than any split of one module makes: a larger count is a
/// damaged entry.
constexpr uint32_t kMaxObjects = 4096;
/// Temporary files older than this were left by a process that died.
constexpr std::chrono::hours kStaleTemporary(1);

Error error(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

void putU32(std::string &out, uint32_t v) {
  char bytes[4];
  support::endian::write32le(bytes, v);
  out.append(bytes, 4);
}
void putU64(std::string &out, uint64_t v) {
  char bytes[8];
  support::endian::write64le(bytes, v);
  out.append(bytes, 8);
}

/// Reads integers and byte runs off the front of an entry; any read past
/// its end fails (and keeps failing).
class Reader {
public:
  explicit Reader(StringRef data) : rest(data) {}
  bool ok() const { return good; }
  uint32_t u32() { return take(4) ? support::endian::read32le(last) : 0; }
  uint64_t u64() { return take(8) ? support::endian::read64le(last) : 0; }
  StringRef bytes(uint64_t n) {
    return take(n) ? StringRef(last, n) : StringRef();
  }
  uint64_t remaining() const { return rest.size(); }

private:
  bool take(uint64_t n) {
    if (!good || n > rest.size())
      return good = false;
    last = rest.data();
    rest = rest.drop_front(n);
    return true;
  }
  StringRef rest;
  const char *last = nullptr;
  bool good = true;
};

} // namespace

std::string mlir::gnn::encodeCacheEntry(StringRef key,
                                        ArrayRef<std::string> objects) {
  std::string out(kMagic);
  putU32(out, key.size());
  out += key;
  putU32(out, objects.size());
  for (const std::string &o : objects)
    putU64(out, o.size());
  for (const std::string &o : objects)
    out += o;
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(out));
  out.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  return out;
}

std::optional<std::vector<std::string>>
mlir::gnn::decodeCacheEntry(StringRef key, StringRef data) {
  if (data.size() < kMagic.size() + kDigestBytes)
    return std::nullopt;
  StringRef body = data.drop_back(kDigestBytes);
  std::array<uint8_t, 32> digest = SHA256::hash(arrayRefFromStringRef(body));
  if (data.take_back(kDigestBytes) !=
      StringRef(reinterpret_cast<const char *>(digest.data()), digest.size()))
    return std::nullopt;
  Reader r(body);
  if (r.bytes(kMagic.size()) != kMagic)
    return std::nullopt;
  uint32_t keyLength = r.u32();
  if (r.bytes(keyLength) != key || !r.ok())
    return std::nullopt;
  uint32_t count = r.u32();
  if (!r.ok() || count == 0 || count > kMaxObjects)
    return std::nullopt;
  std::vector<uint64_t> sizes;
  for (uint32_t i = 0; i < count; ++i)
    sizes.push_back(r.u64());
  std::vector<std::string> objects;
  for (uint64_t size : sizes) {
    StringRef object = r.bytes(size);
    if (!r.ok())
      return std::nullopt;
    objects.push_back(object.str());
  }
  if (r.remaining() != 0)
    return std::nullopt;
  return objects;
}

std::string mlir::gnn::compileCacheKey(ArrayRef<StringRef> parts) {
  SHA256 hash;
  for (StringRef part : parts) {
    std::string length;
    putU64(length, part.size());
    hash.update(length);
    hash.update(part);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return toHex(digest, /*LowerCase=*/true);
}

std::string mlir::gnn::executableIdentity() {
  // The file that holds this code: the tool, or the Python extension module
  // that a Python interpreter loaded (whose own executable says nothing
  // about which gnnc compiled an entry).
  Dl_info info;
  std::string path;
  if (dladdr(reinterpret_cast<void *>(&mlir::gnn::executableIdentity), &info) &&
      info.dli_fname)
    path = info.dli_fname;
  if (path.empty() || !sys::fs::exists(path))
    path = sys::fs::getMainExecutable(nullptr, nullptr);
  sys::fs::file_status status;
  if (path.empty() || sys::fs::status(path, status))
    return "unknown executable";
  return path + ":" + std::to_string(status.getSize()) + ":" +
         std::to_string(
             status.getLastModificationTime().time_since_epoch().count());
}

std::string CompileCache::entryPath(StringRef key) const {
  SmallString<256> path(directory);
  sys::path::append(path, key + kEntrySuffix);
  return std::string(path);
}

/// The bytes of cache entry `path` if it is a regular file (not a link, a
/// FIFO or a device) of at most `limit` bytes; none otherwise. Opening does
/// not follow links or block, and the read is bounded by the size.
static std::unique_ptr<MemoryBuffer> readEntry(const std::string &path,
                                               uint64_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return nullptr;
  struct stat st;
  std::unique_ptr<MemoryBuffer> bytes;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      uint64_t(st.st_size) <= limit) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> read = MemoryBuffer::getOpenFile(
        sys::fs::convertFDToNativeFile(fd), path, uint64_t(st.st_size),
        /*RequiresNullTerminator=*/false);
    if (read)
      bytes = std::move(*read);
  }
  ::close(fd);
  return bytes;
}

std::optional<std::vector<std::string>> CompileCache::load(StringRef key) {
  std::string path = entryPath(key);
  // An entry is never larger than the whole cache may be.
  std::unique_ptr<MemoryBuffer> file = readEntry(path, maxBytes);
  if (!file) {
    // Anything but a readable regular file of bounded size (a FIFO, a link
    // to /dev/zero, a huge sparse file) is removed and recompiled.
    sys::fs::file_status status;
    if (!sys::fs::status(path, status, /*follow=*/false) &&
        sys::fs::exists(status))
      (void)sys::fs::remove(path);
    return std::nullopt;
  }
  std::optional<std::vector<std::string>> objects =
      decodeCacheEntry(key, file->getBuffer());
  if (!objects) {
    // Recompiled and stored again by the caller.
    (void)sys::fs::remove(path);
    return std::nullopt;
  }
  // Least recently used entries go first when the cache is full.
  int fd;
  if (!sys::fs::openFileForWrite(path, fd, sys::fs::CD_OpenExisting,
                                 sys::fs::OF_Append)) {
    (void)sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    (void)sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return objects;
}

Error CompileCache::store(StringRef key, ArrayRef<std::string> objects) {
  if (directory.empty())
    return error("no cache directory (set GNNC_CACHE_DIR or HOME)");
  if (std::error_code ec = sys::fs::create_directories(directory))
    return error("cannot create '" + directory + "': " + ec.message());
  std::string entry = encodeCacheEntry(key, objects);
  // Written beside the entry and renamed over it: a reader sees the old
  // entry or the whole new one, and concurrent writers of one key each
  // rename a complete file.
  SmallString<256> temporary;
  int fd;
  if (std::error_code ec = sys::fs::createUniqueFile(
          entryPath(key) + ".tmp-%%%%%%%%", fd, temporary))
    return error("cannot write in '" + directory + "': " + ec.message());
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << entry;
    out.close();
    if (out.has_error()) {
      std::string why = out.error().message();
      out.clear_error();
      (void)sys::fs::remove(temporary);
      return error("cannot write '" + temporary + "': " + why);
    }
  }
  if (std::error_code ec = sys::fs::rename(temporary, entryPath(key))) {
    (void)sys::fs::remove(temporary);
    return error("cannot write '" + entryPath(key) + "': " + ec.message());
  }
  evict();
  return Error::success();
}

void CompileCache::storeOrWarn(StringRef key, ArrayRef<std::string> objects) {
  Error e = store(key, objects);
  if (!e)
    return;
  std::string why = toString(std::move(e));
  if (warned.exchange(true))
    return;
  WithColor::warning(errs(), "gnnc")
      << "compile cache not written (" << why << "); compiling without it\n";
}

void CompileCache::evict() {
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (sys::fs::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    ErrorOr<sys::fs::basic_file_status> status = it->status();
    if (!status || status->type() != sys::fs::file_type::regular_file)
      continue;
    if (name.contains(".tmp-")) {
      if (now - status->getLastModificationTime() > kStaleTemporary)
        (void)sys::fs::remove(it->path());
      continue;
    }
    if (!name.ends_with(kEntrySuffix))
      continue;
    entries.push_back(
        {it->path(), status->getSize(), status->getLastModificationTime()});
    total += status->getSize();
  }
  if (total <= maxBytes)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &e : entries) {
    if (total <= maxBytes)
      break;
    if (!sys::fs::remove(e.path))
      total -= e.size;
  }
}
