//===- InputTest.cpp - reading untrusted input ----------------------------===//
//
// Part of gnnc. Bounded reads of non-regular files, line endings, and user
// input quoted in messages.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/HostTensor.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/Messages.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/Tokenizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace mlir::gnn;

namespace {
std::string errorOf(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

TEST(InputFile, EndlessDevicesAreBounded) {
  // /dev/zero never ends: reading it whole once ran out of memory.
  auto zero = readInputFile("/dev/zero", /*isText=*/false, 1 << 20);
  ASSERT_FALSE(zero);
  EXPECT_EQ(errorOf(zero.takeError()),
            "is not a regular file and holds more than 1048576 bytes");
  // /dev/null is a short non-regular file: empty, not an error.
  auto null = readInputFile("/dev/null");
  ASSERT_TRUE(bool(null)) << errorOf(null.takeError());
  EXPECT_EQ((*null)->getBufferSize(), 0u);
  EXPECT_NE(errorOf(readInputFile("/").takeError()), "");
  EXPECT_NE(errorOf(readInputFile("/no/such/file").takeError()), "");
}

TEST(InputFile, LinesEndInAnyConvention) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gnnc-input", dir));
  std::string file = (dir + "/lines.txt").str();
  // A lone CR (old Mac files) ends a line too.
  ASSERT_EQ(errorOf(writeFileAtomically(file, "a b\rc\r\nd\n\re")), "");
  auto lines = readLines(file, "src");
  ASSERT_TRUE(bool(lines));
  EXPECT_EQ(*lines, (std::vector<std::string>{"a b", "c", "d", "", "e"}));
  llvm::sys::fs::remove_directories(dir);
}

TEST(Messages, QuotesAreShortAndPrintable) {
  EXPECT_EQ(clipForMessage("token"), "token");
  EXPECT_EQ(clipForMessage(llvm::StringRef("a\0b\n\\", 5)),
            "a\\x00b\\x0a\\x5c");
  std::string huge(300000, 'x');
  std::string clipped = clipForMessage(huge);
  EXPECT_EQ(clipped, std::string(64, 'x') + "... (300000 bytes)");
  Tokenizer words(false, {"<sos>", "<eos>", "<pad>", "a"});
  std::string error = errorOf(words.parse(huge, 4, "src line 1").takeError());
  EXPECT_LT(error.size(), 200u);
  EXPECT_NE(error.find("unknown token"), std::string::npos);

  HostTensor t;
  t.shape.assign(100000, 1);
  EXPECT_EQ(t.describe(),
            "F32[1, 1, 1, 1, 1, 1, 1, 1, ... (100000 dimensions)]");
}
} // namespace
