// Numeric commands: the subcommands that execute graphs and so exist only in a build with the
// LibTorch runtime — `graphguard check` (numeric differential check of S against D on random
// inputs derived through the relation spec). main() adds them to the command table; a laptop
// build says how to get them (app.cc).
#pragma once

#include <vector>

#include "cli/app.h"

namespace gg::cli {

// `check --seq FILE --dist DIR|FILE... --relations SPEC [--from-verify R.json] [--json FILE]
// [--seed N] [--resize MAP] [--resize-dist MAP] [--no-timing]`: exit 0 when every relation
// holds, 1 when one fails, 3 when none fails but one could not be evaluated, 2 bad input.
Command CheckCommand();

// `infer-relations --seq FILE --dist DIR|FILE... -o SPEC [--seed N] [--resize MAP]
// [--resize-dist MAP]`: exit 0 spec written, 3 written with an input left unresolved, 2 bad input.
Command InferRelationsCommand();

// Every numeric command, in --help order.
std::vector<Command> NumericCommands();

}  // namespace gg::cli
