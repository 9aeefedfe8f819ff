#include "cuda/nccl_collectives.h"

#include <stdexcept>

#include "cuda/device.h"

namespace gg::cuda {

size_t SizeOf(DataType type) {
  switch (type) {
    case DataType::kFloat64:
    case DataType::kInt64:
      return 8;
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kBFloat16:
    case DataType::kFloat16:
      return 2;
    case DataType::kBool:
      return 1;
  }
  return 0;
}

ReduceOp ParseReduceOp(const std::string& name) {
  if (name == "sum") return ReduceOp::kSum;
  if (name == "avg") return ReduceOp::kAvg;
  if (name == "max") return ReduceOp::kMax;
  if (name == "min") return ReduceOp::kMin;
  if (name == "product") return ReduceOp::kProduct;
  throw std::invalid_argument("unknown reduce op '" + name + "'");
}

int64_t DeviceTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void CheckNccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) {
    throw std::runtime_error(std::string("NCCL error in ") + what + ": " +
                             ncclGetErrorString(status));
  }
}

namespace {

ncclDataType_t NcclType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kBool:
      return ncclUint8;
  }
  throw std::invalid_argument("no NCCL type");
}

ncclRedOp_t NcclOp(ReduceOp op, DataType type) {
  if (type == DataType::kBool && (op == ReduceOp::kSum || op == ReduceOp::kAvg)) {
    // A sum of booleans is their "or" (what the reference computes after casting back).
    return ncclMax;
  }
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kProduct:
      return ncclProd;
  }
  throw std::invalid_argument("no NCCL reduce op");
}

// The tensor viewed as [outer, shape[dim], inner], in elements.
struct Split {
  int64_t outer = 1, extent = 1, inner = 1;
};

Split SplitAt(const std::vector<int64_t>& shape, int64_t dim) {
  Split s;
  for (int64_t i = 0; i < dim; ++i) s.outer *= shape[i];
  s.extent = shape[dim];
  for (size_t i = static_cast<size_t>(dim) + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

int64_t CheckDim(const DeviceTensor& t, int64_t dim, const char* op) {
  int64_t rank = static_cast<int64_t>(t.shape.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    throw std::invalid_argument(std::string(op) + ": dimension out of range");
  }
  return dim;
}

// `big` is `small` with dimension dim multiplied by n (and the same dtype): all_gather's output,
// reduce_scatter's input.
void CheckScaled(const DeviceTensor& small, const DeviceTensor& big, int64_t dim, int n,
                 const char* op) {
  bool ok = small.dtype == big.dtype && small.shape.size() == big.shape.size();
  for (size_t i = 0; ok && i < small.shape.size(); ++i) {
    int64_t want = static_cast<int64_t>(i) == dim ? small.shape[i] * n : small.shape[i];
    ok = big.shape[i] == want;
  }
  if (!ok) {
    throw std::invalid_argument(std::string(op) +
                                ": shapes do not fit the group size along the dimension");
  }
}

void CheckSame(const DeviceTensor& a, const DeviceTensor& b, const char* op) {
  if (a.dtype != b.dtype || a.shape != b.shape) {
    throw std::invalid_argument(std::string(op) + ": input and output differ in shape or dtype");
  }
}

// Copies between [n, outer, extent, inner] (chunks, contiguous) and [outer, n * extent, inner]
// (the chunks interleaved along the middle dimension), as n strided 2-D copies.
void Interleave(const void* chunks, void* interleaved, int n, const Split& s, size_t element,
                bool to_interleaved, cudaStream_t stream) {
  size_t row = static_cast<size_t>(s.extent * s.inner) * element;  // one chunk row, bytes
  for (int r = 0; r < n; ++r) {
    const char* chunk = static_cast<const char*>(chunks) + r * row * s.outer;
    char* column = static_cast<char*>(interleaved) + r * row;
    if (to_interleaved) {
      CheckCuda(cudaMemcpy2DAsync(column, row * n, chunk, row, row, s.outer,
                                  cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpy2DAsync");
    } else {
      CheckCuda(cudaMemcpy2DAsync(const_cast<char*>(chunk), row, column, row * n, row, s.outer,
                                  cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpy2DAsync");
    }
  }
}

}  // namespace

std::unique_ptr<NcclCommunicator> NcclCommunicator::CreateSingle() {
  ncclUniqueId id;
  CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  ncclComm_t comm;
  CheckNccl(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(comm, 0, 1));
}

#if GG_HAVE_MPI
std::unique_ptr<NcclCommunicator> NcclCommunicator::CreateForGroup(
    MPI_Comm world, const std::vector<int>& members) {
  int me = 0;
  MPI_Comm_rank(world, &me);
  int position = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] == me) position = static_cast<int>(i);
  }
  // Members get color 0 and keys in group order; the others MPI_UNDEFINED (no communicator).
  MPI_Comm group_comm = MPI_COMM_NULL;
  MPI_Comm_split(world, position >= 0 ? 0 : MPI_UNDEFINED, position, &group_comm);
  if (position < 0) return nullptr;
  ncclUniqueId id;
  if (position == 0) CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group_comm);
  MPI_Comm_free(&group_comm);
  ncclComm_t comm;
  int size = static_cast<int>(members.size());
  CheckNccl(ncclCommInitRank(&comm, size, id, position), "ncclCommInitRank");
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(comm, position, size));
}
#endif

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void AllReduce(const DeviceTensor& in, const DeviceTensor& out, ReduceOp op,
               const NcclCommunicator& comm, cudaStream_t stream) {
  CheckSame(in, out, "all_reduce");
  CheckNccl(ncclAllReduce(in.data, out.data, static_cast<size_t>(in.numel()), NcclType(in.dtype),
                          NcclOp(op, in.dtype), comm.get(), stream),
            "ncclAllReduce");
}

void AllGather(const DeviceTensor& in, const DeviceTensor& out, int64_t dim,
               const NcclCommunicator& comm, cudaStream_t stream) {
  dim = CheckDim(in, dim, "all_gather");
  CheckScaled(in, out, dim, comm.size(), "all_gather");
  Split s = SplitAt(in.shape, dim);
  if (s.outer == 1) {  // the chunks are already contiguous in the output
    CheckNccl(ncclAllGather(in.data, out.data, static_cast<size_t>(in.numel()),
                            NcclType(in.dtype), comm.get(), stream),
              "ncclAllGather");
    return;
  }
  DeviceBuffer staging(out.bytes());
  CheckNccl(ncclAllGather(in.data, staging.data(), static_cast<size_t>(in.numel()),
                          NcclType(in.dtype), comm.get(), stream),
            "ncclAllGather");
  Interleave(staging.data(), out.data, comm.size(), s, SizeOf(in.dtype), true, stream);
  // The staging buffer is freed on return: wait for the copies that read it.
  CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void ReduceScatter(const DeviceTensor& in, const DeviceTensor& out, int64_t dim, ReduceOp op,
                   const NcclCommunicator& comm, cudaStream_t stream) {
  dim = CheckDim(out, dim, "reduce_scatter");
  CheckScaled(out, in, dim, comm.size(), "reduce_scatter");
  Split s = SplitAt(out.shape, dim);
  const void* send = in.data;
  DeviceBuffer staging;
  if (s.outer != 1) {
    staging = DeviceBuffer(in.bytes());
    Interleave(staging.data(), in.data, comm.size(), s, SizeOf(in.dtype), false, stream);
    send = staging.data();
  }
  CheckNccl(ncclReduceScatter(send, out.data, static_cast<size_t>(out.numel()),
                              NcclType(in.dtype), NcclOp(op, in.dtype), comm.get(), stream),
            "ncclReduceScatter");
  if (staging.data() != nullptr) {
    CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
}

void Broadcast(const DeviceTensor& in, const DeviceTensor& out, int root,
               const NcclCommunicator& comm, cudaStream_t stream) {
  CheckSame(in, out, "broadcast");
  if (root < 0 || root >= comm.size()) {
    throw std::invalid_argument("broadcast: the root is not a member of the group");
  }
  CheckNccl(ncclBroadcast(in.data, out.data, static_cast<size_t>(in.numel()), NcclType(in.dtype),
                          root, comm.get(), stream),
            "ncclBroadcast");
}

void AllToAll(const DeviceTensor& in, const DeviceTensor& out, const NcclCommunicator& comm,
              cudaStream_t stream) {
  CheckSame(in, out, "all_to_all");
  int n = comm.size();
  if (in.shape.empty() || in.shape[0] % n != 0) {
    throw std::invalid_argument("all_to_all: dim 0 is not divisible by the group size");
  }
  size_t count = static_cast<size_t>(in.numel() / n);
  size_t chunk = count * SizeOf(in.dtype);
  ncclDataType_t type = NcclType(in.dtype);
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (int peer = 0; peer < n; ++peer) {
    CheckNccl(ncclSend(static_cast<const char*>(in.data) + peer * chunk, count, type, peer,
                       comm.get(), stream),
              "ncclSend");
    CheckNccl(ncclRecv(static_cast<char*>(out.data) + peer * chunk, count, type, peer, comm.get(),
                       stream),
              "ncclRecv");
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
}

}  // namespace gg::cuda
