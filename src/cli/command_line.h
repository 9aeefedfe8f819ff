// Command line: a small table-driven parser for `graphguard <command> [options] [inputs]`.
//
// Each subcommand is described as data (CommandSpec: its options and how many positional
// arguments it takes), so adding `verify --seq FILE --dist DIR|FILE...` is one table entry.
// Errors are UsageError; the CLI prints them as "graphguard: error: ..." and exits 2.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gg::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  enum class Arity {
    kFlag,  // --name
    kOne,   // --name VALUE or --name=VALUE (given at most once)
    kMany,  // --name V1 V2 ... (takes arguments up to the next one starting with '-';
            // may be repeated, values accumulate)
  };
  std::string name;       // with dashes: "--seq"
  std::string short_name; // "-o", or empty
  Arity arity = Arity::kFlag;
  std::string metavar;    // "FILE", "DIR|FILE"
  bool required = false;
  std::string help;

  // Table helpers: OptionSpec::Many("--dist", "DIR|FILE", "per-rank graphs").Required().
  static OptionSpec Flag(std::string name, std::string help);
  static OptionSpec One(std::string name, std::string metavar, std::string help);
  static OptionSpec Many(std::string name, std::string metavar, std::string help);
  OptionSpec Required() const;
  OptionSpec Short(std::string short_option) const;
};

struct CommandSpec {
  std::string name;             // "stats"
  std::string summary;          // one line for `graphguard --help`
  std::string positional_metavar;  // "INPUT..." (shown in usage); empty: takes none
  int min_positional = 0;
  int max_positional = 0;       // -1: unbounded
  std::vector<OptionSpec> options;
  std::string description;      // extra paragraph for `graphguard <cmd> --help`
};

// The result of parsing one command's arguments.
struct ParsedCommand {
  bool help = false;                     // --help / -h was given: print help, ignore the rest
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // option name -> values ("" for flags)

  bool Has(const std::string& option) const { return values.count(option) > 0; }
  // The value of a kOne option, or `fallback` when it was not given.
  std::string One(const std::string& option, const std::string& fallback = "") const;
  // All values of a kMany option (empty when not given).
  std::vector<std::string> Many(const std::string& option) const;
};

// Parses the arguments that follow the command name. Throws UsageError for an unknown option, a
// missing value, a repeated single-valued option, a missing required option or a wrong number of
// positional arguments. "--" ends options; everything after it is positional.
ParsedCommand ParseCommand(const CommandSpec& spec, const std::vector<std::string>& args);

// "usage: graphguard stats INPUT..." plus the option list, for `graphguard stats --help`.
std::string CommandHelp(const CommandSpec& spec);
// The one-line usage alone.
std::string CommandUsage(const CommandSpec& spec);

// The value of `option` as a non-negative integer, `fallback` when absent; UsageError otherwise.
int64_t NonNegativeInteger(const ParsedCommand& command, const std::string& option,
                           int64_t fallback);

// Why `path` cannot be opened for writing the `what` ("report file"): a directory, a missing
// parent directory, or plainly unopenable. For InputError messages.
std::string CannotWrite(const std::string& path, const std::string& what);

// Writes `text` to `path` ("-" is `out`); the file is written whole or an InputError names it.
void WriteOutput(const std::string& path, const std::string& text, std::ostream& out);

// The one of `options` (report files such as --json, --sarif, --junit) given as "-" (standard
// output), or "" when none is. Two on standard output would interleave: a UsageError.
std::string StdoutReportOption(const ParsedCommand& command,
                               const std::vector<std::string>& options);

}  // namespace gg::cli
