//===- CompileCacheTest.cpp - compiled object code kept on disk -----------===//
//
// Part of gnnc. The cache's storage: hits, misses, damaged and foreign
// entries, writers that cannot write, least-recently-used eviction.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/CompileCache.h"
#include "GNN/Support/Environment.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <chrono>
#include <thread>

using namespace mlir::gnn;

namespace {
class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gnnc-cache", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string read(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : "";
  }
  void write(const std::string &path, llvm::StringRef content) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    ASSERT_FALSE(ec);
    out << content;
  }
  /// Sets the last use of `key`'s entry to `secondsAgo` before now.
  void age(CompileCache &cache, llvm::StringRef key, int secondsAgo) {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(cache.entryPath(key), fd,
                                                 llvm::sys::fs::CD_OpenExisting,
                                                 llvm::sys::fs::OF_Append));
    auto when =
        std::chrono::system_clock::now() - std::chrono::seconds(secondsAgo);
    EXPECT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(fd, when));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }

  llvm::SmallString<128> dir;
  const std::vector<std::string> objects = {"first object",
                                            std::string(3, '\0'), "third"};
};

TEST_F(CompileCacheTest, StoresAndLoadsEveryObject) {
  CompileCache cache(std::string(dir.str()));
  std::string key = compileCacheKey({"module", "options"});
  EXPECT_FALSE(cache.load(key));
  ASSERT_FALSE(llvm::errorToBool(cache.store(key, objects)));
  std::optional<std::vector<std::string>> loaded = cache.load(key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, objects);
  // Another key misses.
  EXPECT_FALSE(cache.load(compileCacheKey({"module", "other options"})));
}

TEST_F(CompileCacheTest, KeysSeparateTheirParts) {
  EXPECT_EQ(compileCacheKey({"a", "b"}).size(), 64u);
  EXPECT_EQ(compileCacheKey({"a", "b"}), compileCacheKey({"a", "b"}));
  EXPECT_NE(compileCacheKey({"ab", ""}), compileCacheKey({"a", "b"}));
  EXPECT_NE(compileCacheKey({"a", "b"}), compileCacheKey({"b", "a"}));
  EXPECT_NE(executableIdentity(), "unknown executable");
}

TEST_F(CompileCacheTest, DamagedEntriesMissAndAreRemoved) {
  CompileCache cache(std::string(dir.str()));
  std::string key = compileCacheKey({"damaged"});
  ASSERT_FALSE(llvm::errorToBool(cache.store(key, objects)));
  std::string entry = read(cache.entryPath(key));
  ASSERT_FALSE(entry.empty());

  // Every truncation, and a flipped byte anywhere, is a miss.
  for (size_t n : {size_t(0), size_t(7), size_t(20), entry.size() - 1}) {
    write(cache.entryPath(key), llvm::StringRef(entry).take_front(n));
    EXPECT_FALSE(cache.load(key)) << "truncated to " << n;
    EXPECT_FALSE(llvm::sys::fs::exists(cache.entryPath(key)));
  }
  for (size_t at = 0; at < entry.size(); at += 7) {
    std::string corrupt = entry;
    corrupt[at] ^= 0x20;
    write(cache.entryPath(key), corrupt);
    EXPECT_FALSE(cache.load(key)) << "byte " << at << " flipped";
  }
  // Trailing bytes too.
  write(cache.entryPath(key), entry + "x");
  EXPECT_FALSE(cache.load(key));
}

TEST_F(CompileCacheTest, AnotherKeysEntryIsForeign) {
  CompileCache cache(std::string(dir.str()));
  std::string a = compileCacheKey({"a"}), b = compileCacheKey({"b"});
  ASSERT_FALSE(llvm::errorToBool(cache.store(a, objects)));
  // A valid entry under the wrong name (copied, or a hash collision of
  // file names) is not taken for b's code.
  write(cache.entryPath(b), read(cache.entryPath(a)));
  EXPECT_FALSE(cache.load(b));
  EXPECT_TRUE(cache.load(a));
}

TEST_F(CompileCacheTest, UnwritableDirectoryIsAnError) {
  // A directory that cannot be made: its parent is a file.
  std::string file = (dir + "/file").str();
  write(file, "x");
  CompileCache cache(file + "/cache");
  llvm::Error e = cache.store(compileCacheKey({"k"}), objects);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("cannot create"),
            std::string::npos);
  EXPECT_FALSE(cache.load(compileCacheKey({"k"})));
  CompileCache none("");
  EXPECT_TRUE(llvm::errorToBool(none.store("k", objects)));
}

TEST_F(CompileCacheTest, EvictsLeastRecentlyUsedEntries) {
  // Each entry holds about 1000 bytes; the limit keeps two.
  std::vector<std::string> big = {std::string(1000, 'o')};
  CompileCache cache(std::string(dir.str()), 2500);
  std::string a = compileCacheKey({"a"}), b = compileCacheKey({"b"}),
              c = compileCacheKey({"c"});
  ASSERT_FALSE(llvm::errorToBool(cache.store(a, big)));
  ASSERT_FALSE(llvm::errorToBool(cache.store(b, big)));
  age(cache, a, 300);
  age(cache, b, 200);
  // Using a makes b the least recently used.
  ASSERT_TRUE(cache.load(a));
  ASSERT_FALSE(llvm::errorToBool(cache.store(c, big)));
  EXPECT_TRUE(cache.load(a));
  EXPECT_FALSE(cache.load(b));
  EXPECT_TRUE(cache.load(c));
}

TEST_F(CompileCacheTest, ConcurrentWritersLeaveOneWholeEntry) {
  CompileCache cache(std::string(dir.str()));
  std::string key = compileCacheKey({"shared"});
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i)
    writers.emplace_back([&] {
      CompileCache own(std::string(dir.str()));
      for (int j = 0; j < 20; ++j) {
        EXPECT_FALSE(llvm::errorToBool(own.store(key, objects)));
        std::optional<std::vector<std::string>> loaded = own.load(key);
        // A reader sees a whole entry or none (it may have been replaced
        // between the rename and the read, never half-written).
        if (loaded) {
          EXPECT_EQ(*loaded, objects);
        }
      }
    });
  for (std::thread &w : writers)
    w.join();
  EXPECT_TRUE(cache.load(key));
  // No temporary file is left behind.
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(CompileCacheTest, DefaultDirectoryFollowsTheEnvironment) {
  std::optional<std::string> home = llvm::sys::Process::GetEnv("HOME");
  ::setenv("GNNC_CACHE_DIR", "/somewhere/gnnc", 1);
  EXPECT_EQ(defaultCompileCacheDirectory(), "/somewhere/gnnc");
  ::unsetenv("GNNC_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(defaultCompileCacheDirectory(), "/xdg/gnnc");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/user", 1);
  EXPECT_EQ(defaultCompileCacheDirectory(), "/home/user/.cache/gnnc");
  if (home)
    ::setenv("HOME", home->c_str(), 1);
  else
    ::unsetenv("HOME");
}
} // namespace
