// graphguard: the command-line entry point; all logic is in cli/app.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/verify_command.h"
#ifdef GG_NUMERIC_COMMANDS
#include "cli/numeric_commands.h"
#include "runtime/verify_evidence.h"
#endif
#ifdef GG_DISTRIBUTED_CHECK
#include "cli/distributed_commands.h"
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
#ifdef GG_NUMERIC_COMMANDS
  gg::cli::AddCommands(gg::cli::NumericCommands());
  gg::cli::SetEvidenceGatherer(gg::runtime::GatherVerifyEvidence);
#endif
#ifdef GG_DISTRIBUTED_CHECK
  // MPI is initialized by the command itself, and only for `check --distributed`.
  gg::cli::SetDistributedCheckRunner(gg::cli::RunDistributedCheckCommand);
#endif
  int code = gg::cli::RunGraphGuard(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
