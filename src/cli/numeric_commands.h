// Numeric commands: the subcommands that execute graphs and so exist only in a build with the
// LibTorch runtime — `graphguard check` (numeric differential check of S against D on random
// inputs derived through the relation spec). main() adds them to the command table; a laptop
// build says how to get them (app.cc).
#pragma once

#include <ostream>
#include <vector>

#include "cli/app.h"
#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/check.h"
#include "runtime/check_report.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"

namespace gg::cli {

// `check --seq FILE --dist DIR|FILE... --relations SPEC [--from-verify R.json] [--json FILE]
// [--seed N] [--resize MAP] [--resize-dist MAP] [--no-timing] [--distributed
// [--exact-collectives]]`: exit 0 when every relation
// holds, 1 when one fails, 3 when none fails but one could not be evaluated, 2 bad input.
Command CheckCommand();

// What `check` runs on, loaded and prepared from its options (graphs, resize, spec, verify
// report): the same for the single-process and the distributed mode.
struct CheckSetup {
  runtime::CheckRunInfo info;
  runtime::CheckOptions options;
  ir::Graph s_graph;
  ir::Program d_program;
  symbolic::SpecResult relations;
  std::vector<symbolic::Relation> inferred;
};
CheckSetup PrepareCheck(const ParsedCommand& command);

// Writes the report of a check (text to `out`, JSON with --json) and returns its exit code.
int ReportCheck(const ParsedCommand& command, const CheckSetup& setup,
                const runtime::CheckResult& result, std::ostream& out);

// `check --distributed` runs this, which main() sets in a build with MPI
// (cli/distributed_commands.h); without it the option is a usage error naming the missing MPI.
void SetDistributedCheckRunner(CommandHandler runner);

// `infer-relations --seq FILE --dist DIR|FILE... -o SPEC [--seed N] [--resize MAP]
// [--resize-dist MAP] [--memory-budget SIZE]`: exit 0 spec written, 3 written with an input left
// unresolved, 2 bad input (also when no sizes fit the memory budget).
Command InferRelationsCommand();

// S's inputs, in signature order, from a values file (docs/graph-format.md: every input of S by
// name, of the type S's graph gives it): check --inputs and verify --inputs. Bad input is an
// InputError naming the file.
std::vector<at::Tensor> LoadValues(const std::string& path, const ir::Graph& s_graph);

// Every numeric command, in --help order.
std::vector<Command> NumericCommands();

}  // namespace gg::cli
