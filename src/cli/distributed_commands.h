// Distributed commands: `graphguard check --distributed` under mpirun, in the binary only when the
// MPI runtime (src/runtime/mpi) is built; main() hands it to the check command
// (SetDistributedCheckRunner), so the symbolic core and a build without MPI never link MPI.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace gg::cli {

// `check ... --distributed [--exact-collectives]`: MPI_Init (unless already initialized), the
// check of runtime/mpi/distributed_check.h, rank 0's report, and rank 0's exit code broadcast so
// every process exits with it. Rank 0 alone prints (its report, or its one-line error: an error
// on another rank reaches rank 0 first); MPI_Finalize before returning.
int RunDistributedCheckCommand(const ParsedCommand& command, std::ostream& out);

}  // namespace gg::cli
