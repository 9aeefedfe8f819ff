#include "cli/app.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <new>
#include <sstream>

#include "cli/verify_command.h"
#include "frontend/json_format.h"
#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "report/exit_codes.h"
#include "report/stats_report.h"
#include "util/diagnostic.h"

#ifndef GG_VERSION
#define GG_VERSION "unknown"
#endif

namespace gg::cli {
namespace {

using Arity = OptionSpec::Arity;

const char kInputHelp[] =
    "INPUT is a graph file (FX print_readable text *.py/*.txt, or GraphGuard JSON *.json) or a\n"
    "directory of per-rank files; the rank of each graph comes from the file itself.";

int RunStats(const ParsedCommand& command, std::ostream& out) {
  ir::Program program = frontend::LoadProgram(command.positional);
  out << report::FormatStats(report::ComputeStats(program));
  return report::kExitOk;
}

// Writes the whole program (every rank and the process groups) as GraphGuard JSON. The file is
// written only after loading succeeded, so bad input never leaves a half-written output.
int RunImport(const ParsedCommand& command, std::ostream& out) {
  ir::Program program = frontend::LoadProgram(command.positional);
  std::string path = command.One("--output");
  std::string json = frontend::ToJson(program);
  if (path == "-") {
    out << json;
    return report::kExitOk;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw InputError(path, 0, CannotWrite(path, "output file"));
  file << json;
  file.close();
  if (!file) throw InputError(path, 0, "could not write the output file");
  return report::kExitOk;
}

CommandSpec InputsCommand(std::string name, std::string summary) {
  CommandSpec spec;
  spec.name = std::move(name);
  spec.summary = std::move(summary);
  spec.positional_metavar = "INPUT...";
  spec.min_positional = 1;
  spec.max_positional = -1;
  spec.description = kInputHelp;
  spec.options = {StrictOpsOption()};
  return spec;
}

// The command table. A later command is one more entry, e.g. verify:
//   spec.options = {OptionSpec::One("--seq", "FILE", ...).Required(),
//                   OptionSpec::Many("--dist", "DIR|FILE", ...).Required()}.
std::vector<Command>& ExtraCommands() {
  static std::vector<Command> extra;
  return extra;
}

std::vector<Command> BuildCommands() {
  std::vector<Command> commands;
  CommandSpec import =
      InputsCommand("import", "Load per-rank graphs and write them as one GraphGuard JSON file.");
  import.options.push_back(
      OptionSpec::One("--output", "OUT.json", "where to write the JSON ('-': standard output)")
          .Short("-o")
          .Required());
  commands.push_back(Command{import, RunImport});
  commands.push_back(Command{
      InputsCommand("stats", "Load per-rank graphs and print per-rank statistics."), RunStats});
  commands.push_back(VerifyCommand());  // cli/verify_command.h
  commands.push_back(ExplainCommand());
  for (const Command& command : ExtraCommands()) commands.push_back(command);
  // Every command that reads graphs (those taking --strict-ops) can pick one graph kind of
  // directories holding several per rank (frontend::GraphSelection).
  for (Command& command : commands) {
    std::vector<OptionSpec>& options = command.spec.options;
    const bool reads_graphs = std::any_of(options.begin(), options.end(), [](const OptionSpec& o) {
      return o.name == "--strict-ops";
    });
    if (!reads_graphs) continue;
    options.push_back(OptionSpec::One(
        "--graph", "KIND",
        "in directories holding several graphs per rank (fw.g0.r0.py, bw.g0.r0.py, "
        "both.g0.r0.py): read the kind KIND ('fw.g0'; a glob like 'both.*' or a file name "
        "pattern)"));
  }
  return commands;
}

std::string GlobalHelp() {
  std::ostringstream text;
  text << "usage: graphguard <command> [options] [inputs]\n"
          "       graphguard --version | --help\n\n"
          "Checks that a tensor-parallel model implementation (per-rank ATen FX graphs) refines\n"
          "its sequential model.\n\ncommands:\n";
  size_t width = 0;
  for (const Command& command : Commands()) width = std::max(width, command.spec.name.size());
  for (const Command& command : Commands()) {
    text << "  " << command.spec.name << std::string(width - command.spec.name.size() + 2, ' ')
         << command.spec.summary << "\n";
  }
  text << "\nRun 'graphguard <command> --help' for a command's options.\n"
          "Exit codes: 0 ok/refines, 1 violation, 2 bad input or usage, 3 unknown, "
          "4 internal error.\n";
  return text.str();
}

int Dispatch(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty()) {
    throw UsageError("no command given (see 'graphguard --help')");
  }
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "help") {
    out << GlobalHelp();
    return report::kExitOk;
  }
  if (first == "--version" || first == "-V") {
    out << VersionLine() << "\n";
    return report::kExitOk;
  }
  for (const Command& command : Commands()) {
    if (command.spec.name != first) continue;
    ParsedCommand parsed =
        ParseCommand(command.spec, std::vector<std::string>(args.begin() + 1, args.end()));
    if (parsed.help) {
      out << CommandHelp(command.spec);
      return report::kExitOk;
    }
    // Unknown operators load as opaque nodes unless --strict-ops (frontend/node_check.h).
    frontend::StrictOps strict_ops(parsed.Has("--strict-ops"));
    frontend::GraphSelection graph_kind(parsed.One("--graph"));
    return command.run(parsed, out);
  }
  for (const std::string& name : NumericCommandNames()) {
    if (first == name) {
      throw UsageError("'" + name +
                       "' needs the numeric runtime, and this graphguard was built without "
                       "LibTorch (laptop mode); build with it: bash scripts/setup.sh");
    }
  }
  if (first.size() > 1 && first[0] == '-') {
    throw UsageError("unknown option '" + first + "' (see 'graphguard --help')");
  }
  throw UsageError("unknown command '" + first + "' (see 'graphguard --help')");
}

}  // namespace

void AddCommands(std::vector<Command> commands) {
  for (Command& command : commands) ExtraCommands().push_back(std::move(command));
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = BuildCommands();
  return commands;
}

std::string VersionLine() { return std::string("graphguard ") + GG_VERSION; }

int RunGraphGuard(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    return Dispatch(args, out);
  } catch (const UsageError& e) {
    err << "graphguard: error: " << EscapeControlChars(e.what()) << "\n";
    return report::kExitBadInput;
  } catch (const InputError& e) {
    // Messages quote input text: control characters (a NUL in a file) are escaped.
    std::string where = e.file().empty() ? std::string("<input>") : e.file();
    if (e.line() > 0) where += ":" + std::to_string(e.line());
    err << "graphguard: error: " << EscapeControlChars(where) << ": "
        << EscapeControlChars(e.problem()) << "\n";
    return report::kExitBadInput;
  } catch (const std::bad_alloc&) {
    err << "graphguard: internal error: out of memory\n";
    return report::kExitInternalError;
  } catch (const std::exception& e) {
    err << "graphguard: internal error: " << EscapeControlChars(e.what()) << "\n";
    return report::kExitInternalError;
  } catch (...) {
    err << "graphguard: internal error: unknown exception\n";
    return report::kExitInternalError;
  }
}

}  // namespace gg::cli
