#include "symbolic/hints.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/loader.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

namespace fs = std::filesystem;

// Row-parallel linear (tests/data/goals/matmul_rowpar): S t [6, 3], y [4, 3]; D per rank t [3, 3],
// partial [4, 3], all_reduce, y [4, 3].
class HintsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::path dir = fs::path(GG_TEST_DATA_DIR) / "goals" / "matmul_rowpar";
    s_ = frontend::LoadGraph((dir / "seq.py").string());
    d_ = frontend::LoadProgram({(dir / "dist").string()});
  }
  // The InputError of parsing `text` as hints.h, or "" when it parses.
  std::string ErrorOf(const std::string& text) {
    try {
      ParseHints(text, "h.hints", s_, d_);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  ir::Graph s_;
  ir::Program d_;
};

TEST_F(HintsTest, ParsesRelationsCommentsAndRepeats) {
  Hints hints = ParseHints(
      "// from fingerprints\n"
      "\n"
      "y == y@0   // replicated\n"
      "y == y@1\n"
      "  y==sum(partial@0, partial@1)\n"
      "y == y@0\n"  // a repeat adds nothing
      "t == concat(0, t@0, t@1)\n",
      "h.hints", s_, d_);
  EXPECT_EQ(hints.count(), 4u);
  ASSERT_EQ(hints.by_tensor.size(), 2u);
  const std::vector<RelExpr>& y = hints.by_tensor.at(*s_.Find("y"));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0].ToString(), "y@0");
  EXPECT_EQ(y[1].ToString(), "y@1");
  EXPECT_EQ(y[2].ToString(), "sum(partial@0, partial@1)");
  EXPECT_EQ(hints.by_tensor.at(*s_.Find("t"))[0].ToString(), "concat(0, t@0, t@1)");
}

// Matches of a numeric run become hints when they type as their S tensor; one of other sizes (a
// run at reduced sizes) is counted and left out.
TEST_F(HintsTest, MatchesOfOtherSizesAreLeftOut) {
  Hints parsed = ParseHints("y == y@0\nt == concat(0, t@0, t@1)\n", "h.hints", s_, d_);
  NumericGuide guide;
  for (const auto& [ref, exprs] : parsed.by_tensor) guide.matches.emplace_back(ref, exprs[0]);
  guide.matches.emplace_back(*s_.Find("t"), parsed.by_tensor.at(*s_.Find("y"))[0]);  // [4, 3]
  guide.matches.emplace_back(*s_.Find("y"), parsed.by_tensor.at(*s_.Find("y"))[0]);  // repeat
  size_t dropped = 0;
  Hints hints = HintsFromMatches(guide, s_, d_, &dropped);
  EXPECT_EQ(dropped, 1u);
  EXPECT_EQ(hints.count(), 2u);
  EXPECT_EQ(hints.by_tensor.at(*s_.Find("t"))[0].ToString(), "concat(0, t@0, t@1)");
}

TEST_F(HintsTest, FormatReadsBackToTheSameHints) {
  Hints hints = ParseHints("y == sum(partial@0, partial@1)\nt == concat(0, t@0, t@1)\ny == y@1\n",
                           "h.hints", s_, d_);
  std::string text = FormatHints(hints, s_, "two lines\nof header");
  EXPECT_EQ(text,
            "// two lines\n"
            "// of header\n"
            "t == concat(0, t@0, t@1)\n"
            "y == sum(partial@0, partial@1)\n"
            "y == y@1\n");
  Hints again = ParseHints(text, "h.hints", s_, d_);
  EXPECT_EQ(FormatHints(again, s_, ""), FormatHints(hints, s_, ""));
}

TEST_F(HintsTest, BadLinesNameFileAndLine) {
  EXPECT_EQ(ErrorOf("y == y@0\ny y@0\n"),
            "h.hints:2: error: expected a hint 'S_TENSOR == EXPR', got 'y y@0'");
  EXPECT_EQ(ErrorOf("\n\n == y@0\n"),
            "h.hints:3: error: expected an S tensor name before '==', got ''");
  EXPECT_EQ(ErrorOf("y ==   // nothing\n"), "h.hints:1: error: missing expression after '=='");
  EXPECT_NE(ErrorOf("nope == y@0\n").find("h.hints:1: error: unknown S tensor 'nope'"),
            std::string::npos);
  // Expression errors come from the relation parser, with the hint file's line.
  EXPECT_EQ(ErrorOf("// c\ny == concat(0, y@0\n").rfind("h.hints:2: error:", 0), 0u)
      << ErrorOf("// c\ny == concat(0, y@0\n");
  EXPECT_EQ(ErrorOf("y == y@7\n").rfind("h.hints:1: error:", 0), 0u) << ErrorOf("y == y@7\n");
  EXPECT_EQ(ErrorOf("y == missing@0\n").rfind("h.hints:1: error:", 0), 0u);
  // A hint of another shape (other graphs, or sizes of a resized run) is refused.
  EXPECT_EQ(ErrorOf("t == t@0\n"),
            "h.hints:1: error: hint for t has shape [3, 3] but t has shape [6, 3] (hints for "
            "other graphs or other sizes?)");
  EXPECT_EQ(ErrorOf("y == concat(1, y@0, y@1\n").rfind("h.hints:1: error:", 0), 0u);
  EXPECT_EQ(ErrorOf("y == concat(2, y@0, y@1)\n").rfind("h.hints:1: error: hint for y", 0), 0u)
      << ErrorOf("y == concat(2, y@0, y@1)\n");
}

TEST_F(HintsTest, UnreadableFileIsAnInputError) {
  try {
    LoadHints("/nonexistent/h.hints", s_, d_);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/h.hints: error: cannot open the hint file");
  }
}

}  // namespace
}  // namespace gg::symbolic
