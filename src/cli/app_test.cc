#include "cli/app.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/exit_codes.h"

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

}  // namespace
}  // namespace gg::cli
