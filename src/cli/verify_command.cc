#include "cli/verify_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cli/user_lemmas.h"
#include "frontend/auto_resize.h"
#include "frontend/loader.h"
#include "frontend/memory_estimate.h"
#include "frontend/resize.h"
#include "ir/graph.h"
#include "ir/program.h"
#include "report/exit_codes.h"
#include "report/html.h"
#include "report/junit.h"
#include "report/progress.h"
#include "report/sarif.h"
#include "report/verify_report.h"
#include "symbolic/hints.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::cli {
namespace {

const char kVerifyHelp[] =
    "Loads the sequential graph (--seq), the per-rank distributed graphs (--dist: files and/or\n"
    "directories) and the relation spec (--relations, see docs/relations.md), infers a relation\n"
    "for every S operator the expected outputs depend on, and prints the verdict report.\n"
    "--hints FILE gives candidate relations that guide the search (lines 'S_TENSOR == EXPR',\n"
    "written by 'graphguard infer-relations --hints-out FILE' in a LibTorch build); --guided\n"
    "makes them from one run of S and D on random inputs first (fingerprint matches). An\n"
    "operator whose outputs have hints is searched only over the D operators leading to the\n"
    "hinted tensors; every relation is still proved, and a guided search that does not end\n"
    "REFINES is run again without hints: a wrong hint changes the work, never the verdict.\n"
    "The lemma catalogue is incomplete, so when the proof stops (a limit, or a search that ends\n"
    "without a relation) the symbolic verdict is UNKNOWN. A build with the numeric runtime then\n"
    "runs S and D on random inputs (as 'graphguard check --seed N' does, at the same sizes): an\n"
    "expected output that differs makes it a VIOLATION with that counterexample; outputs that\n"
    "agree leave it UNKNOWN (a lemma is likely missing) and say what the stopping S tensor equals\n"
    "numerically. A difference in at most 3 elements, under 4x their rounding tolerance, is\n"
    "reported, not called a VIOLATION. The run is not bounded by --timeout-ms and uses the\n"
    "sizes verify used (--resize makes it smaller), unless its estimated peak memory is over\n"
    "--memory-budget (default half of MemAvailable): then it runs at sizes reduced to fit, which\n"
    "the report names with the reason, or is skipped saying so. --no-numeric skips it (reports\n"
    "then depend on the symbolic engine only).\n"
    "Exit codes: 0 REFINES, 1 VIOLATION, 2 bad input or usage, 3 UNKNOWN.\n"
    "The JSON report (--json) follows docs/report-format.md, and so do the CI reports: --sarif\n"
    "(SARIF 2.1.0: a VIOLATION or UNKNOWN is a result at the model's source line) and --junit\n"
    "(a test case per expected output; UNKNOWN is an <error>). --html writes one self-contained\n"
    "page (verdict, where the proof stopped, proofs on click, the S graph by layer with a search\n"
    "box). On a terminal, a run longer than a second shows its progress on stderr (--quiet: not).";

const char kExplainHelp[] =
    "Prints every relation found for the S tensor TENSOR (an FX value name of the sequential\n"
    "graph) and the chain of lemmas that proved it. Takes the inputs of verify, or --from-report\n"
    "with a JSON report written by 'graphguard verify --json'.\n"
    "Exit codes: 0 relations found, 1 none found, 2 unknown tensor or bad input.";

// Options shared by verify and explain: the inputs (required by verify only) and the limits.
std::vector<OptionSpec> InputAndLimitOptions(bool required) {
  auto maybe_required = [required](OptionSpec spec) { return required ? spec.Required() : spec; };
  symbolic::InferenceOptions defaults;
  std::vector<OptionSpec> options = GraphInputOptions(required);
  options.insert(
      options.end(),
      {
          maybe_required(OptionSpec::One("--relations", "SPEC", "the relation spec file")),
          OptionSpec::One("--max-nodes", "N",
                          "e-node limit of each local e-graph (default " +
                              std::to_string(defaults.per_node.nodes) + ")"),
          OptionSpec::One("--max-iterations", "N",
                          "saturation iterations per S operator (default " +
                              std::to_string(defaults.per_node.iterations) + ")"),
          OptionSpec::One(
              "--timeout-ms", "N",
              "time limit of each S operator's saturation in ms (default " +
                  std::to_string(static_cast<int64_t>(defaults.per_node.time.count() * 1000)) +
                  ")"),
          OptionSpec::One("--hops", "N",
                          "starting depth (D computing operators beyond the related D tensors) of "
                          "the neighbourhood search, which deepens by doubling up to " +
                              std::to_string(defaults.max_compute_hops) + " (default " +
                              std::to_string(defaults.compute_hops) + ")"),
          OptionSpec::One("--limit-deepenings", "N",
                          "deeper attempts of an S operator's search after it hits the node or "
                          "iteration limit in a neighbourhood cut short (default " +
                              std::to_string(defaults.limit_deepenings) + ")"),
          OptionSpec::Flag("--no-memo",
                           "solve every local problem afresh (no reuse of identical ones)"),
          OptionSpec::One("--threads", "N",
                          "threads saturating independent local e-graphs side by side; the "
                          "result is the same for every N (default 0: every hardware thread)"),
          OptionSpec::Many("--lemmas", "FILE",
                           "extra lemmas in the catalogue's rule syntax, each with a self-test "
                           "signature; self-tested at load, listed as premises where used "
                           "(docs/lemmas.md; repeatable)"),
          OptionSpec::One("--dump-egraph", "NAME",
                          "print the saturated local e-graphs of S operator NAME to stderr (for "
                          "lemma authors; also GG_DUMP_EGRAPH=NAME)"),
      });
  return options;
}

// Everything one verification run loads and computes.
struct VerifyRun {
  ir::Graph s_graph;
  ir::Program d_program;
  std::optional<symbolic::RelationSpec> spec;  // to evaluate again on resized graphs
  symbolic::SpecResult relations;
  symbolic::VerifyResult result;
  report::VerifyRunInfo info;
};

EvidenceGatherer& Gatherer() {
  static EvidenceGatherer gatherer;
  return gatherer;
}

NumericGuider& Guider() {
  static NumericGuider guider;
  return guider;
}

void CollectDLeaves(const symbolic::RelExpr& expr, std::vector<std::set<ir::TensorRef>>* kept) {
  symbolic::ForEachDLeaf(expr, [&](const symbolic::DTensor& d) {
    if (d.rank >= 0 && static_cast<size_t>(d.rank) < kept->size()) {
      (*kept)[static_cast<size_t>(d.rank)].insert(d.tensor);
    }
  });
}

// The numeric evidence within the memory budget: at the verified sizes when their estimate fits,
// else at sizes chosen to fit (the spec evaluated again on the resized graphs), else none, with
// the reason (never a run the machine cannot hold).
// The sizes a numeric run of `run` (the check of verify's spec) takes within `budget`.
frontend::AutoResize FitNumericRun(const VerifyRun& run, uint64_t budget) {
  auto estimate = [&](const ir::Graph& s, const ir::Program& d) {
    // The evidence compares the spec's expected outputs and assumed relations.
    frontend::CheckFootprint footprint;
    footprint.kept.resize(static_cast<size_t>(d.world_size()));
    for (const auto* list : {&run.relations.expected_outputs, &run.relations.assumed}) {
      for (const symbolic::Relation& r : *list) {
        footprint.compared.push_back(r.s_tensor);
        CollectDLeaves(r.expr, &footprint.kept);
      }
    }
    return frontend::EstimateCheckMemory(s, d, footprint);
  };
  auto validate = [&](const ir::Graph& s, const ir::Program& d) {
    symbolic::EvaluateSpec(*run.spec, s, d);
  };
  return frontend::FitMemoryBudget(run.s_graph, run.d_program, budget, estimate, validate);
}

// `inputs`: verify --inputs (S's input values, which fix the sizes: no resized run on them).
symbolic::NumericEvidence GatherWithinBudget(const VerifyRun& run, uint64_t seed, uint64_t budget,
                                             const std::string& inputs) {
  frontend::AutoResize fit = FitNumericRun(run, budget);
  if (!fit.needed) {
    return Gatherer()(run.s_graph, run.d_program, run.relations, run.result, seed, inputs);
  }
  if (!fit.fits || !inputs.empty()) {
    symbolic::NumericEvidence evidence;
    evidence.how = "graphguard check, seed " + std::to_string(seed) + ", cpu, not run";
    evidence.error = "the numeric run was skipped: " + fit.note +
                     (inputs.empty() ? " (a larger --memory-budget, or --resize, may let it run)"
                                     : " (the values of " + inputs +
                                           " fix the sizes; a larger --memory-budget may let it "
                                           "run)");
    evidence.resized = fit.note;
    return evidence;
  }
  symbolic::SpecResult relations = symbolic::EvaluateSpec(*run.spec, fit.s_graph, fit.d_program);
  symbolic::NumericEvidence evidence =
      Gatherer()(fit.s_graph, fit.d_program, relations, run.result, seed, inputs);
  evidence.how += ", at reduced sizes " + frontend::ResizeMapText(fit.chosen);
  evidence.resized = fit.note;
  return evidence;
}

// --guided: the hints of one numeric run within the memory budget (at reduced sizes when needed:
// matches that do not fit the verified sizes are left out); *source says where they came from,
// or why there are none (then the search is not guided).
symbolic::Hints GuidedHints(const VerifyRun& run, uint64_t seed, uint64_t budget,
                            std::string* source) {
  frontend::AutoResize fit = FitNumericRun(run, budget);
  symbolic::NumericGuide guide;
  std::string sizes;
  if (!fit.needed) {
    guide = Guider()(run.s_graph, run.d_program, run.relations, seed);
  } else if (fit.fits) {
    symbolic::SpecResult relations = symbolic::EvaluateSpec(*run.spec, fit.s_graph, fit.d_program);
    guide = Guider()(fit.s_graph, fit.d_program, relations, seed);
    sizes = ", at reduced sizes " + frontend::ResizeMapText(fit.chosen);
  } else {
    *source = "no numeric run (" + fit.note + "; a larger --memory-budget may let it run)";
    return {};
  }
  if (!guide.error.empty()) {
    *source = "no numeric run (" + guide.error + ")";
    return {};
  }
  size_t dropped = 0;
  symbolic::Hints hints = symbolic::HintsFromMatches(guide, run.s_graph, run.d_program, &dropped);
  *source = "a numeric run (" + guide.how + sizes + "; " + std::to_string(guide.matches.size()) +
            " fingerprint matches";
  if (dropped > 0)
    *source += ", " + std::to_string(dropped) + " left out: not of the verified sizes";
  *source += ")";
  return hints;
}

// `progress_line` (may be null) shows the inference's progress.
// `proposed`: lemma files made from numeric runs (--accept-proposed), used as user lemmas.
VerifyRun RunVerification(const ParsedCommand& command,
                          report::ProgressLine* progress_line = nullptr,
                          const std::vector<symbolic::LemmaFile>& proposed = {}) {
  VerifyRun run;
  symbolic::InferenceOptions options;
  run.info.tool = VersionLine();
  run.info.seq = command.One("--seq");
  run.info.dist = command.Many("--dist");
  run.info.relations = command.One("--relations");
  run.info.timing = !command.Has("--no-timing");
  int64_t default_ms = static_cast<int64_t>(options.per_node.time.count() * 1000);
  run.info.max_nodes =
      NonNegativeInteger(command, "--max-nodes", static_cast<int64_t>(options.per_node.nodes));
  run.info.max_iterations = NonNegativeInteger(command, "--max-iterations",
                                               static_cast<int64_t>(options.per_node.iterations));
  run.info.timeout_ms = NonNegativeInteger(command, "--timeout-ms", default_ms);
  int64_t hops = NonNegativeInteger(command, "--hops", options.compute_hops);
  if (hops > 1000) throw UsageError("option '--hops' is at most 1000, got " + std::to_string(hops));
  run.info.hops = static_cast<int32_t>(hops);
  int64_t deepenings = NonNegativeInteger(command, "--limit-deepenings", options.limit_deepenings);
  if (deepenings > 10) {
    throw UsageError("option '--limit-deepenings' is at most 10, got " +
                     std::to_string(deepenings));
  }
  run.info.limit_deepenings = static_cast<int32_t>(deepenings);
  options.limit_deepenings = run.info.limit_deepenings;
  options.per_node.nodes = static_cast<size_t>(run.info.max_nodes);
  options.per_node.iterations = static_cast<size_t>(run.info.max_iterations);
  options.per_node.time = std::chrono::milliseconds(run.info.timeout_ms);
  options.compute_hops = run.info.hops;
  options.memoize = !command.Has("--no-memo");
  options.threads = static_cast<size_t>(NonNegativeInteger(command, "--threads", 0));
  if (options.threads > 1024) {
    throw UsageError("option '--threads' is at most 1024, got " + std::to_string(options.threads));
  }
  if (command.Has("--dump-egraph")) {
    options.dump_egraph = command.One("--dump-egraph");
  } else if (const char* name = std::getenv("GG_DUMP_EGRAPH")) {
    options.dump_egraph = name;
  }

  run.s_graph = frontend::LoadGraph(run.info.seq);
  run.d_program = frontend::LoadProgram(run.info.dist);
  std::string s_map, d_map;
  ApplyResize(command, &run.s_graph, &run.d_program, &s_map, &d_map);
  symbolic::RelationSpec spec = symbolic::RelationSpec::Load(run.info.relations);
  run.relations = symbolic::EvaluateSpec(spec, run.s_graph, run.d_program);
  run.spec = spec;
  const symbolic::SpecResult& relations = run.relations;
  symbolic::Hints hints;
  if (command.Has("--hints") && command.Has("--guided")) {
    throw UsageError("give '--hints FILE' or '--guided', not both");
  }
  if (command.Has("--hints")) {
    run.info.hints = command.One("--hints");
    hints = symbolic::LoadHints(run.info.hints, run.s_graph, run.d_program);
    options.hints = &hints;
  } else if (command.Has("--guided")) {
    if (command.Has("--no-numeric")) {
      throw UsageError("'--guided' is a numeric run; do not also give '--no-numeric'");
    }
    if (!Guider()) {
      throw UsageError(
          "'--guided' runs S and D on random inputs, and this build has no numeric engine (a "
          "LibTorch build: bash scripts/setup.sh); or pass hints from such a build's "
          "'graphguard infer-relations --hints-out FILE' with '--hints FILE'");
    }
    uint64_t seed = static_cast<uint64_t>(NonNegativeInteger(command, "--seed", 0));
    auto start = std::chrono::steady_clock::now();
    hints = GuidedHints(run, seed, MemoryBudget(command), &run.info.hints);
    run.info.hints_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!hints.empty()) options.hints = &hints;
  }
  // Nothing to check would be a silent pass: refuse it.
  if (relations.expected_outputs.empty()) {
    throw InputError(run.info.relations, 0, "the spec lists no expected output relation");
  }
  std::optional<report::VerifyProgress> progress;
  if (progress_line != nullptr && progress_line->enabled()) {
    progress.emplace(run.s_graph, progress_line);
    options.progress = [&progress](ir::NodeId next) { progress->OnOperator(next); };
  }
  const UserLemmas user_lemmas = LoadUserLemmas(command.Many("--lemmas"), proposed);
  std::vector<symbolic::Rewrite> rules = user_lemmas.empty()
                                             ? symbolic::LemmaCatalogue::Default().Rules()
                                             : user_lemmas.RulesWithCatalogue();
  // --exact-casts: floating-point casts stay opaque (no lemma that holds only up to rounding).
  if (command.Has("--exact-casts")) std::erase_if(rules, symbolic::IsRoundingRule);
  run.result = symbolic::Verify(run.s_graph, run.d_program, relations, rules, options);
  user_lemmas.AddPremises(&run.result);
  return run;
}

// --accept-proposed: while the verdict stays UNKNOWN and the numeric run proposes lemmas not
// tried yet, verify again with every proposal so far as user lemmas (a few rounds: each proof
// that stops at another operator may need its own lemma).
void AcceptProposed(const ParsedCommand& command, VerifyRun* run, uint64_t seed, uint64_t budget,
                    const std::string& inputs) {
  constexpr int kRounds = 4;
  std::vector<symbolic::LemmaFile> proposed;
  std::set<std::string> tried;
  for (int round = 1; round <= kRounds; ++round) {
    const symbolic::VerifyResult& result = run->result;
    if (result.verdict != symbolic::Verdict::kUnknown || !result.evidence) return;
    std::string text;
    for (const std::string& p : result.evidence->proposals) {
      if (tried.insert(p).second) text += p;
    }
    if (text.empty()) return;
    proposed.push_back({"proposed-" + std::to_string(round) + ".rules", text});
    VerifyRun next = RunVerification(command, nullptr, proposed);
    if (next.result.verdict == symbolic::Verdict::kUnknown) {
      symbolic::ApplyNumericEvidence(&next.result, GatherWithinBudget(next, seed, budget, inputs));
    }
    *run = std::move(next);
  }
}

int VerdictExitCode(symbolic::Verdict verdict) {
  switch (verdict) {
    case symbolic::Verdict::kRefines:
      return report::kExitOk;
    case symbolic::Verdict::kViolation:
      return report::kExitViolation;
    case symbolic::Verdict::kUnknown:
      return report::kExitUnknown;
  }
  return report::kExitUnknown;
}

int RunVerify(const ParsedCommand& command, std::ostream& out) {
  const std::string to_stdout =
      StdoutReportOption(command, {"--json", "--sarif", "--junit", "--html"});
  std::unique_ptr<report::ProgressLine> progress = MakeProgressLine(command);
  // Options are checked before any work, whether or not the numeric run will need them.
  const uint64_t budget = MemoryBudget(command);
  const std::string inputs = command.One("--inputs");
  if (!inputs.empty() && !std::filesystem::is_regular_file(inputs)) {
    throw InputError(inputs, 0, "no such values file (--inputs: S's input values, JSON)");
  }
  VerifyRun run = RunVerification(command, progress.get());
  uint64_t seed = static_cast<uint64_t>(NonNegativeInteger(command, "--seed", 0));
  std::optional<TracedValues> traced = TracedValuesOf(command.One("--seq"));
  if (run.result.verdict == symbolic::Verdict::kUnknown && !command.Has("--no-numeric")) {
    if (Gatherer() && traced && inputs.empty()) {
      // Random inputs would take shapes the graphs do not have: no evidence from them.
      symbolic::NumericEvidence evidence;
      evidence.how = "graphguard check, seed " + std::to_string(seed) + ", cpu, not run";
      evidence.error = "the numeric run was skipped: " + command.One("--seq") +
                       " replays only on the values it was traced with (" + traced->why +
                       "); run verify (or check) with '--inputs " + traced->file + "'";
      symbolic::ApplyNumericEvidence(&run.result, evidence);
    } else if (Gatherer()) {
      if (progress->enabled()) {
        report::VerifyProgress(run.s_graph, progress.get())
            .Phase(inputs.empty() ? "numeric evidence (S and D on random inputs)"
                                  : "numeric evidence (S and D on the values of " + inputs + ")");
      }
      symbolic::ApplyNumericEvidence(&run.result, GatherWithinBudget(run, seed, budget, inputs));
      if (command.Has("--accept-proposed")) AcceptProposed(command, &run, seed, budget, inputs);
    } else {
      run.result.summary +=
          "; this build has no numeric engine to tell a difference from a missing lemma "
          "(a LibTorch build runs one)";
    }
  }
  progress->Clear();
  // The report files first: an unwritable path is bad input before anything was printed.
  if (std::string path = command.One("--json"); !path.empty()) {
    WriteOutput(
        path,
        report::VerifyReportJson(run.result, run.s_graph, run.d_program, run.info).dump(2) + "\n",
        out);
  }
  if (std::string path = command.One("--sarif"); !path.empty()) {
    WriteOutput(path, report::SarifText(report::VerifySarif(run.result, run.s_graph, run.info)),
                out);
  }
  if (std::string path = command.One("--junit"); !path.empty()) {
    WriteOutput(path, report::VerifyJunit(run.result, run.s_graph, run.info), out);
  }
  if (std::string path = command.One("--html"); !path.empty()) {
    WriteOutput(path, report::VerifyHtml(run.result, run.s_graph, run.info), out);
  }
  if (to_stdout.empty()) {
    out << report::FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  }
  return VerdictExitCode(run.result.verdict);
}

// 1-based line of byte offset `byte` in `text` (for JSON parse errors).
int LineOfByte(const std::string& text, size_t byte) {
  int line = 1;
  for (size_t i = 0; i < text.size() && i + 1 < byte; ++i) line += text[i] == '\n';
  return line;
}

report::RelationTable TableFromReport(const std::string& path) {
  std::string text = ReadInputFile(path, "report file");
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, LineOfByte(text, e.byte), "malformed JSON report");
  }
  return report::RelationTableFromJson(report, path);
}

int RunExplain(const ParsedCommand& command, std::ostream& out) {
  const std::string& tensor = command.positional.at(0);
  report::RelationTable table;
  std::string where;
  if (command.Has("--from-report")) {
    for (const char* option : {"--seq", "--dist", "--relations", "--max-nodes", "--max-iterations",
                               "--timeout-ms", "--hops", "--limit-deepenings"}) {
      if (command.Has(option)) {
        throw UsageError(std::string("'--from-report' replaces the inputs; do not also give '") +
                         option + "'");
      }
    }
    where = command.One("--from-report");
    table = TableFromReport(where);
  } else {
    for (const char* option : {"--seq", "--dist", "--relations"}) {
      if (!command.Has(option)) {
        throw UsageError(std::string("missing option '") + option +
                         "' (or give '--from-report FILE.json')");
      }
    }
    VerifyRun run = RunVerification(command);
    where = run.info.seq;
    table = report::RelationTableOf(run.result, run.s_graph);
  }
  std::string text;
  switch (report::FormatExplain(table, tensor, &text)) {
    case report::ExplainStatus::kFound:
      out << text;
      return report::kExitOk;
    case report::ExplainStatus::kNoRelation:
      out << text;
      return report::kExitViolation;
    case report::ExplainStatus::kUnknownTensor:
      break;
  }
  throw UsageError("unknown S tensor '" + tensor + "' (no value of that name in " + where + ")");
}

}  // namespace

std::optional<TracedValues> TracedValuesOf(const std::string& graph_path) {
  if (std::filesystem::path(graph_path).extension() != ".json") return std::nullopt;
  nlohmann::json root = nlohmann::json::parse(ReadInputFile(graph_path, "graph"), nullptr,
                                              /*allow_exceptions=*/false);
  if (!root.is_object() || !root.contains("traced_values")) return std::nullopt;
  const nlohmann::json& traced = root["traced_values"];  // its form checked by the loader
  std::filesystem::path file =
      std::filesystem::path(graph_path).parent_path() / traced.value("file", "");
  return TracedValues{file.string(), traced.value("why", "")};
}

std::vector<OptionSpec> GraphInputOptions(bool required) {
  OptionSpec seq = OptionSpec::One("--seq", "FILE", "the sequential model's graph");
  OptionSpec dist =
      OptionSpec::Many("--dist", "DIR|FILE", "per-rank graphs of the distributed program");
  if (!required) return {seq, dist, StrictOpsOption()};
  return {seq.Required(), dist.Required(), StrictOpsOption()};
}

OptionSpec StrictOpsOption() {
  return OptionSpec::Flag("--strict-ops",
                          "an operator unknown to GraphGuard is an error (default: it loads as "
                          "an opaque node typed from the file's annotation)");
}

std::vector<OptionSpec> ResizeOptions() {
  return {OptionSpec::One("--resize", "OLD=NEW,...",
                          "smaller sizes: every extent OLD becomes NEW in S and D"),
          OptionSpec::One("--resize-dist", "OLD=NEW,...", "D's own resize map")};
}

void ApplyResize(const ParsedCommand& command, ir::Graph* s_graph, ir::Program* d_program,
                 std::string* s_map, std::string* d_map) {
  if (command.Has("--resize")) {
    frontend::ResizeMap sizes = frontend::ParseResizeMap(command.One("--resize"), "--resize");
    *s_map = frontend::ResizeMapText(sizes);
    *s_graph = frontend::ResizeGraph(*s_graph, sizes);
    if (!command.Has("--resize-dist")) {
      *d_map = *s_map;
      *d_program = frontend::ResizeProgram(*d_program, sizes);
    }
  }
  if (command.Has("--resize-dist")) {
    frontend::ResizeMap sizes =
        frontend::ParseResizeMap(command.One("--resize-dist"), "--resize-dist");
    *d_map = frontend::ResizeMapText(sizes);
    *d_program = frontend::ResizeProgram(*d_program, sizes);
  }
}

OptionSpec MemoryBudgetOption() {
  return OptionSpec::One("--memory-budget", "SIZE",
                         "most memory the numeric run may take, e.g. 8G or 512M (default: half "
                         "of MemAvailable; 0 or none: no limit); over it the sizes are reduced");
}

uint64_t MemoryBudget(const ParsedCommand& command) {
  if (!command.Has("--memory-budget")) return frontend::DefaultMemoryBudget();
  try {
    return frontend::ParseMemorySize(command.One("--memory-budget"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("option '--memory-budget': ") + e.what());
  }
}

namespace {

// The first value of `graph` whose type has a symbolic dim, as an InputError.
void RequireStaticGraph(const ir::Graph& graph, const std::string& role,
                        const std::string& command) {
  for (const ir::Node& node : graph.nodes) {
    for (const ir::NodeOutput& out : node.outputs) {
      if (!out.type || ir::IsStatic(out.type->shape)) continue;
      const std::string name = out.name.empty() ? node.name : out.name;
      throw InputError(
          graph.file, node.def_line,
          role + " has symbolic dims ('" + name + "' is " + out.type->ToString() + "): '" +
              command +
              "' executes the graphs and needs static shapes, which "
              "--resize cannot give (it maps static extents); capture with static shapes, or "
              "use 'graphguard verify', which proves with symbolic dims");
    }
  }
}

}  // namespace

void RequireStaticShapes(const ir::Graph& s_graph, const ir::Program& d_program,
                         const std::string& command) {
  RequireStaticGraph(s_graph, "the sequential graph", command);
  for (const ir::Graph& rank : d_program.ranks) {
    RequireStaticGraph(rank, "rank " + std::to_string(rank.rank) + " of the distributed program",
                       command);
  }
}

std::vector<OptionSpec> CiReportOptions() {
  return {
      OptionSpec::One("--sarif", "FILE",
                      "also write the verdict as SARIF 2.1.0 (code scanning); '-': stdout only"),
      OptionSpec::One("--junit", "FILE",
                      "also write the verdict as JUnit XML (test reports); '-': stdout only"),
      OptionSpec::Flag("--quiet", "no progress line on stderr (shown only on a terminal)")};
}

std::unique_ptr<report::ProgressLine> MakeProgressLine(const ParsedCommand& command) {
  // Only a person at a terminal reads it; in a log or a pipe, "\r" rewrites are noise.
  bool show = !command.Has("--quiet") && isatty(STDERR_FILENO) == 1;
  double after = 1.0;
  if (const char* env = std::getenv("GG_PROGRESS_AFTER_MS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    long ms = std::strtol(env, &end, 10);
    if (end != nullptr && *end == '\0' && ms >= 0) after = static_cast<double>(ms) / 1000;
  }
  return std::make_unique<report::ProgressLine>(show ? &std::cerr : nullptr, after);
}

Command VerifyCommand() {
  CommandSpec spec;
  spec.name = "verify";
  spec.summary = "Check that the distributed graphs refine the sequential one (verdict report).";
  spec.options = InputAndLimitOptions(/*required=*/true);
  for (OptionSpec& option : ResizeOptions()) spec.options.push_back(option);
  spec.options.push_back(OptionSpec::One(
      "--hints", "FILE",
      "candidate relations that guide the search (infer-relations --hints-out); the verdict is "
      "never theirs"));
  spec.options.push_back(OptionSpec::Flag(
      "--guided",
      "run S and D once on random inputs first (LibTorch build) and guide the search by the "
      "fingerprint matches, as --hints; the verdict is never theirs"));
  spec.options.push_back(OptionSpec::One(
      "--json", "FILE", "also write the JSON report (docs/report-format.md); '-': stdout only"));
  for (OptionSpec& option : CiReportOptions()) spec.options.push_back(option);
  spec.options.push_back(OptionSpec::One(
      "--html", "FILE",
      "also write a self-contained HTML page of the verdict (browser); '-': stdout only"));
  spec.options.push_back(OptionSpec::Flag(
      "--no-timing", "leave wall-clock times out of every report (deterministic output)"));
  spec.options.push_back(OptionSpec::Flag(
      "--no-numeric", "no numeric run on an UNKNOWN verdict (symbolic engine only)"));
  spec.options.push_back(OptionSpec::Flag(
      "--exact-casts",
      "leave out the lemmas that hold only up to floating-point rounding (rounding.rules: a "
      "float cast commuted with sums and casts); by default they are used and a verdict on graphs "
      "that narrow floats lists the premise 'rounding'"));
  spec.options.push_back(
      OptionSpec::One("--seed", "N", "random seed of that numeric run's inputs (default 0)"));
  spec.options.push_back(OptionSpec::One(
      "--inputs", "VALUES",
      "that numeric run on S's inputs from a values file (graph-format.md), not random: the "
      "values graphs with value-dependent shapes were traced with"));
  spec.options.push_back(OptionSpec::Flag(
      "--accept-proposed",
      "when that run proposes lemmas (self-tested, shown under 'proposed'), verify again with "
      "them as user lemmas, listed as premises (docs/lemmas.md)"));
  spec.options.push_back(MemoryBudgetOption());
  spec.description = kVerifyHelp;
  return Command{spec, RunVerify};
}

void SetEvidenceGatherer(EvidenceGatherer gatherer) { Gatherer() = std::move(gatherer); }

void SetNumericGuider(NumericGuider guider) { Guider() = std::move(guider); }

Command ExplainCommand() {
  CommandSpec spec;
  spec.name = "explain";
  spec.summary = "Show the relations of one S tensor and the lemmas that proved them.";
  spec.positional_metavar = "TENSOR";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.options = InputAndLimitOptions(/*required=*/false);
  spec.options.push_back(
      OptionSpec::One("--from-report", "FILE.json", "read a 'verify --json' report instead"));
  spec.description = kExplainHelp;
  return Command{spec, RunExplain};
}

}  // namespace gg::cli
