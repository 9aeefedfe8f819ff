#include "cli/command_line.h"

#include <gtest/gtest.h>

namespace gg::cli {
namespace {

// A spec shaped like the planned `verify` command, to show a new command is one table entry.
CommandSpec VerifyLikeSpec() {
  CommandSpec spec;
  spec.name = "verify";
  spec.summary = "check refinement";
  spec.options = {OptionSpec::One("--seq", "FILE", "sequential graph").Required(),
                  OptionSpec::Many("--dist", "DIR|FILE", "per-rank graphs").Required(),
                  OptionSpec::Flag("--json", "JSON report"),
                  OptionSpec::One("--output", "FILE", "report file").Short("-o")};
  return spec;
}

TEST(CommandLineTest, ParsesOneManyAndFlagOptions) {
  ParsedCommand parsed = ParseCommand(
      VerifyLikeSpec(), {"--seq", "s.py", "--dist", "r0.py", "r1.py", "--json", "-o", "out"});
  EXPECT_FALSE(parsed.help);
  EXPECT_EQ(parsed.One("--seq"), "s.py");
  EXPECT_EQ(parsed.Many("--dist"), (std::vector<std::string>{"r0.py", "r1.py"}));
  EXPECT_TRUE(parsed.Has("--json"));
  EXPECT_EQ(parsed.One("--output"), "out");
  EXPECT_TRUE(parsed.positional.empty());
}

TEST(CommandLineTest, AcceptsEqualsFormAndRepeatedManyOption) {
  ParsedCommand parsed =
      ParseCommand(VerifyLikeSpec(), {"--seq=s.py", "--dist", "a", "--dist=b", "--dist", "c"});
  EXPECT_EQ(parsed.One("--seq"), "s.py");
  EXPECT_EQ(parsed.Many("--dist"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_FALSE(parsed.Has("--json"));
  EXPECT_EQ(parsed.One("--output", "fallback"), "fallback");
}

TEST(CommandLineTest, RejectsBadCommandLines) {
  CommandSpec spec = VerifyLikeSpec();
  EXPECT_THROW(ParseCommand(spec, {"--dist", "a"}), UsageError);              // --seq missing
  EXPECT_THROW(ParseCommand(spec, {"--seq", "s", "--dist"}), UsageError);     // no value
  EXPECT_THROW(ParseCommand(spec, {"--seq", "--dist", "a"}), UsageError);     // no value
  EXPECT_THROW(ParseCommand(spec, {"--seq", "s", "--seq", "t", "--dist", "a"}), UsageError);
  EXPECT_THROW(ParseCommand(spec, {"--seq", "s", "--dist", "a", "--bogus"}), UsageError);
  EXPECT_THROW(ParseCommand(spec, {"--seq", "s", "--dist", "a", "--json=1"}), UsageError);
  EXPECT_THROW(ParseCommand(spec, {"extra", "--seq", "s", "--dist", "a"}), UsageError);
}

// Issue 19: `--max-nodes -5` said "needs a value"; a negative number is the option's value, and
// the integer check names it.
TEST(CommandLineTest, NegativeNumbersAreValuesThatTheIntegerCheckRejects) {
  CommandSpec spec;
  spec.name = "verify";
  spec.options = {OptionSpec::One("--max-nodes", "N", "limit"),
                  OptionSpec::One("--seed", "N", "seed")};
  ParsedCommand parsed = ParseCommand(spec, {"--max-nodes", "-5", "--seed", "7"});
  EXPECT_EQ(parsed.One("--max-nodes"), "-5");
  EXPECT_EQ(NonNegativeInteger(parsed, "--seed", 0), 7);
  try {
    NonNegativeInteger(parsed, "--max-nodes", 0);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "option '--max-nodes' must be a non-negative integer, got -5");
  }
  parsed = ParseCommand(spec, {"--seed=x1"});
  try {
    NonNegativeInteger(parsed, "--seed", 0);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "option '--seed' must be a non-negative integer, got 'x1'");
  }
  // An option after a value-taking option is still a missing value.
  EXPECT_THROW(ParseCommand(spec, {"--max-nodes", "--seed", "1"}), UsageError);
}

TEST(CommandLineTest, CountsPositionalArguments) {
  CommandSpec spec;
  spec.name = "stats";
  spec.positional_metavar = "INPUT...";
  spec.min_positional = 1;
  spec.max_positional = -1;
  EXPECT_THROW(ParseCommand(spec, {}), UsageError);
  ParsedCommand parsed = ParseCommand(spec, {"a", "b", "--", "--odd-name"});
  EXPECT_EQ(parsed.positional, (std::vector<std::string>{"a", "b", "--odd-name"}));
}

TEST(CommandLineTest, HelpWinsOverMissingOptions) {
  ParsedCommand parsed = ParseCommand(VerifyLikeSpec(), {"--help"});
  EXPECT_TRUE(parsed.help);
  std::string help = CommandHelp(VerifyLikeSpec());
  EXPECT_NE(help.find("usage: graphguard verify --seq FILE --dist DIR|FILE... [--json] [-o FILE]"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("-o, --output FILE"), std::string::npos) << help;
}

}  // namespace
}  // namespace gg::cli
