#include "cli/numeric_commands.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/verify_command.h"
#include "frontend/loader.h"
#include "ir/graph_edit.h"
#include "report/exit_codes.h"
#include "runtime/check.h"
#include "runtime/check_report.h"
#include "runtime/device.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"

namespace gg::cli {
namespace {

const char kCheckHelp[] =
    "Executes the sequential graph (--seq) and every rank of the distributed graphs (--dist) on\n"
    "random inputs: S's inputs are drawn (integers inside the range they index), D's are derived\n"
    "through the spec's input relations (--relations). Then evaluates the spec's expected output\n"
    "relations and, with --from-verify, every relation in a 'verify --json' report, each against "
    "a\n"
    "per-tensor tolerance from a perturbed run of S (rounding noise at the tensor's depth and\n"
    "dtype, see docs/architecture.md). Reports each as holding or failing with max abs/rel error\n"
    "and the worst element, and the first S tensor where a relation fails. Dropout is off.\n"
    "--resize OLD=NEW,... runs at smaller sizes (every extent OLD becomes NEW, re-type-checked);\n"
    "--resize-dist gives D its own map when its extents differ (sequence-parallel shards).\n"
    "Exit codes: 0 every relation holds, 1 a relation fails, 2 bad input or usage, 3 a relation\n"
    "could not be evaluated.\n"
    "--distributed (under mpirun -np N, N = D's world size): process r runs D's rank r with MPI\n"
    "collectives; inputs are drawn from the same seed on every process; rank 0 also runs S,\n"
    "receives the D tensors the relations need and writes the same report as without it (native\n"
    "MPI sums may round differently; --exact-collectives makes it identical). Every process exits\n"
    "with rank 0's code; the others print nothing.\n"
    "--device cpu|cuda[:N] runs S and D there (default cpu); inputs are drawn on the CPU, so a\n"
    "CUDA run checks the same values. With --distributed, 'cuda' is GPU (local rank % GPUs).\n"
    "Without a CUDA device, --device cuda is a usage error (exit 2).";

struct VerifyReport {
  std::string verdict;
  std::vector<symbolic::Relation> relations;
  std::optional<std::string> first_failure;  // the S node verify could not relate
};

std::string ReadFile(const std::string& path, const std::string& what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, 0, "cannot open the " + what);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// The relations of a `verify --json` report, parsed against the loaded graphs.
VerifyReport LoadVerifyReport(const std::string& path, const ir::Graph& s_graph,
                              const ir::Program& d_program) {
  std::string text = ReadFile(path, "verify report");
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, 0, std::string("malformed JSON report: ") + e.what());
  }
  if (!report.is_object() || report.value("schema", "") != "graphguard.verify-report") {
    throw InputError(path, 0, "not a 'graphguard verify --json' report");
  }
  VerifyReport result;
  result.verdict = report.value("verdict", "");
  if (report.contains("first_failure") && report["first_failure"].is_object() &&
      report["first_failure"].contains("node") && report["first_failure"]["node"].is_string()) {
    result.first_failure = report["first_failure"]["node"].get<std::string>();
  }
  if (!report.contains("tensors") || !report["tensors"].is_object()) {
    throw InputError(path, 0, "the report has no \"tensors\" object");
  }
  for (const auto& [name, entry] : report["tensors"].items()) {
    std::optional<ir::TensorRef> s_tensor = s_graph.Find(name);
    if (!s_tensor) {
      throw InputError(path, 0,
                       "the report names S tensor '" + name + "', which " + s_graph.file +
                           " does not have (another S graph?)");
    }
    if (!entry.contains("relations") || !entry["relations"].is_array()) continue;
    for (const auto& rel : entry["relations"]) {
      std::string text = rel.value("relation", "");
      size_t eq = text.find(" == ");
      if (eq == std::string::npos) throw InputError(path, 0, "malformed relation '" + text + "'");
      symbolic::Relation relation;
      relation.s_tensor = *s_tensor;
      relation.expr = symbolic::ParseRelExpr(text.substr(eq + 4), d_program, path, 0);
      relation.origin = "inferred (" + path + ")";
      result.relations.push_back(std::move(relation));
    }
  }
  return result;
}

CommandHandler& DistributedCheckRunner() {
  static CommandHandler runner;
  return runner;
}

int RunCheckCommand(const ParsedCommand& command, std::ostream& out) {
  if (command.Has("--distributed")) {
    if (!DistributedCheckRunner()) {
      throw UsageError(
          "--distributed needs a graphguard built with MPI, and this build has none (install "
          "Open MPI, e.g. apt-get install libopenmpi-dev, and configure again: the configure "
          "step prints 'MPI yes')");
    }
    return DistributedCheckRunner()(command, out);
  }
  if (command.Has("--exact-collectives")) {
    throw UsageError("--exact-collectives applies to --distributed only");
  }
  CheckSetup setup = PrepareCheck(command);
  runtime::CheckResult result = runtime::RunCheck(setup.s_graph, setup.d_program, setup.relations,
                                                  setup.inferred, setup.options);
  return ReportCheck(command, setup, result, out);
}

}  // namespace

CheckSetup PrepareCheck(const ParsedCommand& command) {
  CheckSetup setup;
  runtime::CheckRunInfo& info = setup.info;
  info.tool = VersionLine();
  info.seq = command.One("--seq");
  info.dist = command.Many("--dist");
  info.relations = command.One("--relations");
  info.timing = !command.Has("--no-timing");
  setup.options.seed = static_cast<uint64_t>(NonNegativeInteger(command, "--seed", 0));
  try {
    // Each process of a distributed run on a node takes its own GPU when given plain "cuda".
    int local_rank = command.Has("--distributed") ? runtime::LocalRankFromEnvironment() : -1;
    setup.options.device = runtime::ResolveDevice(command.One("--device", "cpu"), local_rank);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  setup.s_graph = frontend::LoadGraph(info.seq);
  setup.d_program = frontend::LoadProgram(info.dist);
  ApplyResize(command, &setup.s_graph, &setup.d_program, &info.resize, &info.resize_dist);
  symbolic::RelationSpec spec = symbolic::RelationSpec::Load(info.relations);
  setup.relations = symbolic::EvaluateSpec(spec, setup.s_graph, setup.d_program);
  if (setup.relations.expected_outputs.empty()) {
    throw InputError(info.relations, 0, "the spec lists no expected output relation");
  }
  if (command.Has("--from-verify")) {
    info.from_verify = command.One("--from-verify");
    VerifyReport report = LoadVerifyReport(info.from_verify, setup.s_graph, setup.d_program);
    info.verify_verdict = report.verdict;
    setup.inferred = std::move(report.relations);
    if (report.first_failure) {
      if (std::optional<ir::NodeId> node = ir::FindNode(setup.s_graph, *report.first_failure)) {
        setup.options.classify = runtime::TensorOutputs(setup.s_graph, *node);
      }
    }
  }
  return setup;
}

int ReportCheck(const ParsedCommand& command, const CheckSetup& setup,
                const runtime::CheckResult& result, std::ostream& out) {
  std::string json_path = command.One("--json");
  if (!json_path.empty()) {
    WriteOutput(json_path,
                runtime::CheckReportJson(result, setup.s_graph, setup.info).dump(2) + "\n", out);
  }
  if (json_path != "-") out << runtime::FormatCheckText(result, setup.s_graph, setup.info);
  std::string outcome = runtime::CheckOutcome(result);
  if (outcome == "HOLDS") return report::kExitOk;
  if (outcome == "FAILS") return report::kExitViolation;
  return report::kExitUnknown;
}

void SetDistributedCheckRunner(CommandHandler runner) {
  DistributedCheckRunner() = std::move(runner);
}

Command CheckCommand() {
  CommandSpec spec;
  spec.name = "check";
  spec.summary = "Run S and D on random inputs and check the relations numerically.";
  spec.options = GraphInputOptions();
  spec.options.insert(
      spec.options.end(),
      {
          OptionSpec::One("--relations", "SPEC", "the relation spec file").Required(),
          OptionSpec::One("--from-verify", "R.json",
                          "also check every relation of a 'verify --json' report"),
          OptionSpec::One("--json", "FILE", "also write the JSON report; '-': stdout only"),
          OptionSpec::One("--seed", "N", "random seed of the inputs (default 0)"),
          OptionSpec::One("--device", "cpu|cuda[:N]",
                          "where S and D run (default cpu; exit 2 without a CUDA device)"),
          OptionSpec::Flag("--no-timing", "leave wall-clock times out of the reports"),
          OptionSpec::Flag(
              "--distributed",
              "under mpirun -np N (N = D's ranks): process r runs rank r of D with MPI "
              "collectives, rank 0 runs S and writes the report (MPI builds)"),
          OptionSpec::Flag("--exact-collectives",
                           "with --distributed: collectives computed as the single-process run "
                           "does (every member's input gathered), so the report is identical"),
      });
  for (OptionSpec& option : ResizeOptions()) spec.options.push_back(option);
  spec.description = kCheckHelp;
  return Command{spec, RunCheckCommand};
}

std::vector<Command> NumericCommands() { return {CheckCommand(), InferRelationsCommand()}; }

}  // namespace gg::cli
