#include "cli/numeric_commands.h"

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/budget_fit.h"
#include "cli/runtime_plugin.h"
#include "cli/verify_command.h"
#include "frontend/auto_resize.h"
#include "frontend/loader.h"
#include "frontend/memory_estimate.h"
#include "frontend/node_check.h"
#include "frontend/resize.h"
#include "ir/graph_edit.h"
#include "report/exit_codes.h"
#include "report/junit.h"
#include "report/progress.h"
#include "report/sarif.h"
#include "runtime/check.h"
#include "runtime/check_report.h"
#include "runtime/device.h"
#include "runtime/op_kernels.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::cli {
namespace {

struct VerifyReport {
  std::string verdict;
  std::vector<symbolic::Relation> relations;
  std::optional<std::string> first_failure;  // the S node verify could not relate
};

// The relations of a `verify --json` report, parsed against the loaded graphs.
VerifyReport LoadVerifyReport(const std::string& path, const ir::Graph& s_graph,
                              const ir::Program& d_program) {
  std::string text = ReadInputFile(path, "verify report");
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
  // Two reports on standard output are a usage error before the run, not after it.
  StdoutReportOption(command, {"--json", "--sarif", "--junit"});
  CheckSetup setup = PrepareCheck(command);
  std::unique_ptr<report::ProgressLine> progress = MakeProgressLine(command);
  if (progress->enabled()) {
    setup.options.progress = [&progress](const std::string& stage, size_t done, size_t total) {
      report::ProgressState state;
      state.what = "check";
      state.phase = "running " + stage;
      state.done = done;
      state.total = total;
      state.unit = "runs";
      progress->Update(state, /*force=*/true);
    };
  }
  runtime::CheckResult result = runtime::RunCheck(setup.s_graph, setup.d_program, setup.relations,
                                                  setup.inferred, setup.options);
  progress->Clear();
  return ReportCheck(command, setup, result, out);
}

// Resizes the check's graphs when its estimated peak is over --memory-budget
// (frontend/auto_resize.h), re-evaluating the spec on them; when no sizes fit, the check is not
// run: bad input naming the budget and what it needs (never a run the kernel kills).
void FitCheckToBudget(const ParsedCommand& command, const symbolic::RelationSpec& spec,
                      const std::vector<symbolic::Relation>& inferred, CheckSetup* setup) {
  const uint64_t budget = MemoryBudget(command);
  // D's kept tensors: passes keep a quarter of the budget at most (CheckOptions::memory_budget).
  if (budget > 0) setup->options.memory_budget = budget / 4;
  auto estimate = [&](const ir::Graph& s, const ir::Program& d) {
    symbolic::SpecResult relations = symbolic::EvaluateSpec(spec, s, d);
    // With the verify report's relations (node ids are those of the resized graphs too), so a
    // run that compares its large tensors is counted; they are left out once resized (below).
    runtime::CheckPlan plan = runtime::PlanCheck(s, d, relations, inferred, setup->options);
    frontend::CheckFootprint footprint;
    footprint.keep_budget = setup->options.memory_budget;
    footprint.kept.resize(static_cast<size_t>(d.world_size()));
    for (const auto& [tensor, checks] : plan.pending) footprint.compared.push_back(tensor);
    for (const std::vector<std::set<ir::TensorRef>>& pass : plan.keep) {
      for (size_t r = 0; r < pass.size() && r < footprint.kept.size(); ++r) {
        footprint.kept[r].insert(pass[r].begin(), pass[r].end());
      }
    }
    return frontend::EstimateCheckMemory(s, d, footprint);
  };
  auto validate = [&](const ir::Graph& s, const ir::Program& d) {
    symbolic::EvaluateSpec(spec, s, d);
  };
  runtime::CheckRunInfo& info = setup->info;
  info.memory = FitToMemoryBudget("the check", budget, estimate, validate, &setup->s_graph,
                                  &setup->d_program, &info.resize, &info.resize_dist);
  if (info.memory.empty()) return;
  setup->relations = symbolic::EvaluateSpec(spec, setup->s_graph, setup->d_program);
}

}  // namespace

// The values file: {"format": "graphguard-values", "inputs": {name: {"type": "f32[4, 16]",
// "data": [...]}}}.
std::vector<at::Tensor> LoadValues(const std::string& path, const ir::Graph& s_graph) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(ReadInputFile(path, "values file"));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, 0, std::string("malformed JSON values file: ") + e.what());
  }
  if (!root.is_object() || root.value("format", "") != "graphguard-values" ||
      !root.contains("inputs") || !root["inputs"].is_object()) {
    throw InputError(path, 0,
                     "not a values file (a JSON object with \"format\": \"graphguard-values\" "
                     "and an \"inputs\" object)");
  }
  std::vector<at::Tensor> values;
  for (ir::NodeId id : s_graph.inputs) {
    const ir::Node& node = s_graph.node(id);
    const nlohmann::json& all = root["inputs"];
    if (!all.contains(node.name)) {
      throw InputError(path, 0,
                       "no value for S's input '" + node.name + "' (" + s_graph.file +
                           "); the file must hold every input of S by name");
    }
    const nlohmann::json& entry = all[node.name];
    const std::optional<ir::TensorType>& want = node.outputs.at(0).type;
    std::string why;
    std::optional<ir::TensorType> type =
        ir::ParseTensorType(entry.value("type", std::string()), &why);
    if (!type || !entry.contains("data") || !entry["data"].is_array()) {
      throw InputError(path, 0,
                       "input '" + node.name + "': needs a \"type\" and a \"data\" array" +
                           (why.empty() ? "" : " (" + why + ")"));
    }
    if (!want || !(*type == *want)) {
      throw InputError(path, 0,
                       "input '" + node.name + "' is " + frontend::TypeText(type) + " but S has " +
                           frontend::TypeText(want));
    }
    std::vector<int64_t> shape;
    for (const ir::Dim& d : type->shape) shape.push_back(d.value());
    std::vector<double> data;
    for (const nlohmann::json& v : entry["data"]) {
      if (!v.is_number()) throw InputError(path, 0, "input '" + node.name + "': a non-number");
      data.push_back(v.get<double>());
    }
    at::Tensor t = at::tensor(data, at::kDouble);
    if (t.numel() != c10::multiply_integers(shape)) {
      throw InputError(path, 0,
                       "input '" + node.name + "' has " + std::to_string(t.numel()) +
                           " elements for " + frontend::TypeText(type));
    }
    values.push_back(t.reshape(shape).to(runtime::ToAten(type->dtype)));
  }
  return values;
}

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
  RequireStaticShapes(setup.s_graph, setup.d_program, "check");
  if (command.Has("--inputs")) {
    const std::string values = command.One("--inputs");
    setup.options.s_inputs = LoadValues(values, setup.s_graph);
    setup.options.s_inputs_note = "S's inputs from " + values + " (not drawn)";
  } else if (std::optional<TracedValues> traced = TracedValuesOf(info.seq)) {
    throw NotExecutableError(
        info.seq, 0,
        "the graphs replay only on the values they were traced with (" + traced->why +
            "): random inputs would take other shapes; run check with --inputs " + traced->file);
  }
  symbolic::RelationSpec spec = symbolic::RelationSpec::Load(info.relations);
  setup.relations = symbolic::EvaluateSpec(spec, setup.s_graph, setup.d_program);
  if (setup.relations.expected_outputs.empty()) {
    throw InputError(info.relations, 0, "the spec lists no expected output relation");
  }
  std::optional<VerifyReport> report;
  if (command.Has("--from-verify")) {
    info.from_verify = command.One("--from-verify");
    report = LoadVerifyReport(info.from_verify, setup.s_graph, setup.d_program);
  }
  FitCheckToBudget(command, spec, report ? report->relations : std::vector<symbolic::Relation>{},
                   &setup);
  if (report) {
    info.verify_verdict = report->verdict;
    // Its relations carry the verified sizes (slice bounds, reshape shapes): at reduced sizes only
    // the spec's relations are checked, and the report says so.
    if (info.memory.empty()) {
      setup.inferred = std::move(report->relations);
    } else {
      info.memory += "; the verify report's relations (at the verified sizes) were not checked";
    }
    if (report->first_failure) {
      if (std::optional<ir::NodeId> node = ir::FindNode(setup.s_graph, *report->first_failure)) {
        setup.options.classify = runtime::TensorOutputs(setup.s_graph, *node);
      }
    }
  }
  return setup;
}

int ReportCheck(const ParsedCommand& command, const CheckSetup& setup,
                const runtime::CheckResult& result, std::ostream& out) {
  const std::string to_stdout = StdoutReportOption(command, {"--json", "--sarif", "--junit"});
  if (std::string path = command.One("--json"); !path.empty()) {
    WriteOutput(path, runtime::CheckReportJson(result, setup.s_graph, setup.info).dump(2) + "\n",
                out);
  }
  if (command.Has("--sarif") || command.Has("--junit")) {
    report::CheckSummary summary = runtime::CheckSummaryOf(result, setup.s_graph, setup.info);
    if (std::string path = command.One("--sarif"); !path.empty()) {
      WriteOutput(path, report::SarifText(report::CheckSarif(summary)), out);
    }
    if (std::string path = command.One("--junit"); !path.empty()) {
      WriteOutput(path, report::CheckJunit(summary), out);
    }
  }
  if (to_stdout.empty()) out << runtime::FormatCheckText(result, setup.s_graph, setup.info);
  std::string outcome = runtime::CheckOutcome(result);
  if (outcome == "HOLDS") return report::kExitOk;
  if (outcome == "FAILS") return report::kExitViolation;
  return report::kExitUnknown;
}

void SetDistributedCheckRunner(CommandHandler runner) {
  DistributedCheckRunner() = std::move(runner);
}

Command CheckCommand() { return Command{CheckSpec(), RunCheckCommand}; }

std::vector<Command> NumericCommands() { return {CheckCommand(), InferRelationsCommand()}; }

}  // namespace gg::cli
