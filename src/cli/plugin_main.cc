// The numeric runtime plugin's entry point (libgraphguard_runtime.so, cli/runtime_plugin.h): the
// handlers of the numeric commands and verify's evidence gatherer, built with LibTorch (and MPI,
// for check --distributed, when found). Loaded by graphguard on first use.
#include <ATen/Parallel.h>

#include <cstdlib>

#include "cli/numeric_commands.h"
#include "cli/runtime_plugin.h"
#include "runtime/lemma_selftest.h"
#include "runtime/verify_evidence.h"
#ifdef GG_DISTRIBUTED_CHECK
#include "cli/distributed_commands.h"
#endif

extern "C" __attribute__((visibility("default"))) int gg_runtime_plugin_v1(
    gg::cli::RuntimePlugin* out) {
  // One intra-op thread unless OMP_NUM_THREADS asks for more: the numeric runs execute thousands
  // of small operators, where OpenMP's fork-join per operator costs more than it gains, and on a
  // loaded machine its spinning barriers made an 8-layer Llama's D run 90x slower (4.4 s against
  // 0.05 s; docs/benchmarks.md). A full-size run on a many-core CPU sets OMP_NUM_THREADS.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(1);
#ifdef GG_DISTRIBUTED_CHECK
  // MPI is initialized by the command itself, and only for `check --distributed`.
  gg::cli::SetDistributedCheckRunner(gg::cli::RunDistributedCheckCommand);
#endif
  for (const gg::cli::Command& command : gg::cli::NumericCommands()) {
    out->commands[command.spec.name] = command.run;
  }
  out->evidence = [](const gg::ir::Graph& s, const gg::ir::Program& d,
                     const gg::symbolic::SpecResult& spec, const gg::symbolic::VerifyResult& result,
                     uint64_t seed, const std::string& inputs) {
    if (inputs.empty()) return gg::runtime::GatherVerifyEvidence(s, d, spec, result, seed);
    // A bad values file is bad input (exit 2, naming it), not a run that could not be made.
    const std::vector<at::Tensor> values = gg::cli::LoadValues(inputs, s);
    return gg::runtime::GatherVerifyEvidence(s, d, spec, result, seed, &values,
                                             "S's inputs from " + inputs);
  };
  out->guide = gg::runtime::GatherNumericGuide;
  out->lemma_self_test = [](const gg::symbolic::Lemma& lemma) {
    return gg::runtime::SelfTestLemma(lemma);
  };
  return gg::cli::kRuntimePluginAbi;
}
