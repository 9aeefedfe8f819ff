#include "runtime/nccl_backend.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "runtime/device.h"

#if GG_NCCL_BACKEND
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

namespace gg::runtime {

#if GG_NCCL_BACKEND
namespace {

// The NCCL functions used here, from the NCCL LibTorch loaded.
struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  std::string missing;  // the first symbol not found ("" when all were)
};

template <typename F>
void Resolve(F* slot, const char* name, std::string* missing) {
  *slot = reinterpret_cast<F>(CudaBackendSymbol(name));
  if (*slot == nullptr && missing->empty()) *missing = name;
}

const NcclApi& Api() {
  static const NcclApi api = [] {
    NcclApi a;
    Resolve(&a.get_unique_id, "ncclGetUniqueId", &a.missing);
    Resolve(&a.comm_init_rank, "ncclCommInitRank", &a.missing);
    Resolve(&a.comm_abort, "ncclCommAbort", &a.missing);
    Resolve(&a.all_reduce, "ncclAllReduce", &a.missing);
    Resolve(&a.all_gather, "ncclAllGather", &a.missing);
    Resolve(&a.reduce_scatter, "ncclReduceScatter", &a.missing);
    Resolve(&a.broadcast, "ncclBroadcast", &a.missing);
    Resolve(&a.send, "ncclSend", &a.missing);
    Resolve(&a.recv, "ncclRecv", &a.missing);
    Resolve(&a.group_start, "ncclGroupStart", &a.missing);
    Resolve(&a.group_end, "ncclGroupEnd", &a.missing);
    Resolve(&a.error_string, "ncclGetErrorString", &a.missing);
    return a;
  }();
  return api;
}

void CheckNccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) {
    throw std::runtime_error(std::string("NCCL error in ") + what + ": " +
                             Api().error_string(status));
  }
}

void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorString(status));
  }
}

int DeviceIndex(at::Device device) { return device.has_index() ? device.index() : 0; }

ncclDataType_t NcclType(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kBFloat16:
      return ncclBfloat16;
    case at::kHalf:
      return ncclFloat16;
    case at::kLong:
      return ncclInt64;
    case at::kInt:
      return ncclInt32;
    case at::kBool:
      return ncclUint8;  // one byte, 0 or 1
    default:
      throw std::invalid_argument(std::string("NCCL collectives: unsupported dtype ") +
                                  c10::toString(t));
  }
}

// The dtype a reduction runs in: bf16/fp16 in float, as the MPI backend (and ATen's sum) do.
at::ScalarType ReduceDtype(at::ScalarType t) {
  return t == at::kBFloat16 || t == at::kHalf ? at::kFloat : t;
}

// avg is a sum here (divided afterwards, as the reference does for every dtype); booleans reduce
// as "or" / "and" (what the reference's sum, max / min, product give once cast back to bool).
ncclRedOp_t NcclOp(const std::string& op, at::ScalarType t) {
  if (t == at::kBool) {
    if (op == "sum" || op == "avg" || op == "max") return ncclMax;
    if (op == "min" || op == "product") return ncclMin;
  }
  if (op == "sum" || op == "avg") return ncclSum;
  if (op == "max") return ncclMax;
  if (op == "min") return ncclMin;
  if (op == "product") return ncclProd;
  throw std::invalid_argument("unknown reduce op '" + op + "'");
}

// The reduced tensor brought back to `dtype` as the reference does: avg divides the sum by n.
at::Tensor Finish(at::Tensor reduced, const std::string& op, int n, at::ScalarType dtype) {
  if (op == "avg" && dtype != at::kBool) reduced = reduced.div(static_cast<double>(n));
  return reduced.to(dtype);
}

struct Communicator {
  ncclComm_t comm = nullptr;
  int position = 0;  // this rank's place in the group
  int size = 0;
};

}  // namespace

std::string NcclUnavailableReason(at::Device device) {
  if (!device.is_cuda()) return "the check runs on the CPU";
  if (CudaDeviceCount() == 0) return NoCudaReason();
  if (!Api().missing.empty()) {
    return "LibTorch's CUDA backend loaded no NCCL (" + Api().missing + " not found)";
  }
  return "";
}

std::string DeviceBusId(at::Device device) {
  if (!device.is_cuda()) return "";
  char id[64] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, DeviceIndex(device)) != cudaSuccess) {
    cudaGetLastError();  // cleared, so that a later call does not report it
    return "";
  }
  return id;
}

struct NcclBackend::Impl {
  at::Device device = at::kCPU;
  int32_t rank = 0;
  cudaStream_t stream = nullptr;
  std::map<std::vector<int32_t>, Communicator> comms;  // the groups holding this rank

  ~Impl() {
    // Abort, not destroy: every operation has completed (each Run waits for it), and abort is
    // local, so a process that leaves early (its peers still busy or failed) never waits here.
    for (auto& [members, c] : comms) {
      if (c.comm != nullptr) Api().comm_abort(c.comm);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Runs `enqueue` (NCCL calls on `stream`) after the device's pending work (LibTorch's kernels
  // that produced the inputs) and returns once NCCL is done.
  template <typename F>
  void Launch(F&& enqueue) {
    CheckCuda(cudaSetDevice(DeviceIndex(device)), "cudaSetDevice");
    CheckCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    enqueue();
    CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
};

NcclBackend::NcclBackend(const std::vector<std::vector<int32_t>>& groups, int32_t rank,
                         at::Device device, const IdBroadcast& broadcast)
    : impl_(std::make_unique<Impl>()) {
  if (std::string why = NcclUnavailableReason(device); !why.empty()) {
    throw std::invalid_argument("NCCL collectives: " + why);
  }
  const NcclApi& api = Api();
  impl_->device = device;
  impl_->rank = rank;
  CheckCuda(cudaSetDevice(DeviceIndex(device)), "cudaSetDevice");
  CheckCuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags");
  for (const std::vector<int32_t>& members : groups) {
    auto me = std::find(members.begin(), members.end(), rank);
    if (me == members.end() || impl_->comms.count(members) != 0) continue;
    Communicator c;
    c.position = static_cast<int>(me - members.begin());
    c.size = static_cast<int>(members.size());
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (c.position == 0) CheckNccl(api.get_unique_id(&id), "ncclGetUniqueId");
    broadcast(members, &id, sizeof id);
    CheckNccl(api.comm_init_rank(&c.comm, c.size, id, c.position), "ncclCommInitRank");
    impl_->comms[members] = c;
  }
}

NcclBackend::~NcclBackend() = default;

at::Tensor NcclBackend::Run(const RankCollective& call) {
  Impl& im = *impl_;
  auto it = im.comms.find(call.members);
  if (it == im.comms.end() || call.rank != im.rank) {
    throw std::invalid_argument("NCCL collectives: rank " + std::to_string(call.rank) +
                                " has no communicator for group '" + call.group + "'");
  }
  const Communicator& c = it->second;
  const NcclApi& api = Api();
  if (!call.input.defined() || call.input.device() != im.device) {
    throw std::invalid_argument("NCCL collectives: the input is not on " + im.device.str());
  }
  at::Tensor in = call.input.contiguous();
  const at::ScalarType dtype = in.scalar_type();
  const int n = c.size;
  switch (call.kind) {
    case ir::CollectiveKind::kAllReduce: {
      at::Tensor work = in.to(ReduceDtype(dtype)).clone();
      ncclDataType_t type = NcclType(work.scalar_type());
      ncclRedOp_t op = NcclOp(call.reduce_op, dtype);
      im.Launch([&] {
        CheckNccl(api.all_reduce(work.data_ptr(), work.data_ptr(),
                                 static_cast<size_t>(work.numel()), type, op, c.comm, im.stream),
                  "ncclAllReduce");
      });
      return Finish(work, call.reduce_op, n, dtype);
    }
    case ir::CollectiveKind::kAllGather: {
      if (in.dim() == 0) throw std::invalid_argument("all_gather of a scalar");
      std::vector<int64_t> sizes = in.sizes().vec();
      sizes[0] *= n;
      at::Tensor out = at::empty(sizes, in.options());
      ncclDataType_t type = NcclType(dtype);
      im.Launch([&] {
        CheckNccl(api.all_gather(in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel()),
                                 type, c.comm, im.stream),
                  "ncclAllGather");
      });
      return out;
    }
    case ir::CollectiveKind::kReduceScatter: {
      if (in.dim() == 0 || in.size(0) % n != 0) {
        throw std::invalid_argument("reduce_scatter: dim 0 is not divisible by the group size " +
                                    std::to_string(n));
      }
      at::Tensor work = in.to(ReduceDtype(dtype)).contiguous();
      std::vector<int64_t> sizes = in.sizes().vec();
      sizes[0] /= n;
      at::Tensor out = at::empty(sizes, work.options());
      ncclDataType_t type = NcclType(work.scalar_type());
      ncclRedOp_t op = NcclOp(call.reduce_op, dtype);
      im.Launch([&] {
        CheckNccl(api.reduce_scatter(work.data_ptr(), out.data_ptr(),
                                     static_cast<size_t>(out.numel()), type, op, c.comm, im.stream),
                  "ncclReduceScatter");
      });
      return Finish(out, call.reduce_op, n, dtype);
    }
    case ir::CollectiveKind::kBroadcast: {
      if (call.source < 0 || call.source >= n) {
        throw std::invalid_argument("broadcast source is not a member of the group");
      }
      at::Tensor out = in.clone();
      ncclDataType_t type = NcclType(dtype);
      im.Launch([&] {
        CheckNccl(api.broadcast(out.data_ptr(), out.data_ptr(), static_cast<size_t>(out.numel()),
                                type, static_cast<int>(call.source), c.comm, im.stream),
                  "ncclBroadcast");
      });
      return out;
    }
    case ir::CollectiveKind::kAllToAll: {
      if (in.dim() == 0 || in.size(0) % n != 0) {
        throw std::invalid_argument("all_to_all: dim 0 is not divisible by the group size");
      }
      at::Tensor out = at::empty_like(in);
      ncclDataType_t type = NcclType(dtype);
      size_t count = static_cast<size_t>(in.numel() / n);
      size_t chunk = count * in.element_size();
      const char* send = static_cast<const char*>(in.data_ptr());
      char* recv = static_cast<char*>(out.data_ptr());
      im.Launch([&] {
        // Member i's output chunk j is member j's input chunk i: a send and a receive per peer.
        CheckNccl(api.group_start(), "ncclGroupStart");
        for (int peer = 0; peer < n; ++peer) {
          CheckNccl(api.send(send + peer * chunk, count, type, peer, c.comm, im.stream),
                    "ncclSend");
          CheckNccl(api.recv(recv + peer * chunk, count, type, peer, c.comm, im.stream),
                    "ncclRecv");
        }
        CheckNccl(api.group_end(), "ncclGroupEnd");
      });
      return out;
    }
    case ir::CollectiveKind::kWait:
      return in;
    case ir::CollectiveKind::kSend:  // point-to-point transfers: not a group's collective
    case ir::CollectiveKind::kRecv:
    case ir::CollectiveKind::kNone:
      break;
  }
  throw std::invalid_argument("not a collective");
}

#else  // a build without CUDA or nccl.h

std::string NcclUnavailableReason(at::Device device) {
  if (!device.is_cuda()) return "the check runs on the CPU";
  return "this build has no NCCL backend (CUDA toolkit or nccl.h not found)";
}

std::string DeviceBusId(at::Device) { return ""; }

struct NcclBackend::Impl {};

NcclBackend::NcclBackend(const std::vector<std::vector<int32_t>>&, int32_t, at::Device device,
                         const IdBroadcast&) {
  throw std::invalid_argument("NCCL collectives: " + NcclUnavailableReason(device));
}

NcclBackend::~NcclBackend() = default;

at::Tensor NcclBackend::Run(const RankCollective&) {
  throw std::invalid_argument("NCCL collectives: this build has no NCCL backend");
}

#endif

std::vector<std::vector<int32_t>> CommunicatorGroups(const ir::Program& program) {
  std::vector<std::vector<int32_t>> groups;
  auto add = [&groups](const std::vector<int32_t>& members) {
    if (std::find(groups.begin(), groups.end(), members) == groups.end()) {
      groups.push_back(members);
    }
  };
  for (const auto& [name, members] : program.groups) add(members);
  std::vector<int32_t> all;
  for (int32_t r = 0; r < program.world_size(); ++r) all.push_back(r);
  add(all);
  return groups;
}

}  // namespace gg::runtime
