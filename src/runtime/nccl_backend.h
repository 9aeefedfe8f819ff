// NcclBackend: the executor's collectives (CollectiveBackend, runtime/executor.h) as NCCL calls on
// the device tensors of a CUDA run, for `mpirun -np N graphguard check --distributed --device
// cuda`: process r runs rank r on its GPU and no collective input goes through the host.
//
// One communicator per process group of D (and the whole world), created once up front with the
// group's first member's ncclUniqueId handed to the others by the caller (over MPI:
// runtime/mpi/nccl_setup.h; nothing here needs MPI, so a group of one process runs anywhere).
// Semantics are runtime::RunCollective's and the MPI backend's (mpi_collectives.h, native mode):
// all_gather concatenates along dim 0, reduce_scatter gives member i chunk i along dim 0,
// all_to_all splits dim 0 equally, avg is the sum divided by the group size, bf16/fp16 reduce in
// float (as MPI does), booleans reduce as "or" (sum, avg, max) and "and" (min, product).
//
// NCCL is the one LibTorch loaded (runtime/device.h, CudaBackendSymbol): linking another NCCL
// would hand LibTorch that one instead (same soname), which may lack its symbols. The CUDA runtime
// is linked (CUDA::cudart). Ordering with LibTorch's kernels is kept simple: the device is
// synchronized before each NCCL call (LibTorch's stream produced the input) and NCCL's own stream
// after it, so the output is complete when it is returned. Built with CUDA and nccl.h
// (GG_NCCL_BACKEND); elsewhere NcclUnavailableReason says so and the backend cannot be made.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/program.h"
#include "runtime/executor.h"

namespace gg::runtime {

// Why this process cannot run NCCL collectives on `device` ("" when it can): not a CUDA device,
// LibTorch's CUDA backend or its NCCL missing. Never throws.
std::string NcclUnavailableReason(at::Device device);

// The PCI bus id of a CUDA device ("0000:1B:00.0"), "" when unknown. Two processes on one GPU
// cannot be ranks of one NCCL communicator.
std::string DeviceBusId(at::Device device);

class NcclBackend {
 public:
  // Makes the group's first member's unique id (`bytes` bytes at `id`) every member's: the MPI
  // form broadcasts it over the group's communicator.
  using IdBroadcast =
      std::function<void(const std::vector<int32_t>& members, void* id, size_t bytes)>;

  // Communicators for the groups (members in group order) that hold `rank`, on `device`, created
  // in the order given: every process must pass the same list, since creating one waits for all
  // its members. Throws std::runtime_error when NCCL or CUDA fail, std::invalid_argument when
  // NcclUnavailableReason(device) is not empty.
  NcclBackend(const std::vector<std::vector<int32_t>>& groups, int32_t rank, at::Device device,
              const IdBroadcast& broadcast);
  ~NcclBackend();
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;

  // This rank's output of one collective, on the device. Throws std::invalid_argument for a group
  // without a communicator here, an input on another device, an unsupported dtype or a shape the
  // collective does not take; std::runtime_error for NCCL and CUDA errors.
  at::Tensor Run(const RankCollective& call);
  CollectiveBackend Backend() {
    return [this](const RankCollective& call) { return Run(call); };
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The groups a distributed run creates communicators for, in the same order on every process:
// the program's groups (by name), then the whole world; each member list once.
std::vector<std::vector<int32_t>> CommunicatorGroups(const ir::Program& program);

}  // namespace gg::runtime
