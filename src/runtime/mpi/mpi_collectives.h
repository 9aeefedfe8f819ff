// MPI collective backend of the executor (runtime/executor.h, ExecuteRank): the CPU form of the
// distributed mode, where process r of MPI_COMM_WORLD executes rank r of the program and the
// collectives are MPI calls over a sub-communicator per process group (MPI_Comm_split, created
// for every group of the program up front, since the split is collective over the world).
//
// Two modes. kNative maps each collective to its MPI call (MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Bcast, MPI_Alltoall); bf16/fp16 reduce through a float copy, so a
// sum may differ from the single-process reference in rounding order. kExactReference gathers
// every member's input and computes runtime::RunCollective locally, so every rank's values are
// bit-identical to ExecuteProgram's (at the price of n times the traffic).
//
// Point-to-point transfers (kSend, kRecv) are exact in both modes: a send is an MPI_Isend of a
// copy of the tensor over the group's communicator (buffered, as the executor's model has it;
// completed in the destructor), a receive an MPI_Recv from the peer; messages between two ranks
// of one communicator match in order, as the loader pairs them.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "ir/program.h"
#include "runtime/executor.h"

namespace gg::runtime {

class MpiCollectives {
 public:
  enum class Mode { kNative, kExactReference };

  // Collective over `world`, whose size must be the program's world size (std::invalid_argument
  // otherwise): every process constructs it with the same program.
  MpiCollectives(const ir::Program& program, MPI_Comm world = MPI_COMM_WORLD,
                 Mode mode = Mode::kNative);
  ~MpiCollectives();
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  MPI_Comm world() const { return world_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  Mode mode() const { return mode_; }

  // This process's output of one collective (the backend of ExecuteRank). Throws
  // std::invalid_argument for a group it does not know, a rank that is not this process, or
  // inputs the collective does not take (as RunCollective).
  at::Tensor Run(const RankCollective& call);
  // The sub-communicator of the group with these members (in group order), MPI_COMM_NULL when
  // this process is not one of them or the program has no such group.
  MPI_Comm GroupComm(const std::vector<int32_t>& members) const;
  CollectiveBackend Backend() {
    return [this](const RankCollective& call) { return Run(call); };
  }

 private:
  MPI_Comm CommFor(const RankCollective& call) const;
  at::Tensor RunNative(const RankCollective& call, MPI_Comm comm, int n);
  at::Tensor RunExact(const RankCollective& call, MPI_Comm comm, int n);
  at::Tensor RunTransfer(const RankCollective& call, MPI_Comm comm);

  struct PendingSend {
    at::Tensor data;  // the copy MPI reads until the request completes
    MPI_Request request = MPI_REQUEST_NULL;
  };

  MPI_Comm world_;
  Mode mode_;
  int rank_ = 0;
  int size_ = 0;
  std::map<std::vector<int32_t>, MPI_Comm> comms_;  // by the group's members, in group order
  std::vector<PendingSend> sends_;                  // posted sends not yet known complete
};

// Runs this process's rank of the program (its MPI rank in collectives.world) with the MPI
// backend: ExecuteRank with options.collective_backend set.
ExecutionResult ExecuteRankDistributed(const ir::Program& program, const GraphInputs& inputs,
                                       MpiCollectives& collectives,
                                       ExecutionOptions options = {},
                                       const std::set<ir::TensorRef>& keep = {});

// Gathers named CPU tensors of every process to `root` (collective over `comm`): the root gets
// one map per rank (in rank order), the others an empty vector. Tensors may differ in shape and
// dtype between ranks; they are sent as contiguous bytes with their dtype and sizes.
std::vector<std::map<std::string, at::Tensor>> GatherToRoot(
    const std::map<std::string, at::Tensor>& mine, MPI_Comm comm = MPI_COMM_WORLD, int root = 0);

}  // namespace gg::runtime
