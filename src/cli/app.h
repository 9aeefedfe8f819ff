// App: the `graphguard` program as a function, so tests can run it without a process.
//
// RunGraphGuard dispatches `graphguard <command> ...` through the command table (one entry per
// subcommand: its CommandSpec and a handler), turns UsageError and gg::InputError into exit code
// 2 with a one-line "graphguard: error: ..." message, and any other exception into exit code 4
// ("graphguard: internal error: ..."). It never lets an exception escape.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command_line.h"

namespace gg::cli {

// A handler writes its normal output to `out` and returns an exit code (report/exit_codes.h).
using CommandHandler = std::function<int(const ParsedCommand&, std::ostream& out)>;

struct Command {
  CommandSpec spec;
  CommandHandler run;
};

// The table of subcommands, in the order `graphguard --help` lists them.
const std::vector<Command>& Commands();

// Adds commands that live outside gg_cli (the numeric commands of a LibTorch build, see
// cli/numeric_commands.h). Must be called before the first Commands() call, i.e. from main().
void AddCommands(std::vector<Command> commands);

// Commands a build without the numeric runtime lacks; naming one says how to get it.
inline const std::vector<std::string>& NumericCommandNames() {
  static const std::vector<std::string> names = {"check", "infer-relations"};
  return names;
}

// Runs graphguard with `args` (without argv[0]); returns the process exit code.
int RunGraphGuard(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// "graphguard 0.1.0".
std::string VersionLine();

}  // namespace gg::cli
