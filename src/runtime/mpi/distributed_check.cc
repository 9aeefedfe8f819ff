#include "runtime/mpi/distributed_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

#include "ir/op_registry.h"
#include "runtime/executor.h"
#include "runtime/input_synthesis.h"
#include "runtime/mpi/nccl_setup.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

void Check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

// ---- failures between processes ---------------------------------------------------------------

// A failure as one string: kind, rank, line, file, then the text (which may hold newlines).
std::string Encode(const ProcessFailure& f) {
  return std::to_string(static_cast<int>(f.kind)) + "\n" + std::to_string(f.rank) + "\n" +
         std::to_string(f.line) + "\n" + f.file + "\n" + f.text;
}

ProcessFailure Decode(const std::string& s) {
  ProcessFailure f;
  size_t a = s.find('\n'), b = s.find('\n', a + 1), c = s.find('\n', b + 1),
         d = s.find('\n', c + 1);
  if (d == std::string::npos) throw std::runtime_error("malformed failure message");
  f.kind = static_cast<ProcessFailure::Kind>(std::stoi(s.substr(0, a)));
  f.rank = std::stoi(s.substr(a + 1, b - a - 1));
  f.line = std::stoi(s.substr(b + 1, c - b - 1));
  f.file = s.substr(c + 1, d - c - 1);
  f.text = s.substr(d + 1);
  return f;
}

// ---- the no-hang protocol ---------------------------------------------------------------------

// The groups of this rank's collectives in the order ExecuteRank hands them to the backend: the
// graph's collective operators in node order, waits excepted (they complete locally). A node
// whose arguments do not bind, or whose group lacks the rank, fails before reaching the backend
// on every rank that has it, so it takes no place in the sequence.
std::vector<std::vector<int32_t>> CollectiveSequence(const ir::Program& program, int32_t rank) {
  std::vector<std::vector<int32_t>> sequence;
  for (const ir::Node& node : program.rank(rank).nodes) {
    if (node.kind != ir::NodeKind::kOperator) continue;
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
    if (info == nullptr || info->traits.collective == ir::CollectiveKind::kNone ||
        info->traits.collective == ir::CollectiveKind::kWait ||
        ir::IsPointToPoint(info->traits.collective)) {
      continue;
    }
    std::string group;
    try {
      ir::BoundArgs args(info->schema, node);
      if (!info->traits.group_arg.empty() && args.has(info->traits.group_arg) &&
          args[info->traits.group_arg].is_string()) {
        group = args[info->traits.group_arg].as_string();
      }
    } catch (const std::exception&) {
      continue;
    }
    std::vector<int32_t> members;
    if (auto it = program.groups.find(group); it != program.groups.end()) {
      members = it->second;
    } else {
      for (int32_t r = 0; r < program.world_size(); ++r) members.push_back(r);
    }
    if (std::find(members.begin(), members.end(), rank) == members.end()) continue;
    sequence.push_back(std::move(members));
  }
  return sequence;
}

// A collective backend (MPI, or NCCL on the device) behind an "ok" flag per collective (see the
// header): a rank that fails walks the rest of its sequence with "failed" flags, so no member
// waits for it forever. The flag travels with the input's element count: members whose counts
// differ all stop with an error, where MPI or NCCL would hang or read past a buffer.
class GuardedBackend {
 public:
  GuardedBackend(MpiCollectives& mpi, CollectiveBackend inner,
                 const std::vector<std::vector<int32_t>>& sequence)
      : mpi_(mpi), inner_(std::move(inner)), sequence_(sequence) {}

  at::Tensor Run(const RankCollective& call) {
    int64_t numel = call.input.defined() ? call.input.numel() : 0;
    Flags flags = Exchange(mpi_.GroupComm(call.members), 1, numel);
    if (flags.ok == 0) {
      peer_failed_ = true;
      throw std::runtime_error("another process of group '" + call.group + "' failed");
    }
    if (flags.min_numel != -flags.neg_max_numel) {
      throw std::invalid_argument("collective inputs differ in size across ranks (" +
                                  std::to_string(flags.min_numel) + " to " +
                                  std::to_string(-flags.neg_max_numel) + " elements)");
    }
    return inner_(call);
  }

  // After this rank stopped (done or failed): the flags of the collectives it did not reach.
  void Drain() {
    while (done_ < sequence_.size()) Exchange(mpi_.GroupComm(sequence_[done_]), 0, 0);
  }

  bool peer_failed() const { return peer_failed_; }

 private:
  struct Flags {
    int64_t ok, min_numel, neg_max_numel;  // reduced with MPI_MIN
  };

  Flags Exchange(MPI_Comm comm, int64_t ok, int64_t numel) {
    ++done_;
    Flags flags{ok, numel, -numel};
    if (comm == MPI_COMM_NULL) return flags;
    Check(MPI_Allreduce(MPI_IN_PLACE, &flags, 3, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
    return flags;
  }

  MpiCollectives& mpi_;
  CollectiveBackend inner_;
  const std::vector<std::vector<int32_t>>& sequence_;
  size_t done_ = 0;
  bool peer_failed_ = false;
};

// ---- what rank 0 receives ---------------------------------------------------------------------

// Kept values travel as "v<node>.<output>", fingerprints as "f<node>.<output>": one double tensor
// [dtype, projections, dims, shape..., then for the whole tensor and each dimension: slice count,
// count * projections values, count sums of squares] (shapes and counts are exact in a double).
std::string RefName(char kind, ir::TensorRef ref) {
  return kind + std::to_string(ref.node) + "." + std::to_string(ref.output);
}

ir::TensorRef ParseRef(const std::string& name) {
  ir::TensorRef ref;
  int node = 0, output = 0;
  if (std::sscanf(name.c_str() + 1, "%d.%d", &node, &output) != 2) {
    throw std::runtime_error("malformed gathered tensor name '" + name + "'");
  }
  ref.node = static_cast<ir::NodeId>(node);
  ref.output = output;
  return ref;
}

void PutSlices(const SliceProjections& p, std::vector<double>* out) {
  out->push_back(static_cast<double>(p.count));
  out->insert(out->end(), p.values.begin(), p.values.end());
  out->insert(out->end(), p.sum_squares.begin(), p.sum_squares.end());
}

at::Tensor EncodeFingerprint(const TensorFingerprint& f) {
  std::vector<double> v = {static_cast<double>(static_cast<int>(f.dtype)),
                           static_cast<double>(f.projections), static_cast<double>(f.shape.size())};
  for (int64_t s : f.shape) v.push_back(static_cast<double>(s));
  PutSlices(f.whole, &v);
  for (const SliceProjections& p : f.dims) PutSlices(p, &v);
  return at::tensor(v, at::kDouble);
}

TensorFingerprint DecodeFingerprint(const at::Tensor& t, std::string name) {
  at::Tensor c = t.contiguous();
  const double* p = c.data_ptr<double>();
  const double* end = p + c.numel();
  auto next = [&]() {
    if (p == end) throw std::runtime_error("truncated fingerprint of " + name);
    return *p++;
  };
  TensorFingerprint f;
  f.name = std::move(name);
  f.dtype = static_cast<ir::DType>(static_cast<int>(next()));
  f.projections = static_cast<int>(next());
  size_t dims = static_cast<size_t>(next());
  for (size_t d = 0; d < dims; ++d) f.shape.push_back(static_cast<int64_t>(next()));
  auto slices = [&]() {
    SliceProjections s;
    s.count = static_cast<int64_t>(next());
    for (int64_t i = 0; i < s.count * f.projections; ++i) s.values.push_back(next());
    for (int64_t i = 0; i < s.count; ++i) s.sum_squares.push_back(next());
    return s;
  };
  f.whole = slices();
  while (p != end) f.dims.push_back(slices());
  return f;
}

// One distributed run of D (every process): this rank with the guarded MPI backend, then the
// processes agree on the first failure, then (none) the kept values and fingerprints go to
// rank 0. `abort` joins a pass only to stop it (rank 0's own S side failed).
struct PassContext {
  const ir::Program& program;
  const ir::Graph& s_graph;
  const CheckOptions& options;
  const CheckPlan& plan;
  const ProgramInputs& inputs;
  MpiCollectives& mpi;
  CollectiveBackend backend;  // mpi's, or NCCL's on the device (then collectives_on_device)
  bool collectives_on_device;
  std::vector<std::vector<int32_t>> sequence;
  MPI_Comm comm;
  int me;
};

std::optional<ProcessFailure> RunPass(const PassContext& c, size_t pass,
                                      const ExecutionOptions& exec, FingerprintTable* fingerprints,
                                      DPass* d, bool abort = false) {
  // From the second pass on, rank 0 arrives after its S runs.
  if (pass > 0) WaitQuietly(c.comm);
  GuardedBackend guard(c.mpi, c.backend, c.sequence);
  std::optional<ProcessFailure> mine;
  ExecutionResult result;
  FingerprintTable local;
  if (abort) {
    mine = ProcessFailure{ProcessFailure::Kind::kPeer, "", 0, "rank 0 stopped", c.me};
  } else {
    try {
      ExecutionOptions options = exec;
      options.collective_backend = [&guard](const RankCollective& call) { return guard.Run(call); };
      options.collectives_on_device = c.collectives_on_device;
      if (fingerprints) {
        options.observe = DFingerprintObserver(c.s_graph, c.program, c.options, &local);
      }
      result = ExecuteRank(c.program, c.me, c.inputs.d[static_cast<size_t>(c.me)], options,
                           c.plan.keep[pass][static_cast<size_t>(c.me)]);
    } catch (...) {
      mine = FailureOf(std::current_exception());
      mine->rank = c.me;
      if (guard.peer_failed()) mine->kind = ProcessFailure::Kind::kPeer;
    }
  }
  guard.Drain();
  if (std::optional<ProcessFailure> first = FirstFailure(mine, c.comm)) return first;

  std::map<std::string, at::Tensor> named;
  for (const auto& [ref, value] : result.kept) {
    if (value.defined()) named[RefName('v', ref)] = value;
  }
  if (fingerprints && static_cast<size_t>(c.me) < local.ranks.size()) {
    for (const auto& [ref, print] : local.ranks[static_cast<size_t>(c.me)]) {
      named[RefName('f', ref)] = EncodeFingerprint(print);
    }
  }
  std::vector<std::map<std::string, at::Tensor>> all = GatherToRoot(named, c.comm, 0);
  if (c.me != 0) return std::nullopt;
  d->random_mode = result.random_mode;
  d->kept.assign(all.size(), {});
  if (fingerprints) {
    fingerprints->projections = local.projections;
    fingerprints->ranks.assign(all.size(), {});
  }
  for (size_t r = 0; r < all.size(); ++r) {
    for (auto& [name, value] : all[r]) {
      ir::TensorRef ref = ParseRef(name);
      if (name[0] == 'v') {
        d->kept[r][ref] = std::move(value);
      } else if (fingerprints) {
        std::string fx_name = c.program.rank(static_cast<int32_t>(r)).ValueName(ref);
        fingerprints->ranks[r][ref] = DecodeFingerprint(value, std::move(fx_name));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

void WaitQuietly(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  Check(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  int done = 0;
  while (true) {
    Check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

ProcessFailure FailureOf(std::exception_ptr error) {
  ProcessFailure f;
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    f.kind = ProcessFailure::Kind::kInput;
    f.file = e.file();
    f.line = e.line();
    f.text = e.problem();
  } catch (const std::bad_alloc&) {
    f.text = "out of memory";
  } catch (const std::exception& e) {
    f.text = ErrorText(e);
  } catch (...) {
    f.text = "unknown exception";
  }
  return f;
}

std::optional<ProcessFailure> FirstFailure(const std::optional<ProcessFailure>& mine,
                                           MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::string message = mine ? Encode(*mine) : std::string();
  int length = static_cast<int>(message.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  Check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<size_t>(r)] = total;
    total += lengths[static_cast<size_t>(r)];
  }
  if (total == 0) return std::nullopt;
  std::string all(static_cast<size_t>(total), '\0');
  Check(MPI_Allgatherv(message.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                       MPI_CHAR, comm),
        "MPI_Allgatherv");
  std::optional<ProcessFailure> first;
  for (int r = 0; r < size; ++r) {
    if (lengths[static_cast<size_t>(r)] == 0) continue;
    ProcessFailure f = Decode(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                         static_cast<size_t>(lengths[static_cast<size_t>(r)])));
    bool peer = f.kind == ProcessFailure::Kind::kPeer;
    if (!first || (first->kind == ProcessFailure::Kind::kPeer && !peer)) first = f;
  }
  return first;
}

void Rethrow(const ProcessFailure& failure) {
  if (failure.kind == ProcessFailure::Kind::kInput) {
    throw InputError(failure.file, failure.line, failure.text);
  }
  throw std::runtime_error(failure.rank == 0
                               ? failure.text
                               : "rank " + std::to_string(failure.rank) + ": " + failure.text);
}

CheckResult RunDistributedCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                                const symbolic::SpecResult& spec,
                                const std::vector<symbolic::Relation>& inferred,
                                const CheckOptions& options, MpiCollectives::Mode mode,
                                MPI_Comm comm, const std::string& dist_path) {
  int me = 0, size = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  // Every process loaded the same program, so every process sees the mismatch: no message.
  if (size != d_program.world_size()) {
    throw InputError(dist_path, 0,
                     "D has " + std::to_string(d_program.world_size()) + " ranks but " +
                         std::to_string(size) + " MPI processes run the check (use mpirun -np " +
                         std::to_string(d_program.world_size()) + ")");
  }
  // A failed rank's peer would wait in MPI_Recv for ever: the no-hang protocol covers
  // collectives only (every process sees the same program: no message).
  if (!d_program.transfers.empty()) {
    const ir::Transfer& t = d_program.transfers.front();
    const ir::Graph& g = d_program.rank(t.src);
    throw InputError(g.file, g.node(t.send).def_line,
                     "check --distributed does not run point-to-point transfers (pipeline "
                     "stages) yet: a failing rank would leave its peer waiting; run check "
                     "without --distributed, which runs every rank in one process");
  }
  ProgramInputs inputs;
  CheckPlan plan;
  std::optional<ProcessFailure> mine;
  try {
    inputs = SynthesizeInputs(s_graph, d_program, spec, options.seed);
    plan = PlanCheck(s_graph, d_program, spec, inferred, options);
  } catch (...) {
    mine = FailureOf(std::current_exception());
    mine->rank = me;
  }
  if (std::optional<ProcessFailure> first = FirstFailure(mine, comm)) Rethrow(*first);
  if (me != 0) {
    // Only this rank's inputs are needed here (rank 0 also reads the others' inputs and S's).
    inputs.s = GraphInputs();
    for (size_t r = 0; r < inputs.d.size(); ++r) {
      if (r != static_cast<size_t>(me)) inputs.d[r] = GraphInputs();
    }
  }
  MpiCollectives mpi(d_program, comm, mode);
  // A CUDA run's collectives are NCCL calls on the device tensors when every process has a GPU of
  // its own; otherwise (and with --exact-collectives, which needs the reference's arithmetic)
  // MPI on host copies.
  CollectiveBackend backend = mpi.Backend();
  std::string collectives = "mpi", collectives_note;
  std::unique_ptr<NcclBackend> nccl;
  if (options.device.is_cuda()) {
    if (mode == MpiCollectives::Mode::kExactReference) {
      collectives_note = "--exact-collectives computes the reference collectives on the host";
    } else if ((nccl = MakeNcclBackend(d_program, mpi, options.device, &collectives_note))) {
      backend = nccl->Backend();
      collectives = "nccl";
    }
  }
  const bool on_device = collectives == "nccl";
  PassContext context{.program = d_program,
                      .s_graph = s_graph,
                      .options = options,
                      .plan = plan,
                      .inputs = inputs,
                      .mpi = mpi,
                      .backend = backend,
                      .collectives_on_device = on_device,
                      .sequence = CollectiveSequence(d_program, me),
                      .comm = comm,
                      .me = me};
  const ExecutionOptions exec = CheckExecutionOptions(options);
  const bool classify = !options.classify.empty();

  if (me != 0) {
    for (size_t pass = 0; pass < plan.passes.size(); ++pass) {
      FingerprintTable prints;
      DPass unused;
      if (RunPass(context, pass, exec, pass == 0 && classify ? &prints : nullptr, &unused)) break;
    }
    return CheckResult();
  }
  size_t passes_run = 0;
  bool stopped = false;  // a pass failed: every process has left the pass loop
  auto run_d = [&](size_t pass, const ExecutionOptions& pass_exec, FingerprintTable* prints) {
    passes_run = pass + 1;
    DPass d;
    if (std::optional<ProcessFailure> failure = RunPass(context, pass, pass_exec, prints, &d)) {
      stopped = true;
      Rethrow(*failure);
    }
    return d;
  };
  try {
    CheckResult result = RunCheckPasses(s_graph, d_program, plan, inputs, options, run_d);
    result.collectives = collectives;
    result.collectives_note = collectives_note;
    return result;
  } catch (...) {
    // S failed on rank 0 while the others wait in the next pass: stop that pass for them.
    if (!stopped && passes_run < plan.passes.size()) {
      DPass unused;
      RunPass(context, passes_run, exec, nullptr, &unused, /*abort=*/true);
    }
    throw;
  }
}

}  // namespace gg::runtime
