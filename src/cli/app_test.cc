#include "cli/app.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/verify_command.h"
#include "frontend/loader.h"
#include "report/exit_codes.h"
#include "util/diagnostic.h"

namespace gg::cli {
namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunGraphGuard(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(AppTest, VersionAndHelpExitZero) {
  Result version = RunCli({"--version"});
  EXPECT_EQ(version.code, report::kExitOk);
  EXPECT_EQ(version.out, VersionLine() + "\n");
  EXPECT_NE(version.out.find(GG_VERSION), std::string::npos);

  Result help = RunCli({"--help"});
  EXPECT_EQ(help.code, report::kExitOk);
  for (const Command& command : Commands()) {
    EXPECT_NE(help.out.find("  " + command.spec.name + " "), std::string::npos) << help.out;
    Result command_help = RunCli({command.spec.name, "--help"});
    EXPECT_EQ(command_help.code, report::kExitOk);
    EXPECT_EQ(command_help.out.rfind("usage: graphguard " + command.spec.name, 0), 0u);
  }
}

TEST(AppTest, UsageErrorsExitTwoWithOneLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{}, {"frobnicate"}, {"--bogus"}, {"stats"},
                                             {"stats", "--nope", "x"}}) {
    Result result = RunCli(args);
    EXPECT_EQ(result.code, report::kExitBadInput);
    EXPECT_EQ(result.err.rfind("graphguard: error: ", 0), 0u) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
}

TEST(AppTest, MissingInputFileIsBadInput) {
  Result result = RunCli({"stats", "/nonexistent/graphguard/fw.g0.r0.py"});
  EXPECT_EQ(result.code, report::kExitBadInput) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/graphguard/fw.g0.r0.py"), std::string::npos)
      << result.err;
}

// Issue 19: control characters of the input (a NUL in an annotation) are escaped in the one
// error line, never printed raw.
TEST(AppTest, ControlCharactersInMessagesAreEscaped) {
  const std::string path = ::testing::TempDir() + "/gg_nul_annotation.py";
  {
    std::ofstream file(path, std::ios::binary);
    file << "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4";
    file << '\0' << '\x1b' << ", 4]\"):\n        return (x,)\n";
  }
  Result result = RunCli({"stats", path});
  EXPECT_EQ(result.code, report::kExitBadInput) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find(path + ":2: bad type annotation"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("'4\\x00\\x1b'"), std::string::npos) << result.err;
  for (char c : result.err.substr(0, result.err.size() - 1)) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << static_cast<int>(c);
  }
  std::remove(path.c_str());
}

// Issue 19: file-taking options given a directory, and outputs into a missing directory.
TEST(AppTest, DirectoriesWhereFilesAreExpectedAreBadInput) {
  const std::string goal = std::string(GG_TEST_DATA_DIR) + "/goals/matmul_colpar";
  const std::vector<std::string> base = {"verify", "--seq", goal + "/seq.py", "--dist",
                                         goal + "/dist", "--no-numeric"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  };
  struct Case {
    std::vector<std::string> extra;
    std::string needle;
  };
  const Case cases[] = {
      {{"--relations", goal}, goal + ": is a directory, but the relation spec file must be a file"},
      {{"--relations", goal + "/spec.rel", "--hints", goal},
       goal + ": is a directory, but the hint file must be a file"},
      {{"--relations", goal + "/spec.rel", "--json", "/nonexistent/gg/report.json"},
       "/nonexistent/gg/report.json: cannot write the report file: the directory "
       "/nonexistent/gg does not exist"},
      {{"--relations", goal + "/spec.rel", "--json", goal},
       goal + ": is a directory; give a file name for the report file"},
  };
  for (const Case& c : cases) {
    Result result = with(c.extra);
    EXPECT_EQ(result.code, report::kExitBadInput) << result.err;
    EXPECT_NE(result.err.find("graphguard: error: " + c.needle), std::string::npos) << result.err;
  }
  Result seq = RunCli({"verify", "--seq", goal, "--dist", goal + "/dist", "--relations",
                       goal + "/spec.rel"});
  EXPECT_EQ(seq.code, report::kExitBadInput) << seq.err;
  EXPECT_NE(seq.err.find(goal + ": expected one graph file, got a directory"), std::string::npos)
      << seq.err;
  Result report = RunCli({"explain", "y", "--from-report", goal});
  EXPECT_EQ(report.code, report::kExitBadInput) << report.err;
  EXPECT_NE(report.err.find(goal + ": is a directory, but the report file must be a file"),
            std::string::npos)
      << report.err;
}

// Issue 19: check and infer-relations on a capture with dynamic shapes ended with exit 4; they
// refuse it as bad input naming the first symbolic value (verify proves over symbolic dims).
TEST(AppTest, NumericCommandsRefuseSymbolicShapes) {
  const std::string dir = std::string(GG_TEST_DATA_DIR) + "/dynamic_shapes";
  ir::Graph s = frontend::LoadGraph(dir + "/seq.py");
  ir::Program d = frontend::LoadProgram({dir + "/dist"});
  try {
    RequireStaticShapes(s, d, "check");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), dir + "/seq.py");
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(e.problem().find("the sequential graph has symbolic dims ('x' is f32[s0, 6]): "
                               "'check' executes the graphs and needs static shapes"),
              std::string::npos)
        << e.what();
  }
  Result verify = RunCli({"verify", "--seq", dir + "/seq.py", "--dist", dir + "/dist",
                          "--relations", dir + "/spec.rel", "--no-numeric"});
  EXPECT_EQ(verify.code, report::kExitOk) << verify.out << verify.err;
}

}  // namespace
}  // namespace gg::cli
