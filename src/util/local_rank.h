// LocalRank: the node-local rank of this process as the launcher says it (Open MPI, MPICH, Slurm,
// torchrun), so each process of a distributed run picks its own GPU. Header-only: the CUDA
// library and the LibTorch runtime both use it and share no other library.
#pragma once

#include <cstdlib>

namespace gg::util {

// The node-local rank from the launcher's environment, or -1 when none is set.
inline int LocalRankFromEnvironment() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      char* end = nullptr;
      long rank = std::strtol(value, &end, 10);
      if (end != nullptr && *end == '\0' && rank >= 0) return static_cast<int>(rank);
    }
  }
  return -1;
}

}  // namespace gg::util
