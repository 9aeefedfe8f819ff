#include "runtime/mpi/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

#include "runtime/collectives.h"

namespace gg::runtime {
namespace {

void CheckMpi(int status, const char* what) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw std::runtime_error(std::string("MPI error in ") + what + ": " +
                             std::string(text, static_cast<size_t>(length)));
  }
}

int CountOf(int64_t n, const char* what) {
  if (n < 0 || n > INT_MAX) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) +
                                " elements exceed one MPI call's count");
  }
  return static_cast<int>(n);
}

// The MPI type of a dtype that is sent as is; bf16 and fp16 travel as 16-bit words.
MPI_Datatype WireType(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return MPI_FLOAT;
    case at::kDouble:
      return MPI_DOUBLE;
    case at::kLong:
      return MPI_INT64_T;
    case at::kInt:
      return MPI_INT32_T;
    case at::kBool:
      return MPI_C_BOOL;
    case at::kBFloat16:
    case at::kHalf:
      return MPI_UINT16_T;
    default:
      throw std::invalid_argument(std::string("MPI collectives: unsupported dtype ") +
                                  c10::toString(t));
  }
}

// The dtype a reduction runs in: bf16/fp16 in float (MPI has no such types).
at::ScalarType ReduceDtype(at::ScalarType t) {
  return t == at::kBFloat16 || t == at::kHalf ? at::kFloat : t;
}

MPI_Op ReduceOpFor(const std::string& op, at::ScalarType t) {
  if (t == at::kBool) {
    // A sum of booleans cast back to bool is their "or" (the reference's result).
    if (op == "sum" || op == "avg" || op == "max") return MPI_LOR;
    if (op == "min" || op == "product") return MPI_LAND;
  }
  if (op == "sum" || op == "avg") return MPI_SUM;
  if (op == "max") return MPI_MAX;
  if (op == "min") return MPI_MIN;
  if (op == "product") return MPI_PROD;
  throw std::invalid_argument("unknown reduce op '" + op + "'");
}

// The reduced tensor of `reduced` (in the reduce dtype) brought back to `dtype` as the reference
// does: avg divides the sum by the group size.
at::Tensor Finish(at::Tensor reduced, const std::string& op, int n, at::ScalarType dtype) {
  if (op == "avg" && dtype != at::kBool) reduced = reduced.div(static_cast<double>(n));
  return reduced.to(dtype);
}

}  // namespace

MpiCollectives::MpiCollectives(const ir::Program& program, MPI_Comm world, Mode mode)
    : world_(world), mode_(mode) {
  MPI_Comm_rank(world_, &rank_);
  MPI_Comm_size(world_, &size_);
  if (size_ != program.world_size()) {
    throw std::invalid_argument("the program has " + std::to_string(program.world_size()) +
                                " ranks but MPI runs " + std::to_string(size_) + " processes");
  }
  // Every group of the program (the same order on every process), and the whole world for
  // collectives that name no listed group.
  std::vector<std::vector<int32_t>> groups;
  for (const auto& [name, members] : program.groups) groups.push_back(members);
  std::vector<int32_t> all;
  for (int32_t r = 0; r < size_; ++r) all.push_back(r);
  groups.push_back(all);
  for (const std::vector<int32_t>& members : groups) {
    if (comms_.count(members) != 0) continue;
    int position = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i] == rank_) position = static_cast<int>(i);
    }
    MPI_Comm comm = MPI_COMM_NULL;
    CheckMpi(MPI_Comm_split(world_, position >= 0 ? 0 : MPI_UNDEFINED, position, &comm),
             "MPI_Comm_split");
    comms_[members] = comm;  // MPI_COMM_NULL where this process is not a member
  }
}

MpiCollectives::~MpiCollectives() {
  for (PendingSend& send : sends_) MPI_Wait(&send.request, MPI_STATUS_IGNORE);
  for (auto& [members, comm] : comms_) {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}

MPI_Comm MpiCollectives::CommFor(const RankCollective& call) const {
  auto it = comms_.find(call.members);
  if (it == comms_.end()) {
    throw std::invalid_argument("MPI collectives: group '" + call.group +
                                "' is not a group of the program");
  }
  if (call.rank != rank_ || it->second == MPI_COMM_NULL) {
    throw std::invalid_argument("MPI collectives: rank " + std::to_string(call.rank) +
                                " calls from MPI process " + std::to_string(rank_));
  }
  return it->second;
}

MPI_Comm MpiCollectives::GroupComm(const std::vector<int32_t>& members) const {
  auto it = comms_.find(members);
  return it == comms_.end() ? MPI_COMM_NULL : it->second;
}

at::Tensor MpiCollectives::Run(const RankCollective& call) {
  MPI_Comm comm = CommFor(call);
  int n = static_cast<int>(call.members.size());
  if (ir::IsPointToPoint(call.kind)) return RunTransfer(call, comm);
  return mode_ == Mode::kNative ? RunNative(call, comm, n) : RunExact(call, comm, n);
}

at::Tensor MpiCollectives::RunTransfer(const RankCollective& call, MPI_Comm comm) {
  auto peer = std::find(call.members.begin(), call.members.end(), call.peer);
  if (peer == call.members.end() || call.peer == call.rank) {
    throw std::invalid_argument("transfer to rank " + std::to_string(call.peer) +
                                ", not another member of group '" + call.group + "'");
  }
  const int position = static_cast<int>(peer - call.members.begin());
  constexpr int kTransferTag = 18;  // p2p messages only: collectives match separately
  at::Tensor in = call.input.contiguous();
  const int count = CountOf(in.numel(), "transfer");
  if (call.kind == ir::CollectiveKind::kSend) {
    // Sends that completed free their copies; this one is buffered until it does.
    std::erase_if(sends_, [](PendingSend& send) {
      int done = 0;
      MPI_Test(&send.request, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
    PendingSend send{in.clone(), MPI_REQUEST_NULL};
    CheckMpi(MPI_Isend(send.data.data_ptr(), count, WireType(in.scalar_type()), position,
                       kTransferTag, comm, &send.request),
             "MPI_Isend");
    sends_.push_back(std::move(send));
    return at::Tensor();
  }
  at::Tensor out = at::empty_like(in);
  CheckMpi(MPI_Recv(out.data_ptr(), count, WireType(in.scalar_type()), position, kTransferTag, comm,
                    MPI_STATUS_IGNORE),
           "MPI_Recv");
  return out;
}

at::Tensor MpiCollectives::RunNative(const RankCollective& call, MPI_Comm comm, int n) {
  at::Tensor in = call.input.contiguous();
  const at::ScalarType dtype = in.scalar_type();
  switch (call.kind) {
    case ir::CollectiveKind::kAllReduce: {
      at::Tensor work = in.to(ReduceDtype(dtype)).clone();
      CheckMpi(MPI_Allreduce(MPI_IN_PLACE, work.data_ptr(), CountOf(work.numel(), "all_reduce"),
                             WireType(work.scalar_type()), ReduceOpFor(call.reduce_op, dtype),
                             comm),
               "MPI_Allreduce");
      return Finish(work, call.reduce_op, n, dtype);
    }
    case ir::CollectiveKind::kAllGather: {
      std::vector<int64_t> sizes = in.sizes().vec();
      if (sizes.empty()) throw std::invalid_argument("all_gather of a scalar");
      sizes[0] *= n;
      at::Tensor out = at::empty(sizes, in.options());
      int count = CountOf(in.numel(), "all_gather");
      CheckMpi(MPI_Allgather(in.data_ptr(), count, WireType(dtype), out.data_ptr(), count,
                             WireType(dtype), comm),
               "MPI_Allgather");
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
      CheckMpi(MPI_Reduce_scatter_block(work.data_ptr(), out.data_ptr(),
                                        CountOf(out.numel(), "reduce_scatter"),
                                        WireType(work.scalar_type()),
                                        ReduceOpFor(call.reduce_op, dtype), comm),
               "MPI_Reduce_scatter_block");
      return Finish(out, call.reduce_op, n, dtype);
    }
    case ir::CollectiveKind::kBroadcast: {
      if (call.source < 0 || call.source >= n) {
        throw std::invalid_argument("broadcast source is not a member of the group");
      }
      at::Tensor out = in.clone();
      CheckMpi(MPI_Bcast(out.data_ptr(), CountOf(out.numel(), "broadcast"), WireType(dtype),
                         static_cast<int>(call.source), comm),
               "MPI_Bcast");
      return out;
    }
    case ir::CollectiveKind::kAllToAll: {
      if (in.dim() == 0 || in.size(0) % n != 0) {
        throw std::invalid_argument("all_to_all: dim 0 is not divisible by the group size");
      }
      at::Tensor out = at::empty_like(in);
      int count = CountOf(in.numel() / n, "all_to_all");
      CheckMpi(MPI_Alltoall(in.data_ptr(), count, WireType(dtype), out.data_ptr(), count,
                            WireType(dtype), comm),
               "MPI_Alltoall");
      return out;
    }
    case ir::CollectiveKind::kWait:
      return in;
    case ir::CollectiveKind::kSend:
    case ir::CollectiveKind::kRecv:  // RunTransfer
    case ir::CollectiveKind::kNone:
      break;
  }
  throw std::invalid_argument("not a collective");
}

at::Tensor MpiCollectives::RunExact(const RankCollective& call, MPI_Comm comm, int n) {
  at::Tensor in = call.input.contiguous();
  const at::ScalarType dtype = in.scalar_type();
  int position = 0;
  MPI_Comm_rank(comm, &position);
  // Every member's input (shapes are checked by RunCollective after the exchange; a member with
  // another element count is caught before it).
  int64_t numel = in.numel();
  std::vector<int64_t> counts(static_cast<size_t>(n));
  CheckMpi(MPI_Allgather(&numel, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm),
           "MPI_Allgather");
  for (int64_t c : counts) {
    if (c != numel) throw std::invalid_argument("collective inputs differ in size across ranks");
  }
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes.insert(sizes.begin(), n);
  at::Tensor all = at::empty(sizes, in.options());
  int count = CountOf(numel, "collective");
  CheckMpi(MPI_Allgather(in.data_ptr(), count, WireType(dtype), all.data_ptr(), count,
                         WireType(dtype), comm),
           "MPI_Allgather");
  CollectiveCall reference{call.kind, call.reduce_op, call.source, {}};
  for (int i = 0; i < n; ++i) reference.inputs.push_back(all[i]);
  return RunCollective(reference).at(static_cast<size_t>(position));
}

ExecutionResult ExecuteRankDistributed(const ir::Program& program, const GraphInputs& inputs,
                                       MpiCollectives& collectives, ExecutionOptions options,
                                       const std::set<ir::TensorRef>& keep) {
  options.collective_backend = collectives.Backend();
  return ExecuteRank(program, collectives.rank(), inputs, options, keep);
}

// ---- GatherToRoot -----------------------------------------------------------------------------

namespace {

// The wire form of named tensors: per tensor, the name's length and bytes, the dtype, the
// dimension count and sizes, the byte count and the bytes.
void Put(std::vector<char>& out, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  out.insert(out.end(), p, p + bytes);
}

template <typename T>
void PutValue(std::vector<char>& out, T value) {
  Put(out, &value, sizeof value);
}

template <typename T>
T Take(const char*& p, const char* end) {
  if (end - p < static_cast<std::ptrdiff_t>(sizeof(T))) {
    throw std::runtime_error("GatherToRoot: truncated message");
  }
  T value;
  std::memcpy(&value, p, sizeof value);
  p += sizeof value;
  return value;
}

std::vector<char> Serialize(const std::map<std::string, at::Tensor>& tensors) {
  std::vector<char> out;
  PutValue<int64_t>(out, static_cast<int64_t>(tensors.size()));
  for (const auto& [name, tensor] : tensors) {
    at::Tensor t = tensor.contiguous().cpu();
    PutValue<int64_t>(out, static_cast<int64_t>(name.size()));
    Put(out, name.data(), name.size());
    PutValue<int32_t>(out, static_cast<int32_t>(t.scalar_type()));
    PutValue<int64_t>(out, t.dim());
    for (int64_t s : t.sizes()) PutValue<int64_t>(out, s);
    int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
    PutValue<int64_t>(out, bytes);
    Put(out, t.data_ptr(), static_cast<size_t>(bytes));
  }
  return out;
}

std::map<std::string, at::Tensor> Deserialize(const char* p, const char* end) {
  std::map<std::string, at::Tensor> tensors;
  int64_t count = Take<int64_t>(p, end);
  for (int64_t i = 0; i < count; ++i) {
    int64_t name_size = Take<int64_t>(p, end);
    if (name_size < 0 || end - p < name_size) throw std::runtime_error("GatherToRoot: bad name");
    std::string name(p, static_cast<size_t>(name_size));
    p += name_size;
    auto dtype = static_cast<at::ScalarType>(Take<int32_t>(p, end));
    int64_t dims = Take<int64_t>(p, end);
    std::vector<int64_t> sizes;
    for (int64_t d = 0; d < dims; ++d) sizes.push_back(Take<int64_t>(p, end));
    int64_t bytes = Take<int64_t>(p, end);
    at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(dtype));
    if (bytes != t.numel() * static_cast<int64_t>(t.element_size()) || end - p < bytes) {
      throw std::runtime_error("GatherToRoot: tensor '" + name + "' has a bad byte count");
    }
    std::memcpy(t.data_ptr(), p, static_cast<size_t>(bytes));
    p += bytes;
    tensors[name] = t;
  }
  return tensors;
}

}  // namespace

std::vector<std::map<std::string, at::Tensor>> GatherToRoot(
    const std::map<std::string, at::Tensor>& mine, MPI_Comm comm, int root) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<char> message = Serialize(mine);
  int length = CountOf(static_cast<int64_t>(message.size()), "GatherToRoot");
  std::vector<int> lengths(static_cast<size_t>(size));
  CheckMpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm), "MPI_Gather");
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  int64_t total = 0;
  if (rank == root) {
    for (int r = 0; r < size; ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    CountOf(total, "GatherToRoot");
  }
  std::vector<char> all(static_cast<size_t>(total));
  CheckMpi(MPI_Gatherv(message.data(), length, MPI_BYTE, all.data(), lengths.data(),
                       offsets.data(), MPI_BYTE, root, comm),
           "MPI_Gatherv");
  std::vector<std::map<std::string, at::Tensor>> result;
  if (rank != root) return result;
  for (int r = 0; r < size; ++r) {
    const char* begin = all.data() + offsets[r];
    result.push_back(Deserialize(begin, begin + lengths[r]));
  }
  return result;
}

}  // namespace gg::runtime
