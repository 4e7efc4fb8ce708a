//===- SupportTest.cpp - the support library, linked without MLIR ---------===//
//
// Part of gnnc. This binary links GNNSupport alone: it fails to link if the
// support library ever needs MLIR.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/OutputFile.h"
#include "GNN/Support/SafeTensors.h"
#include "GNN/Support/Tokenizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/resource.h>

using namespace mlir::gnn;

namespace {
std::string errorOf(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

std::string contentsOf(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "<missing>";
}

class SupportTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gnnc-support", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  /// How many files the test's directory holds (temporary files included).
  int entries() {
    std::error_code ec;
    int n = 0;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      ++n;
    return n;
  }
  llvm::SmallString<128> dir;
};
} // namespace

TEST_F(SupportTest, TokenizerWordsAndIds) {
  Tokenizer words(false, {"<sos>", "<eos>", "a", "b"});
  auto seq = words.parse("a  b\ta", 4, "line 1");
  ASSERT_TRUE(bool(seq)) << llvm::toString(seq.takeError());
  EXPECT_EQ(*seq, (Sequence{2, 3, 2}));
  EXPECT_EQ(words.print(*seq), "a b a");
  // An id the vocabulary has no word for prints the line as ids.
  EXPECT_EQ(words.print({2, 7}), "2 7");
  EXPECT_EQ(errorOf(words.parse("a c", 4, "line 2").takeError()),
            "line 2, token 2: unknown token 'c'");
  EXPECT_EQ(errorOf(words.parse(" \t", 4, "line 3").takeError()),
            "line 3 is empty");

  Tokenizer ids(true, {});
  EXPECT_EQ(errorOf(ids.parse("1 x", 4, "l").takeError()),
            "l, token 2: 'x' is not an integer id");
  EXPECT_EQ(errorOf(ids.parse("1 4", 4, "l").takeError()),
            "l, token 2: id 4 is out of range [0, 4)");
  EXPECT_EQ(errorOf(ids.parse("-1", 4, "l").takeError()),
            "l, token 1: id -1 is out of range [0, 4)");
}

TEST_F(SupportTest, ReadSequencesChecksLengthsAndEmptyFiles) {
  Tokenizer ids(true, {});
  std::string file = path("src.txt");
  ASSERT_EQ(errorOf(writeFileAtomically(file, "1 2\r\n3\n")), "");
  auto seqs = readSequences(file, "source", ids, 5, 2);
  ASSERT_TRUE(bool(seqs)) << llvm::toString(seqs.takeError());
  EXPECT_EQ(seqs->size(), 2u);
  EXPECT_EQ(errorOf(readSequences(file, "source", ids, 5, 1).takeError()),
            "source line 1 has 2 tokens, more than max_len (1)");
  std::string empty = path("empty.txt");
  ASSERT_EQ(errorOf(writeFileAtomically(empty, "")), "");
  EXPECT_EQ(errorOf(readSequences(empty, "source", ids, 5, 2).takeError()),
            "source file '" + empty + "' has no sequences");
}

TEST_F(SupportTest, FailedWritesLeaveTheOldFile) {
  std::string file = path("out.txt");
  ASSERT_EQ(errorOf(writeFileAtomically(file, "old")), "");
  ASSERT_EQ(errorOf(writeFileAtomically(file, "new, longer")), "");
  EXPECT_EQ(contentsOf(file), "new, longer");
  // A target that cannot be replaced (a directory) stays as it was, and no
  // temporary file is left behind.
  std::string directory = path("taken");
  ASSERT_FALSE(llvm::sys::fs::create_directory(directory));
  std::string error = errorOf(writeFileAtomically(directory, "content"));
  EXPECT_NE(error.find(directory), std::string::npos) << error;
  EXPECT_TRUE(llvm::sys::fs::is_directory(directory));
  EXPECT_EQ(entries(), 2);
  // A directory that does not exist is an error naming the file.
  std::string missing = path("no/such/dir/out.txt");
  EXPECT_NE(errorOf(writeFileAtomically(missing, "")).find(missing),
            std::string::npos);
  EXPECT_EQ(entries(), 2);
}

// A write that fails part-way (here past the process's file-size limit, as
// on a full disk) is an error naming the file, and leaves the old file as
// it was and no temporary file beside it.
TEST_F(SupportTest, WritesThatFailPartWayLeaveTheOldFile) {
  std::string file = path("big.txt");
  ASSERT_EQ(errorOf(writeFileAtomically(file, "old")), "");
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit limit = saved;
  limit.rlim_cur = 4096;
  void (*previous)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string error =
      errorOf(writeFileAtomically(file, std::string(1 << 20, 'x')));
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(error.find("cannot write '" + file + "'"), std::string::npos)
      << error;
  EXPECT_EQ(contentsOf(file), "old");
  EXPECT_EQ(entries(), 1);
}

// Devices and pipes are written where they are, not replaced.
TEST_F(SupportTest, DevicesAreWrittenInPlace) {
  EXPECT_EQ(errorOf(writeFileAtomically("/dev/null", "content")), "");
  llvm::sys::fs::file_status status;
  ASSERT_FALSE(llvm::sys::fs::status("/dev/null", status));
  EXPECT_EQ(status.type(), llvm::sys::fs::file_type::character_file);
  if (llvm::sys::fs::exists("/dev/full")) {
    std::string error = errorOf(writeFileAtomically("/dev/full", "content"));
    EXPECT_NE(error.find("cannot write '/dev/full'"), std::string::npos)
        << error;
    ASSERT_FALSE(llvm::sys::fs::status("/dev/full", status));
    EXPECT_EQ(status.type(), llvm::sys::fs::file_type::character_file);
  }
}

TEST_F(SupportTest, SafeTensorsRoundTripThroughAtomicWrites) {
  TensorMap tensors;
  HostTensor t;
  t.dtype = DType::I64;
  t.shape = {3};
  t.allocate();
  for (int i = 0; i < 3; ++i)
    t.as<int64_t>()[i] = 10 * i;
  tensors["ids"] = t;
  std::string file = path("t.safetensors");
  ASSERT_EQ(errorOf(writeSafeTensors(file, tensors)), "");
  auto read = readSafeTensors(file);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  ASSERT_EQ(read->count("ids"), 1u);
  EXPECT_EQ(read->at("ids").as<int64_t>()[2], 20);
}
