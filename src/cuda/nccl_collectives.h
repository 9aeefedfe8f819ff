// NCCL for GraphGuard's distributed mode: a communicator per process group (the ncclUniqueId made
// by the group's first member and broadcast over an MPI sub-communicator of the group's ranks),
// and the executor's collectives (runtime/collectives.h) as NCCL calls on contiguous device
// tensors: all_reduce, all_gather and reduce_scatter along any dimension, broadcast, all_to_all.
//
// Semantics match runtime::RunCollective: members are in group order; all_gather concatenates
// the members' tensors along `dim`; reduce_scatter reduces, then member i keeps chunk i along
// `dim`; all_to_all (equal splits along dim 0) gives member i chunk i of every member, in member
// order. Dimensions other than 0 are gathered or scattered through a staging buffer and strided
// copies (cudaMemcpy2DAsync), since NCCL only splits along the outermost dimension.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#if GG_HAVE_MPI
#include <mpi.h>
#endif

namespace gg::cuda {

enum class DataType { kFloat32, kFloat64, kBFloat16, kFloat16, kInt64, kInt32, kBool };
enum class ReduceOp { kSum, kAvg, kMax, kMin, kProduct };

size_t SizeOf(DataType type);
// "sum", "avg", "max", "min", "product" (the executor's names); throws std::invalid_argument.
ReduceOp ParseReduceOp(const std::string& name);

// A contiguous tensor in device memory (not owned).
struct DeviceTensor {
  void* data = nullptr;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * SizeOf(dtype); }
};

// Throws std::runtime_error naming `what` when status is not ncclSuccess.
void CheckNccl(ncclResult_t status, const char* what);

// One NCCL communicator: this process's place in one process group, on the current device.
class NcclCommunicator {
 public:
  // A group of this process alone (no MPI needed).
  static std::unique_ptr<NcclCommunicator> CreateSingle();
#if GG_HAVE_MPI
  // Collective over `world`: every process of `world` calls it with the same `members` (ranks of
  // `world` in group order); the members get a communicator (rank = position in members), the
  // others nullptr. The unique id travels over an MPI_Comm_split sub-communicator.
  static std::unique_ptr<NcclCommunicator> CreateForGroup(MPI_Comm world,
                                                          const std::vector<int>& members);
#endif
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  NcclCommunicator(ncclComm_t comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ncclComm_t comm_;
  int rank_;
  int size_;
};

// The collectives, enqueued on `stream` (the caller synchronizes). Shapes are checked against the
// group size; bad arguments throw std::invalid_argument. Inputs and outputs must not overlap
// except where NCCL allows in-place operation (all_reduce, broadcast with in == out).
void AllReduce(const DeviceTensor& in, const DeviceTensor& out, ReduceOp op,
               const NcclCommunicator& comm, cudaStream_t stream);
void AllGather(const DeviceTensor& in, const DeviceTensor& out, int64_t dim,
               const NcclCommunicator& comm, cudaStream_t stream);
void ReduceScatter(const DeviceTensor& in, const DeviceTensor& out, int64_t dim, ReduceOp op,
                   const NcclCommunicator& comm, cudaStream_t stream);
void Broadcast(const DeviceTensor& in, const DeviceTensor& out, int root,
               const NcclCommunicator& comm, cudaStream_t stream);
void AllToAll(const DeviceTensor& in, const DeviceTensor& out, const NcclCommunicator& comm,
              cudaStream_t stream);

}  // namespace gg::cuda
