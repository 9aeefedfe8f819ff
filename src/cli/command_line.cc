#include "cli/command_line.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "util/diagnostic.h"

namespace gg::cli {
namespace {

const OptionSpec* FindOption(const CommandSpec& spec, const std::string& name) {
  for (const OptionSpec& option : spec.options) {
    if (option.name == name || (!option.short_name.empty() && option.short_name == name)) {
      return &option;
    }
  }
  return nullptr;
}

// "-5", "-0.5": a value (no option starts with a digit), so that `--hops -5` reaches the value
// check ("must be a non-negative integer, got -5") instead of "needs a value".
bool LooksLikeNegativeNumber(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

bool LooksLikeOption(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !LooksLikeNegativeNumber(arg);
}

std::string OptionUsage(const OptionSpec& option) {
  std::string text = option.short_name.empty() ? option.name : option.short_name;
  if (option.arity == OptionSpec::Arity::kOne) text += " " + option.metavar;
  if (option.arity == OptionSpec::Arity::kMany) text += " " + option.metavar + "...";
  return option.required ? text : "[" + text + "]";
}

OptionSpec MakeOption(std::string name, OptionSpec::Arity arity, std::string metavar,
                      std::string help) {
  OptionSpec option;
  option.name = std::move(name);
  option.arity = arity;
  option.metavar = std::move(metavar);
  option.help = std::move(help);
  return option;
}

}  // namespace

OptionSpec OptionSpec::Flag(std::string name, std::string help) {
  return MakeOption(std::move(name), Arity::kFlag, "", std::move(help));
}
OptionSpec OptionSpec::One(std::string name, std::string metavar, std::string help) {
  return MakeOption(std::move(name), Arity::kOne, std::move(metavar), std::move(help));
}
OptionSpec OptionSpec::Many(std::string name, std::string metavar, std::string help) {
  return MakeOption(std::move(name), Arity::kMany, std::move(metavar), std::move(help));
}
OptionSpec OptionSpec::Required() const {
  OptionSpec copy = *this;
  copy.required = true;
  return copy;
}
OptionSpec OptionSpec::Short(std::string short_option) const {
  OptionSpec copy = *this;
  copy.short_name = std::move(short_option);
  return copy;
}

std::string ParsedCommand::One(const std::string& option, const std::string& fallback) const {
  auto it = values.find(option);
  return it == values.end() || it->second.empty() ? fallback : it->second.front();
}

std::vector<std::string> ParsedCommand::Many(const std::string& option) const {
  auto it = values.find(option);
  return it == values.end() ? std::vector<std::string>{} : it->second;
}

ParsedCommand ParseCommand(const CommandSpec& spec, const std::vector<std::string>& args) {
  ParsedCommand parsed;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || !LooksLikeOption(arg)) {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      return parsed;
    }
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const OptionSpec* option = FindOption(spec, name);
    if (option == nullptr) {
      throw UsageError("unknown option '" + name + "' for '" + spec.name + "' (see 'graphguard " +
                       spec.name + " --help')");
    }
    std::vector<std::string>& values = parsed.values[option->name];
    switch (option->arity) {
      case OptionSpec::Arity::kFlag:
        if (inline_value) throw UsageError("option '" + option->name + "' takes no value");
        values.assign(1, "");
        break;
      case OptionSpec::Arity::kOne:
        if (!values.empty()) throw UsageError("option '" + option->name + "' given twice");
        if (inline_value) {
          values.push_back(*inline_value);
        } else if (i + 1 < args.size() && !LooksLikeOption(args[i + 1])) {
          values.push_back(args[++i]);
        } else {
          throw UsageError("option '" + option->name + "' needs a value (" + option->metavar + ")");
        }
        break;
      case OptionSpec::Arity::kMany: {
        size_t before = values.size();
        if (inline_value) values.push_back(*inline_value);
        while (i + 1 < args.size() && !LooksLikeOption(args[i + 1])) values.push_back(args[++i]);
        if (values.size() == before) {
          throw UsageError("option '" + option->name + "' needs at least one value (" +
                           option->metavar + ")");
        }
        break;
      }
    }
  }
  for (const OptionSpec& option : spec.options) {
    if (option.required && !parsed.Has(option.name)) {
      throw UsageError("'" + spec.name + "' needs option '" + option.name + " " + option.metavar +
                       "'");
    }
  }
  int count = static_cast<int>(parsed.positional.size());
  if (count < spec.min_positional) {
    throw UsageError("'" + spec.name + "' needs " +
                     (spec.positional_metavar.empty() ? std::string("arguments")
                                                      : spec.positional_metavar) +
                     " (usage: " + CommandUsage(spec) + ")");
  }
  if (spec.max_positional >= 0 && count > spec.max_positional) {
    throw UsageError("unexpected argument '" + parsed.positional[spec.max_positional] +
                     "' for '" + spec.name + "' (usage: " + CommandUsage(spec) + ")");
  }
  return parsed;
}

std::string CommandUsage(const CommandSpec& spec) {
  std::string usage = "graphguard " + spec.name;
  for (const OptionSpec& option : spec.options) usage += " " + OptionUsage(option);
  if (!spec.positional_metavar.empty()) usage += " " + spec.positional_metavar;
  return usage;
}

std::string CommandHelp(const CommandSpec& spec) {
  std::ostringstream out;
  out << "usage: " << CommandUsage(spec) << "\n\n" << spec.summary << "\n";
  if (!spec.description.empty()) out << "\n" << spec.description << "\n";
  out << "\noptions:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const OptionSpec& option : spec.options) {
    std::string left = option.short_name.empty() ? option.name : option.short_name + ", " +
                                                                     option.name;
    if (option.arity == OptionSpec::Arity::kOne) left += " " + option.metavar;
    if (option.arity == OptionSpec::Arity::kMany) left += " " + option.metavar + "...";
    rows.emplace_back(left, option.help + (option.required ? " (required)" : ""));
  }
  rows.emplace_back("-h, --help", "show this help and exit");
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  for (const auto& [left, help] : rows) {
    out << "  " << left << std::string(width - left.size() + 2, ' ') << help << "\n";
  }
  return out.str();
}

int64_t NonNegativeInteger(const ParsedCommand& command, const std::string& option,
                           int64_t fallback) {
  if (!command.Has(option)) return fallback;
  std::string text = command.One(option);
  size_t used = 0;
  int64_t value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size()) {
    throw UsageError("option '" + option + "' must be a non-negative integer, got '" + text + "'");
  }
  if (value < 0) {
    throw UsageError("option '" + option + "' must be a non-negative integer, got " + text);
  }
  return value;
}

std::string CannotWrite(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return "is a directory; give a file name for the " + what;
  }
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    return "cannot write the " + what + ": the directory " + parent.string() +
           " does not exist (create it first)";
  }
  return "cannot open the " + what + " for writing";
}

void WriteOutput(const std::string& path, const std::string& text, std::ostream& out) {
  if (path == "-") {
    out << text;
    return;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw InputError(path, 0, CannotWrite(path, "report file"));
  file << text;
  file.close();
  if (!file) throw InputError(path, 0, "could not write the report file");
}

std::string StdoutReportOption(const ParsedCommand& command,
                               const std::vector<std::string>& options) {
  std::string found;
  for (const std::string& option : options) {
    if (command.One(option) != "-") continue;
    if (!found.empty()) {
      throw UsageError("'" + found + " -' and '" + option +
                       " -' would both write to standard output; give one of them a file");
    }
    found = option;
  }
  return found;
}

}  // namespace gg::cli
