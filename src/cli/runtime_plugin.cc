#include "cli/runtime_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "cli/verify_command.h"

namespace gg::cli {
namespace {

const char kCheckHelp[] =
    "Executes the sequential graph (--seq) and every rank of the distributed graphs (--dist) on\n"
    "random inputs: S's inputs are drawn (integers inside the range they index), D's are derived\n"
    "through the spec's input relations (--relations). Then evaluates the spec's expected output\n"
    "relations and, with --from-verify, every relation in a 'verify --json' report, each against "
    "a\n"
    "per-tensor tolerance from a perturbed run of S (rounding noise at the tensor's depth and\n"
    "dtype, see docs/architecture.md). Reports each as holding or failing with max abs/rel error\n"
    "and the worst element, and the first S tensor where a relation fails. Dropout is off.\n"
    "--resize OLD=NEW,... runs at smaller sizes (every extent OLD becomes NEW, re-type-checked);\n"
    "--resize-dist gives D its own map when its extents differ (sequence-parallel shards).\n"
    "When the run's estimated peak memory is over --memory-budget (default half of\n"
    "MemAvailable; 0 or none: no limit), the sizes are reduced to fit, keeping every shard\n"
    "divisible (the report's memory row says why and which); when none fit it is exit 2.\n"
    "Exit codes: 0 every relation holds, 1 a relation fails, 2 bad input or usage, 3 a relation\n"
    "could not be evaluated.\n"
    "--distributed (under mpirun -np N, N = D's world size): process r runs D's rank r with MPI\n"
    "collectives; inputs are drawn from the same seed on every process; rank 0 also runs S,\n"
    "receives the D tensors the relations need and writes the same report as without it (native\n"
    "MPI sums may round differently; --exact-collectives makes it identical). Every process exits\n"
    "with rank 0's code; the others print nothing.\n"
    "--device cpu|cuda[:N] runs S and D there (default cpu); inputs are drawn on the CPU, so a\n"
    "CUDA run checks the same values. With --distributed, 'cuda' is GPU (local rank % GPUs).\n"
    "Without a CUDA device, --device cuda is a usage error (exit 2).\n"
    "--sarif FILE and --junit FILE also write the check for CI (docs/report-format.md): a SARIF\n"
    "result and a JUnit failure per relation that fails (an <error> when not evaluated). On a\n"
    "terminal, a run longer than a second shows its passes on stderr (--quiet: not).";

const char kInferHelp[] =
    "Writes a relation spec (docs/relations.md) for the inputs and outputs of the sequential\n"
    "graph (--seq) and the distributed program (--dist), for review. Every S input is paired\n"
    "with the D input of the same name; candidates come from the shapes (replicate, shard(d),\n"
    "fused block layouts such as [q; k; v] or [gate; up] per rank). Ambiguous inputs are decided\n"
    "by executing S and D on random inputs (dropout off) and matching fingerprints of every\n"
    "tensor; the outputs get the relations the best run shows. The spec's header says what was\n"
    "inferred and what is assumed (graph constants the capture omits are 0).\n"
    "--resize OLD=NEW,... runs at smaller sizes (the spec is still written for the given sizes);\n"
    "--resize-dist gives D its own map (sequence-parallel shards). --outputs 0 writes only output\n"
    "#0 (a training graph also returns the activations it saves for backward).\n"
    "--hints-out FILE also writes every D expression that matched an S tensor, as hints for\n"
    "'graphguard verify --hints FILE' (tried first, still proved); matches whose sizes are the\n"
    "resized run's and not the given graphs' are left out.\n"
    "When the runs' estimated peak memory is over --memory-budget (default half of\n"
    "MemAvailable) they take sizes reduced to fit, on top of --resize, which the spec's\n"
    "header and the summary name with the reason; when no sizes fit, nothing runs (exit 2,\n"
    "naming the budget).\n"
    "Exit codes: 0 spec written, 3 written but some input has no relation (a comment says which),\n"
    "2 bad input or usage.";

// The plugin once loaded (or why it could not be), for the whole process.
struct LoadedPlugin {
  bool tried = false;
  std::string error;
  RuntimePlugin plugin;
};

LoadedPlugin& Loaded() {
  static LoadedPlugin loaded;
  return loaded;
}

std::string ExecutableDir() {
  char buffer[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  buffer[n] = '\0';
  return std::filesystem::path(buffer).parent_path().string();
}

}  // namespace

CommandSpec CheckSpec() {
  CommandSpec spec;
  spec.name = "check";
  spec.summary = "Run S and D on random inputs and check the relations numerically.";
  spec.options = GraphInputOptions();
  spec.options.insert(
      spec.options.end(),
      {
          OptionSpec::One("--relations", "SPEC", "the relation spec file").Required(),
          OptionSpec::One("--from-verify", "R.json",
                          "also check every relation of a 'verify --json' report"),
          OptionSpec::One("--json", "FILE", "also write the JSON report; '-': stdout only"),
          OptionSpec::One("--seed", "N", "random seed of the inputs (default 0)"),
          OptionSpec::One("--inputs", "VALUES",
                          "S's inputs from a values file (graph-format.md), not random: the "
                          "values graphs with value-dependent shapes were traced with"),
          OptionSpec::One("--device", "cpu|cuda[:N]",
                          "where S and D run (default cpu; exit 2 without a CUDA device)"),
          OptionSpec::Flag("--no-timing", "leave wall-clock times out of the reports"),
          OptionSpec::Flag(
              "--distributed",
              "under mpirun -np N (N = D's ranks): process r runs rank r of D with MPI "
              "collectives, rank 0 runs S and writes the report (MPI builds)"),
          OptionSpec::Flag("--exact-collectives",
                           "with --distributed: collectives computed as the single-process run "
                           "does (every member's input gathered), so the report is identical"),
      });
  for (OptionSpec& option : CiReportOptions()) spec.options.push_back(option);
  for (OptionSpec& option : ResizeOptions()) spec.options.push_back(option);
  spec.options.push_back(MemoryBudgetOption());
  spec.description = kCheckHelp;
  return spec;
}

CommandSpec InferRelationsSpec() {
  CommandSpec spec;
  spec.name = "infer-relations";
  spec.summary = "Infer a relation spec for S and D by executing them (for review).";
  spec.options = GraphInputOptions();
  spec.options.insert(
      spec.options.end(),
      {
          OptionSpec::One("--output", "SPEC", "where to write the spec; '-': stdout")
              .Short("-o")
              .Required(),
          OptionSpec::One("--seed", "N", "random seed of the inputs (default 1)"),
          OptionSpec::One("--outputs", "N,...",
                          "S output positions to relate (default: every matched output)"),
          OptionSpec::One(
              "--hints-out", "FILE",
              "also write the fingerprint matches as hints for verify --hints; '-': stdout"),
      });
  for (OptionSpec& option : ResizeOptions()) spec.options.push_back(option);
  spec.options.push_back(MemoryBudgetOption());
  spec.description = kInferHelp;
  return spec;
}

std::vector<std::string> RuntimePluginCandidates() {
  const char* env = std::getenv("GG_RUNTIME_PLUGIN");
  if (env != nullptr && *env != '\0') return {env};
  return {ExecutableDir() + "/" + kRuntimePluginFile};
}

const RuntimePlugin& LoadRuntimePlugin(const std::string& needed_by) {
  LoadedPlugin& loaded = Loaded();
  if (!loaded.tried) {
    loaded.tried = true;
    std::string tried;
    for (const std::string& path : RuntimePluginCandidates()) {
      // RTLD_LOCAL: LibTorch's symbols stay inside the plugin; the plugin binds GraphGuard's own
      // symbols to this executable's (exported), so both share one registry and one lemma set.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = dlerror();
        tried += (tried.empty() ? "" : "; ") + path + ": " + (why ? why : "dlopen failed");
        continue;
      }
      auto entry = reinterpret_cast<RuntimePluginEntry>(dlsym(handle, kRuntimePluginEntry));
      if (entry == nullptr) {
        tried += (tried.empty() ? "" : "; ") + path + ": no symbol " + kRuntimePluginEntry +
                 " (not a GraphGuard runtime plugin)";
        continue;
      }
      int abi = entry(&loaded.plugin);
      if (abi != kRuntimePluginAbi) {
        tried += (tried.empty() ? "" : "; ") + path + ": plugin ABI " + std::to_string(abi) +
                 ", this graphguard needs " + std::to_string(kRuntimePluginAbi) +
                 " (rebuild both: bash scripts/setup.sh)";
        loaded.plugin = RuntimePlugin{};
        continue;
      }
      tried.clear();
      break;
    }
    loaded.error = tried;
  }
  if (!loaded.error.empty()) {
    throw UsageError("'" + needed_by +
                     "' needs the numeric runtime (LibTorch), which could not be " +
                     "loaded: " + loaded.error +
                     ". Build it with bash scripts/setup.sh, or point GG_RUNTIME_PLUGIN at " +
                     kRuntimePluginFile);
  }
  return loaded.plugin;
}

bool RuntimePluginLoaded() { return Loaded().tried && Loaded().error.empty(); }

std::vector<Command> RuntimePluginCommands() {
  std::vector<Command> commands;
  for (CommandSpec spec : {CheckSpec(), InferRelationsSpec()}) {
    std::string name = spec.name;
    commands.push_back(Command{std::move(spec), [name](const ParsedCommand& c, std::ostream& out) {
                                 const RuntimePlugin& plugin = LoadRuntimePlugin(name);
                                 auto it = plugin.commands.find(name);
                                 if (it == plugin.commands.end()) {
                                   throw UsageError("the numeric runtime plugin has no '" + name +
                                                    "' command (rebuild: bash scripts/setup.sh)");
                                 }
                                 return it->second(c, out);
                               }});
  }
  return commands;
}

void UseRuntimePlugin() {
  AddCommands(RuntimePluginCommands());
  SetEvidenceGatherer([](const ir::Graph& s, const ir::Program& d, const symbolic::SpecResult& spec,
                         const symbolic::VerifyResult& result, uint64_t seed,
                         const std::string& inputs) {
    return LoadRuntimePlugin("verify's numeric evidence")
        .evidence(s, d, spec, result, seed, inputs);
  });
  SetNumericGuider(
      [](const ir::Graph& s, const ir::Program& d, const symbolic::SpecResult& spec,
         uint64_t seed) { return LoadRuntimePlugin("verify --guided").guide(s, d, spec, seed); });
  SetLemmaSelfTester([](const symbolic::Lemma& lemma) {
    return LoadRuntimePlugin("the self-test of --lemmas").lemma_self_test(lemma);
  });
}

}  // namespace gg::cli
