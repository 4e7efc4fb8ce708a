//===- ParserHazardsTest.cpp - text MLIR 19's parsers crash on ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserHazards.h"

#include "gtest/gtest.h"

#include <string>

using mlir::gnn::findParserHazard;

namespace {
std::string transpose(const std::string &list) {
  return "%t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : "
         "tensor<3x2xf32>) permutation = " +
         list + "\n  return %t : tensor<3x2xf32>\n";
}
} // namespace

TEST(ParserHazards, WellFormedListsPass) {
  for (const char *list : {"[1, 0]", "[]", "[ 1 ,\n 0 ]", "[1, // one\n 0]",
                           "[0x1, -0]", "[2, 0, 1]"})
    EXPECT_FALSE(findParserHazard(transpose(list))) << list;
  EXPECT_FALSE(findParserHazard(
      "%r = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%b : tensor<2xf32>)"
      " dimensions = [1] (%x: f32, %y: f32) { linalg.yield %x : f32 }"));
  EXPECT_FALSE(
      findParserHazard("%r = linalg.broadcast ins(%a : tensor<3xf32>)"
                       " outs(%b : tensor<2x3xf32>) dimensions = [0]"));
}

TEST(ParserHazards, MalformedListsAreFound) {
  for (const char *list :
       {"[1, 0", "[1 0]", "1", "[a]", "", "[1.5]", "[99999999999999999999]",
        "array<i64: 1, 0>", "[1,]", "[,]", "[0x]"}) {
    std::string text = transpose(list);
    auto hazard = findParserHazard(text);
    ASSERT_TRUE(hazard) << list;
    EXPECT_EQ(hazard->offset, text.find("permutation")) << list;
    EXPECT_NE(hazard->message.find("'permutation =' of 'linalg.transpose'"),
              std::string::npos);
  }
  auto reduce = findParserHazard(
      "linalg.reduce ins(%a : tensor<2x3xf32>) outs(%b : tensor<2xf32>) "
      "dimensions = [1");
  ASSERT_TRUE(reduce);
  EXPECT_NE(reduce->message.find("'dimensions =' of 'linalg.reduce'"),
            std::string::npos);
  EXPECT_TRUE(findParserHazard("linalg.broadcast ins(%a : tensor<3xf32>) "
                               "outs(%b : tensor<2x3xf32>) dimensions = 0"));
}

TEST(ParserHazards, TransposesThatAreNoPermutationAreFound) {
  // The verifier reads the input's shape at each entry.
  for (const char *list : {"[1, 4294967296]", "[1, 1]", "[-1, 0]", "[1]",
                           "[-9223372036854775808]"}) {
    auto hazard = findParserHazard(transpose(list));
    ASSERT_TRUE(hazard) << list;
    EXPECT_NE(hazard->message.find("must be a permutation of 0 to"),
              std::string::npos);
  }
  // So does the generic form's.
  std::string generic =
      "%t = \"linalg.transpose\"(%a, %b) <{permutation = array<i64: 1, "
      "4294967296>}> ({";
  auto hazard = findParserHazard(generic);
  ASSERT_TRUE(hazard);
  EXPECT_EQ(hazard->offset, generic.find("permutation"));
  EXPECT_FALSE(findParserHazard(
      "%t = \"linalg.transpose\"(%a, %b) <{permutation = array<i64: 1, 0>}>"));
  EXPECT_FALSE(findParserHazard(
      "%t = \"linalg.transpose\"(%a, %b) <{permutation = array<i64>}>"));
  // Dimensions of broadcast and reduce are the verifiers' to check.
  EXPECT_FALSE(findParserHazard("linalg.broadcast ins(%a : tensor<3xf32>) "
                                "outs(%b : tensor<2x3xf32>) dimensions = [7]"));
}

TEST(ParserHazards, CommentsStringsAndOtherNamesAreNotOps) {
  EXPECT_FALSE(findParserHazard("// linalg.transpose permutation = x\n"));
  EXPECT_FALSE(findParserHazard(
      "%s = \"x\" {note = \"linalg.reduce dimensions = [\"} : () -> ()"));
  EXPECT_FALSE(findParserHazard("%linalg.transpose = foo permutation = x"));
  EXPECT_FALSE(findParserHazard("@linalg.broadcast dimensions = x"));
  // Without the keyword the parser reports the missing keyword itself.
  EXPECT_FALSE(findParserHazard("linalg.transpose ins(%a : t) outs(%b : t)"));
}
