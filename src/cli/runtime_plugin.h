// Runtime plugin: the numeric runtime (LibTorch, and CUDA/NCCL/MPI through it) lives in a shared
// object, libgraphguard_runtime.so beside the graphguard binary, loaded with dlopen the first time
// a command needs it: `check`, `infer-relations`, and verify's numeric evidence when a proof stops.
// Every symbolic command (--version, --help, import, stats, explain, verify --no-numeric) runs
// without loading LibTorch, whose start-up alone is ~0.4 s.
//
// The binary knows the numeric commands' specs (help and option parsing need no plugin); the
// plugin supplies their handlers and the evidence gatherer through one C entry point. The plugin
// does not carry its own copy of GraphGuard's state: the binary exports its symbols, and the
// plugin binds to them (one operator registry, one lemma catalogue).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/user_lemmas.h"
#include "cli/verify_command.h"

namespace gg::cli {

// What the plugin hands over.
struct RuntimePlugin {
  std::map<std::string, CommandHandler> commands;  // by command name: "check", "infer-relations"
  EvidenceGatherer evidence;                       // verify's numeric evidence
  NumericGuider guide;                             // verify --guided
  LemmaSelfTester lemma_self_test;                 // --lemmas files' self-tests
};

// Bumped whenever RuntimePlugin or what it refers to changes layout.
// 2: NumericEvidence::resized, 3: lemma_self_test, 4: NumericEvidence::proposals, 5: guide,
// 6: the evidence gatherer's input values file
inline constexpr int kRuntimePluginAbi = 6;
inline constexpr const char* kRuntimePluginFile = "libgraphguard_runtime.so";
// extern "C" int gg_runtime_plugin_v1(RuntimePlugin* out): fills *out, returns its ABI.
inline constexpr const char* kRuntimePluginEntry = "gg_runtime_plugin_v1";
using RuntimePluginEntry = int (*)(RuntimePlugin*);

// The specs of the numeric commands (shared by the plugin's handlers and the binary's table).
CommandSpec CheckSpec();
CommandSpec InferRelationsSpec();

// Where the plugin is looked for: $GG_RUNTIME_PLUGIN if set, else beside the executable.
std::vector<std::string> RuntimePluginCandidates();

// Loads the plugin once; a missing or broken plugin is a UsageError (exit 2) naming every path
// tried and why each failed, and what to do. `needed_by` names the command in the message.
const RuntimePlugin& LoadRuntimePlugin(const std::string& needed_by);
bool RuntimePluginLoaded();  // for tests: has a command loaded it

// The numeric commands with handlers that load the plugin on first use.
std::vector<Command> RuntimePluginCommands();

// What main() of a build with the runtime calls: adds those commands and a lazy evidence gatherer.
void UseRuntimePlugin();

}  // namespace gg::cli
