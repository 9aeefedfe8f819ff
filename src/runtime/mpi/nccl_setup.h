// NcclSetup: the NCCL backend (runtime/nccl_backend.h) of a distributed run, set up over MPI.
// Every process states whether it can use NCCL on its GPU and which GPU that is (PCI bus id); all
// decide alike whether the run's collectives are NCCL's (every process able, no two members of a
// group on one GPU, every communicator created) or MPI's, so no process waits in a collective of
// the other kind.
#pragma once

#include <memory>
#include <string>

#include "ir/program.h"
#include "runtime/mpi/mpi_collectives.h"
#include "runtime/nccl_backend.h"

namespace gg::runtime {

// Collective over mpi's world: an NCCL backend for this process when every process can use NCCL
// on a GPU of its own (no two members of a group on one GPU) and the communicators were created
// (each group's unique id broadcast over the group's MPI communicator); otherwise nullptr on
// every process, with `why_not` saying why (the same text everywhere).
std::unique_ptr<NcclBackend> MakeNcclBackend(const ir::Program& program, MpiCollectives& mpi,
                                             at::Device device, std::string* why_not);

}  // namespace gg::runtime
