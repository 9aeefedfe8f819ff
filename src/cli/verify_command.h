// Verify and explain commands: `graphguard verify` (load S, D and a relation spec, run relation
// inference with the lemma catalogue, print the verdict report, optionally write it as JSON) and
// `graphguard explain TENSOR` (the relations of one S tensor and the lemmas that proved them,
// recomputed or read from a verify JSON report). Each is one entry of the command table in app.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/app.h"
#include "ir/graph.h"
#include "ir/program.h"
#include "report/progress.h"
#include "symbolic/inference.h"
#include "symbolic/relation_spec.h"

namespace gg::cli {

// `verify --seq FILE --dist DIR|FILE... --relations SPEC [--hints FILE] [--json FILE] [limits]
// [--no-timing] [--inputs VALUES]`: exit 0 REFINES, 1 VIOLATION, 3 UNKNOWN, 2 bad input
// (including a spec without outputs, a bad hint file or a bad values file).
Command VerifyCommand();

// How verify gets numeric evidence for an UNKNOWN verdict (symbolic::NumericEvidence): a build
// with the numeric runtime sets it in main() (cli/numeric_commands.h); without one, verify says
// that this build cannot tell a difference from a missing lemma.
// `inputs`: a values file of S's inputs (verify --inputs: the values graphs with
// value-dependent shapes were traced with), run on instead of drawn; "" draws them from `seed`.
using EvidenceGatherer = std::function<symbolic::NumericEvidence(
    const ir::Graph& s_graph, const ir::Program& d_program, const symbolic::SpecResult& spec,
    const symbolic::VerifyResult& result, uint64_t seed, const std::string& inputs)>;
void SetEvidenceGatherer(EvidenceGatherer gatherer);

// How verify --guided gets its hints (symbolic::NumericGuide): set like the evidence gatherer;
// without one, --guided is a usage error naming the build.
using NumericGuider =
    std::function<symbolic::NumericGuide(const ir::Graph& s_graph, const ir::Program& d_program,
                                         const symbolic::SpecResult& spec, uint64_t seed)>;
void SetNumericGuider(NumericGuider guider);

// `explain TENSOR (--seq FILE --dist DIR|FILE... --relations SPEC | --from-report FILE.json)`:
// exit 0 when TENSOR has relations, 1 when none was found, 2 for an unknown tensor.
Command ExplainCommand();

// The graph inputs `--seq FILE` and `--dist DIR|FILE...` that verify, explain, check and
// infer-relations take (required unless `required` is false: explain may read a report instead).
std::vector<OptionSpec> GraphInputOptions(bool required = true);
// --strict-ops (in GraphInputOptions, import and stats): unknown operators are errors.
OptionSpec StrictOpsOption();

// The options `--resize OLD=NEW,...` (S and D) and `--resize-dist OLD=NEW,...` (D's own map) of
// verify and check, and applying them to loaded graphs (frontend/resize.h). The applied maps'
// canonical texts go to *s_map and *d_map ("" when not resized).
std::vector<OptionSpec> ResizeOptions();
void ApplyResize(const ParsedCommand& command, ir::Graph* s_graph, ir::Program* d_program,
                 std::string* s_map, std::string* d_map);

// `--memory-budget SIZE` of verify and check: the most memory their numeric run may take
// (frontend/memory_estimate.h); over it the run is resized (frontend/auto_resize.h). The budget in
// bytes: the option's value ("8G", "512M"; 0 or "none": no budget), else half of MemAvailable.
// A bad value is a UsageError naming the option.
OptionSpec MemoryBudgetOption();
uint64_t MemoryBudget(const ParsedCommand& command);

// `--sarif FILE`, `--junit FILE` (the CI reports of verify and check: report/sarif.h,
// report/junit.h; '-': standard output alone) and `--quiet` (no progress line).
std::vector<OptionSpec> CiReportOptions();

// The progress line of a verify or check run (report/progress.h): on stderr when stderr is a
// terminal and --quiet is not given, else silent. It appears once the run has lasted
// GG_PROGRESS_AFTER_MS milliseconds (default 1000; the pseudo-terminal test sets 0).
std::unique_ptr<report::ProgressLine> MakeProgressLine(const ParsedCommand& command);

// A graph file whose shapes follow from the values it was traced with (its JSON
// "traced_values": expert parallelism's all-to-all split sizes, docs/graph-format.md): the path
// of the values file of S's inputs (relative to the graph file) and why. nullopt for any other
// graph file (FX text included). Random inputs would take other shapes, so numeric runs use
// those values (check --inputs, verify --inputs) or do not run.
struct TracedValues {
  std::string file;
  std::string why;
};
std::optional<TracedValues> TracedValuesOf(const std::string& graph_path);

// The numeric commands (check, infer-relations) execute the graphs: a graph with symbolic dims
// (captured with dynamic shapes) is bad input naming the first such value and its line.
void RequireStaticShapes(const ir::Graph& s_graph, const ir::Program& d_program,
                         const std::string& command);

}  // namespace gg::cli
