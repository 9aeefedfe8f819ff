// The CI report flags of verify (--sarif, --junit, '-' for standard output) through the command
// line, and the golden files a laptop build cannot make with the CLI alone: a VIOLATION needs
// numeric evidence, so it is made here with the evidence a LibTorch run gives the case (recorded
// from `graphguard verify` in a LibTorch build, cpu, seed 0), and check's reports from a summary
// equal to that build's `graphguard check` of the case.
//
// scripts/regen-golden.sh runs CiReportGolden.* with GG_REGEN_GOLDEN_DIR=<dir> to write the files
// there; otherwise they are compared with tests/golden/ci. The driver's version is written as
// "VERSION" (as the script does for the CLI's files), so a version bump leaves the goldens alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/app.h"
#include "cli/verify_command.h"
#include "report/check_summary.h"
#include "report/exit_codes.h"
#include "report/junit.h"
#include "report/sarif.h"

namespace gg::cli {
namespace {

namespace fs = std::filesystem;

const char kCase[] = "tests/bugs/missing_rowparallel_allreduce/buggy";

struct Result {
  int code;
  std::string out;
  std::string err;
};

// Runs graphguard from the repository root, where the goldens' relative paths point.
Result RunFromRoot(const std::vector<std::string>& args) {
  fs::path cwd = fs::current_path();
  fs::current_path(GG_SOURCE_DIR);
  std::ostringstream out, err;
  int code = RunGraphGuard(args, out, err);
  fs::current_path(cwd);
  return {code, out.str(), err.str()};
}

std::vector<std::string> VerifyArgs() {
  std::string c = kCase;
  return {"verify",      "--seq",         c + "/seq.json", "--dist", c + "/tp2.json",
          "--relations", c + "/spec.rel", "--no-timing",   "--quiet"};
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The driver's version as "VERSION" (regen-golden.sh does the same to the CLI's files).
std::string NormalizedSarif(const std::string& text) {
  nlohmann::ordered_json log = nlohmann::ordered_json::parse(text);
  for (auto& run : log.at("runs")) {
    run["tool"]["driver"]["version"] = "VERSION";
    run["tool"]["driver"]["semanticVersion"] = "VERSION";
  }
  return report::SarifText(log);
}

// Writes `text` as golden `name` (regeneration) or compares it with tests/golden/ci/<name>.
void Golden(const std::string& name, const std::string& text) {
  if (const char* dir = std::getenv("GG_REGEN_GOLDEN_DIR"); dir != nullptr && *dir != '\0') {
    std::ofstream out(fs::path(dir) / name, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << "could not write " << dir << "/" << name;
    return;
  }
  fs::path golden = fs::path(GG_SOURCE_DIR) / "tests" / "golden" / "ci" / name;
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run scripts/regen-golden.sh";
  EXPECT_EQ(text, Slurp(golden)) << name << " differs from its golden: review, then run "
                                 << "scripts/regen-golden.sh";
}

// The evidence `graphguard verify` of a LibTorch build gives the buggy case (its JSON report's
// "evidence", cpu, seed 0).
symbolic::NumericEvidence RecordedEvidence() {
  const std::string figures =
      ": max |S-D| 0.271 (rel 0.0576 of max |S| 4.7), tolerance 1.09e-05; worst at []: S 4.7, D "
      "4.43; 1 of 1 elements beyond tolerance; 2.48e+04x its tolerance";
  symbolic::NumericEvidence e;
  e.how = "graphguard check, seed 0, cpu";
  e.outputs_checked = 2;
  e.counterexamples = {"mean == mean@0" + figures, "mean == mean@1" + figures};
  e.classification = {
      "add_3: numerically different: the closest candidate, identical: add_3@0 (error 0.29, "
      "tolerance 3.8e-06), does not hold (a real difference, or a relation outside the candidate "
      "forms)"};
  return e;
}

// The summary of that build's `graphguard check --no-timing` of the case: both outputs fail.
report::CheckSummary RecordedCheck() {
  report::CheckSummary s;
  s.outcome = "FAILS";
  s.seq = std::string(kCase) + "/seq.json";
  s.dist = {std::string(kCase) + "/tp2.json"};
  s.relations_file = std::string(kCase) + "/spec.rel";
  s.s_graph_file = s.seq;
  s.random_mode = "dropout off";
  s.device = "cpu";
  s.collectives = "in-process";
  s.timing = false;
  for (const char* relation : {"mean == mean@0", "mean == mean@1"}) {
    report::CheckedRelation c;
    c.status = report::CheckedRelation::Status::kFails;
    c.s_tensor = "mean";
    c.relation = relation;
    c.kind = "expected";
    c.figures =
        "max |S-D| 0.271 (rel 0.0576 of max |S| 4.7), tolerance 1.09e-05; worst at []: S "
        "4.7, D 4.43; 1 of 1 elements beyond tolerance";
    c.first_failure = s.relations.empty();
    c.s_node = "mean";
    c.s_operator = "aten::mean.default";
    c.graph_line = 109;
    c.source = {"scripts/capture/gg_capture/models/megatron_gpt.py", 133, "forward",
                "return (self.loss(input_ids, position_ids, attention_mask, labels),)"};
    s.relations.push_back(c);
  }
  return s;
}

TEST(CiReportGolden, VerifyViolation) {
  SetEvidenceGatherer([](const ir::Graph&, const ir::Program&, const symbolic::SpecResult&,
                         const symbolic::VerifyResult&, uint64_t,
                         const std::string&) { return RecordedEvidence(); });
  fs::path tmp = fs::temp_directory_path() / ("gg_ci_golden_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::vector<std::string> args = VerifyArgs();
  args.insert(args.end(),
              {"--sarif", (tmp / "v.sarif").string(), "--junit", (tmp / "v.junit.xml").string()});
  Result r = RunFromRoot(args);
  SetEvidenceGatherer(nullptr);
  ASSERT_EQ(r.code, report::kExitViolation) << r.err << r.out;
  Golden("missing_rowparallel_allreduce.buggy.violation.sarif",
         NormalizedSarif(Slurp(tmp / "v.sarif")));
  Golden("missing_rowparallel_allreduce.buggy.violation.junit.xml", Slurp(tmp / "v.junit.xml"));
  fs::remove_all(tmp);
}

TEST(CiReportGolden, CheckFails) {
  report::CheckSummary s = RecordedCheck();
  Golden("missing_rowparallel_allreduce.buggy.check.sarif",
         NormalizedSarif(report::SarifText(report::CheckSarif(s))));
  Golden("missing_rowparallel_allreduce.buggy.check.junit.xml", report::CheckJunit(s));
}

// '-' writes one report alone on standard output, like --json -; two would interleave.
TEST(CiReportFlags, StandardOutput) {
  std::vector<std::string> args = VerifyArgs();
  args.insert(args.end(), {"--no-numeric", "--sarif", "-"});
  Result sarif = RunFromRoot(args);
  EXPECT_EQ(sarif.code, report::kExitUnknown) << sarif.err;
  nlohmann::json log = nlohmann::json::parse(sarif.out);  // nothing but the log
  EXPECT_EQ(log.at("runs")[0].at("results")[0].at("ruleId"), "graphguard/unknown/no-relation");

  args = VerifyArgs();
  args.insert(args.end(), {"--no-numeric", "--junit", "-"});
  Result junit = RunFromRoot(args);
  EXPECT_EQ(junit.out.rfind("<?xml ", 0), 0u) << junit.out;
  EXPECT_EQ(junit.out.find("\ninputs\n"), std::string::npos);  // no text report

  args = VerifyArgs();
  args.insert(args.end(), {"--no-numeric", "--json", "-", "--sarif", "-"});
  Result both = RunFromRoot(args);
  EXPECT_EQ(both.code, report::kExitBadInput);
  EXPECT_NE(both.err.find("would both write to standard output"), std::string::npos) << both.err;
  EXPECT_TRUE(both.out.empty());
}

// An unwritable report path is bad input before the text report is printed.
TEST(CiReportFlags, UnwritablePathIsBadInput) {
  for (const char* flag : {"--sarif", "--junit"}) {
    std::vector<std::string> args = VerifyArgs();
    args.insert(args.end(), {"--no-numeric", flag, "/nonexistent/dir/report"});
    Result r = RunFromRoot(args);
    EXPECT_EQ(r.code, report::kExitBadInput) << flag;
    EXPECT_NE(r.err.find("/nonexistent/dir/report"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace gg::cli
