//===- StrictJsonTest.cpp - JSON from untrusted files ---------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/StrictJson.h"
#include "GNN/Support/SafeTensors.h"

#include "gtest/gtest.h"

using namespace mlir::gnn;

namespace {
std::string errorOf(llvm::Expected<llvm::json::Value> v) {
  return v ? "" : llvm::toString(v.takeError());
}

TEST(StrictJson, DeepNestingIsAnErrorNotAStackOverflow) {
  // 50,000 levels overflowed llvm::json::parse's recursion.
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_NE(errorOf(parseStrictJson(deep)).find("nested deeper than 64"),
            std::string::npos);
  std::string objects;
  for (int i = 0; i < 50000; ++i)
    objects += "{\"a\":";
  objects += "1" + std::string(50000, '}');
  EXPECT_NE(errorOf(parseStrictJson(objects)).find("nested deeper"),
            std::string::npos);
  // The limit itself parses.
  std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(errorOf(parseStrictJson(ok)), "");
  EXPECT_NE(errorOf(parseStrictJson("[" + ok + "]")), "");
}

TEST(StrictJson, DuplicateKeysAreErrors) {
  EXPECT_NE(errorOf(parseStrictJson(R"({"a": 1, "b": 2, "a": 3})"))
                .find("duplicate key \"a\""),
            std::string::npos);
  // The same key in different objects, and as a value, is fine.
  EXPECT_EQ(errorOf(parseStrictJson(
                R"({"a": {"a": 1}, "b": {"a": "a"}, "c": ["a", "a"]})")),
            "");
  // Brackets and quotes inside strings are not structure.
  EXPECT_EQ(errorOf(parseStrictJson(R"({"k[{": "v\"]}", "k2": "[[[["})")), "");
  // Malformed text is the parser's error, not a crash of the scan.
  EXPECT_NE(errorOf(parseStrictJson(R"({"a": "unterminated)")), "");
  EXPECT_NE(errorOf(parseStrictJson("}}}]]]")), "");
}

TEST(StrictJson, SafeTensorsHeadersAreChecked) {
  auto file = [](const std::string &header) {
    std::string bytes(8, '\0');
    uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
      bytes[i] = char((n >> (8 * i)) & 0xff);
    return bytes + header;
  };
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  auto read = parseSafeTensors(file(deep), "deep.safetensors");
  ASSERT_FALSE(read);
  EXPECT_NE(llvm::toString(read.takeError()).find("nested deeper"),
            std::string::npos);
  std::string twice =
      R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
      R"( "x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
  read = parseSafeTensors(file(twice) + "abcd", "twice.safetensors");
  ASSERT_FALSE(read);
  EXPECT_NE(llvm::toString(read.takeError()).find("duplicate key \"x\""),
            std::string::npos);
}
} // namespace
