//===- ParserHazardsTest.cpp - text MLIR 19's parsers crash on ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserHazards.h"

#include "gtest/gtest.h"

#include <cstring>
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

TEST(ParserHazards, FromElementsOfManyElementsNeedsAsManyOperands) {
  auto hazardOf = [](const std::string &text) {
    auto hazard = findParserHazard(text);
    return hazard ? hazard->message : std::string();
  };
  // Custom and generic forms, static shapes and a type alias; the count
  // saturates instead of overflowing.
  for (const char *text :
       {"%t = tensor.from_elements %a : tensor<9223372036854775807xf32>",
        "%t = tensor.from_elements %a, %b {x = \"%c:\"} : "
        "tensor<100000000x10xf32>",
        "%t = \"tensor.from_elements\"(%a) : (f32) -> tensor<65537xf32>",
        "!big = tensor<65536x65536x65536x65536xf32>\n"
        "%t = tensor.from_elements %a : !big",
        "%t = tensor.from_elements %a : tensor<99999999999999999999999xf32>",
        "%t = vector.from_elements %a : vector<4294967296xf32>",
        "%t = \"vector.from_elements\"(%a) : (f32) -> vector<65537xf32>"}) {
    std::string message = hazardOf(text);
    EXPECT_NE(message.find(".from_elements' has a result of "),
              std::string::npos)
        << text;
    std::string s = text;
    EXPECT_EQ(findParserHazard(text)->offset,
              s.find(".from_elements") - strlen("tensor") -
                  (s.find("\"tensor.") != std::string::npos ||
                   s.find("\"vector.") != std::string::npos))
        << text;
  }
  EXPECT_NE(hazardOf("%t = \"tensor.from_elements\"(%a, %b) : (f32, f32) -> "
                     "tensor<9223372036854775807xf32>")
                .find("9223372036854775807 elements but 2 operands"),
            std::string::npos);
  // Small results are the parser's to check; many elements with as many
  // operands are fine; dynamic shapes, unknown aliases and comments too.
  std::string many = "%t = tensor.from_elements ";
  for (int i = 0; i < 70000; ++i)
    many += (i ? ", %a" : "%a");
  many += " : tensor<70000xf32>";
  for (const std::string &text :
       {std::string("%t = tensor.from_elements %a : tensor<2x3xf32>"),
        std::string("%t = tensor.from_elements %a : tensor<65536xf32>"), many,
        std::string("%t = tensor.from_elements %a : tensor<?x100000xf32>"),
        std::string("%t = tensor.from_elements %a : !undefined"),
        std::string("// tensor.from_elements %a : tensor<100000xf32>"),
        std::string("%s = \"tensor.from_elements %a : tensor<100000xf32>\"")})
    EXPECT_EQ(hazardOf(text), "") << text.substr(0, 80);
}

TEST(ParserHazards, NestingPastTheLimitIsFoundWhereItPasses) {
  const int64_t limit = mlir::gnn::kMaxNesting;
  // Braces, brackets and parentheses count together; strings and comments
  // do not count, nor do closed levels.
  std::string ok = std::string(limit, '{') + std::string(limit, '}') + "\"" +
                   std::string(1000, '(') + "\" // " + std::string(1000, '[') +
                   "\n" + std::string(limit / 2, '(') +
                   std::string(limit / 2, '[');
  EXPECT_FALSE(findParserHazard(ok));
  std::string deep = "func.func @f() {\n" + std::string(limit - 1, '{') + "([" +
                     std::string(limit, ']');
  auto hazard = findParserHazard(deep);
  ASSERT_TRUE(hazard);
  EXPECT_EQ(hazard->offset, deep.find("(["));
  EXPECT_EQ(hazard->message,
            "nested deeper than 256 levels of braces, brackets and "
            "parentheses (MLIR's parser recurses once per level)");
}
