#include "runtime/executor.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

#include "frontend/p2p.h"
#include "ir/liveness.h"
#include "ir/op_registry.h"
#include "runtime/collectives.h"
#include "runtime/op_kernels.h"
#include "util/diagnostic.h"

namespace gg::runtime {

std::string ErrorText(const std::exception& error) {
  if (const auto* aten = dynamic_cast<const c10::Error*>(&error)) {
    return aten->what_without_backtrace();
  }
  return error.what();
}

at::Tensor ZerosOf(const ir::TensorType& type, at::Device device) {
  std::vector<int64_t> sizes;
  for (const ir::Dim& d : type.shape) {
    if (!d.is_static()) {
      throw std::invalid_argument("cannot make a tensor of symbolic type " + type.ToString());
    }
    sizes.push_back(d.value());
  }
  return at::zeros(sizes, at::TensorOptions().dtype(ToAten(type.dtype)).device(device));
}

namespace {

std::string TypeOf(const at::Tensor& t) {
  std::string s = std::string(ir::ShortName(FromAten(t.scalar_type()))) + "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// Empty when `t` fits `type` (symbolic dims match any size), else what differs.
std::string Mismatch(const at::Tensor& t, const ir::TensorType& type) {
  bool fits = t.defined() && t.scalar_type() == ToAten(type.dtype) &&
              t.dim() == static_cast<int64_t>(type.shape.size());
  for (size_t i = 0; fits && i < type.shape.size(); ++i) {
    if (type.shape[i].is_static() && type.shape[i].value() != t.size(static_cast<int64_t>(i))) {
      fits = false;
    }
  }
  if (fits) return "";
  return "expected " + type.ToString() + ", got " + (t.defined() ? TypeOf(t) : "None");
}

// The point-to-point transfers of a program run in one process: what each send posted, by
// transfer (ir::Program::transfers).
struct Mailbox {
  explicit Mailbox(const ir::Program& program) : posted(program.transfers.size()) {}
  std::vector<at::Tensor> posted;
};

// One rank's progress through its graph.
class RankRun {
 public:
  // `mailbox`: the transfers of ranks run in this process; nullptr: they go to
  // options.collective_backend (ExecuteRank).
  RankRun(const ir::Program& program, int32_t rank, const GraphInputs& inputs,
          const ExecutionOptions& options, const std::set<ir::TensorRef>& keep, Mailbox* mailbox)
      : program_(program),
        mailbox_(mailbox),
        graph_(program.rank(rank)),
        rank_(rank),
        options_(options),
        keep_(keep),
        generator_(at::detail::createCPUGenerator(options.seed + static_cast<uint64_t>(rank))),
        values_(graph_.nodes.size()),
        frees_after_(graph_.nodes.size()) {
    ComputeLastUses();
    BindInputs(inputs);
    result_.random_mode =
        options.dropout_off
            ? std::string("dropout off")
            : "dropout seeded with " + std::to_string(options.seed + static_cast<uint64_t>(rank));
  }

  bool done() const { return next_ >= graph_.nodes.size() && pending_.empty(); }
  int32_t rank() const { return rank_; }
  const ir::Graph& graph() const { return graph_; }
  // The collective node this rank waits in, if it waits.
  std::optional<ir::NodeId> blocked() const { return blocked_; }
  // The receive node whose value this rank needs before it can go on, if it waits for one.
  std::optional<ir::NodeId> waiting() const { return waiting_; }

  // Runs nodes until the graph ends, a collective (other than wait_tensor) is reached, or a
  // node reads a received value whose send has not run.
  void RunUntilCollective() {
    while (!blocked_ && !waiting_) {
      if (next_ >= graph_.nodes.size()) {
        // the end: receives never read complete here
        while (!pending_.empty() && !waiting_) CompleteReceive(pending_.front());
        return;
      }
      const ir::Node& node = graph_.nodes[next_];
      if (!CompleteReceivesReadBy(node)) return;
      if (node.kind != ir::NodeKind::kOperator) {
        Advance();
        continue;
      }
      if (ir::OpRegistry::Default().Find(node.op) == nullptr) {
        RunOpaque(node);  // an operator unknown to the registry: by name, through ATen
        Advance();
        continue;
      }
      const ir::OpInfo& info = Info(node);
      if (info.traits.collective == ir::CollectiveKind::kSend) {
        Send(node, info);
        Advance();
        continue;
      }
      if (info.traits.collective == ir::CollectiveKind::kRecv) {
        pending_.push_back(static_cast<ir::NodeId>(next_));  // posted; completes when read
        Advance();
        continue;
      }
      if (info.traits.collective != ir::CollectiveKind::kNone &&
          info.traits.collective != ir::CollectiveKind::kWait) {
        blocked_ = static_cast<ir::NodeId>(next_);
        return;
      }
      RunOperator(node, info);
      Advance();
    }
  }

  // Completes the receive this rank waits for when its send has run (in this process); false
  // when it still waits.
  bool TryCompleteWaiting() {
    if (!waiting_) return false;
    const ir::NodeId recv = *waiting_;
    waiting_.reset();
    CompleteReceive(recv);
    return !waiting_;
  }

  // The transfer of a send or receive node of this rank (InputError when it was not paired).
  const ir::Transfer& TransferAt(const ir::Node& node, ir::NodeId id) const {
    const ir::Transfer* t = program_.TransferOf(rank_, id);
    if (t == nullptr) {
      Fail(node,
           "point-to-point transfer without its peer (the program's transfers are paired "
           "by the loader, frontend::PairTransfers)");
    }
    return *t;
  }

  // The tensor a collective node sends (its first tensor argument).
  at::Tensor CollectiveInput(const ir::Node& node, const ir::BoundArgs& args) {
    for (const ir::ArgSchema& a : args.schema().args) {
      if (a.type.rfind("Tensor", 0) == 0 && args[a.name].is_tensor()) {
        return Value(args[a.name].as_tensor(), node);
      }
    }
    Fail(node, "collective without a tensor argument");
  }

  // Completes the collective this rank waits in with its output.
  void FinishCollective(at::Tensor output) {
    const ir::Node& node = graph_.nodes[next_];
    Store(node, {std::move(output)});
    blocked_.reset();
    Advance();
  }

  const ir::OpInfo& Info(const ir::Node& node) const {
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
    if (info == nullptr) Fail(node, "unknown operator " + node.op.ToString());
    return *info;
  }

  // Hands `call`, made at `node`, to options.collective_backend (a host backend is given CPU
  // tensors; its result comes back to the device); the backend's failure is an error at `node`.
  at::Tensor CallBackend(const ir::Node& node, RankCollective call) const {
    if (!options_.collectives_on_device) call.input = call.input.to(at::kCPU);
    at::Tensor output;
    try {
      output = options_.collective_backend(call);
      if (output.defined()) output = output.to(options_.device);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      Fail(node, node.op.ToString() + " failed: " + ErrorText(e));
    }
    return output;
  }

  [[noreturn]] void Fail(const ir::Node& node, const std::string& problem) const {
    throw InputError(graph_.file, node.def_line, Located(node, problem));
  }
  // A node this runtime does not execute: a limit of GraphGuard, not a failure of the program.
  [[noreturn]] void NotExecutable(const ir::Node& node, const std::string& problem) const {
    throw NotExecutableError(graph_.file, node.def_line, Located(node, problem));
  }
  // The problem prefixed with the rank (when not 0) and the node.
  std::string Located(const ir::Node& node, const std::string& problem) const {
    return (graph_.rank != 0 || rank_ != 0 ? "rank " + std::to_string(rank_) + ": "
                                           : std::string()) +
           "node '" + node.name + "': " + problem;
  }

  ExecutionResult TakeResult() {
    for (const ir::Value& v : graph_.outputs) {
      const ir::TensorRef* ref = v.is_tensor() ? &v.as_tensor() : nullptr;
      result_.outputs.push_back(ref != nullptr && static_cast<size_t>(ref->output) <
                                                      values_.at(ref->node).size()
                                    ? values_.at(ref->node).at(ref->output)
                                    : at::Tensor());
    }
    return std::move(result_);
  }

 private:
  void ComputeLastUses() {
    std::set<ir::TensorRef> pinned = keep_;
    for (const ir::Value& v : graph_.outputs) {
      if (!options_.keep_outputs) break;
      std::vector<ir::TensorRef> refs;
      v.CollectTensors(&refs);
      pinned.insert(refs.begin(), refs.end());
    }
    for (const auto& [ref, i] : ir::LastUses(graph_)) {
      if (pinned.count(ref) == 0) frees_after_[i].push_back(ref);
    }
  }

  void BindInputs(const GraphInputs& inputs) {
    if (inputs.inputs.size() != graph_.inputs.size()) {
      throw InputError(graph_.file, 0,
                       "rank " + std::to_string(rank_) + ": the graph has " +
                           std::to_string(graph_.inputs.size()) + " inputs but " +
                           std::to_string(inputs.inputs.size()) + " values were given");
    }
    for (size_t i = 0; i < graph_.inputs.size(); ++i) {
      const ir::Node& node = graph_.node(graph_.inputs[i]);
      at::Tensor value = inputs.inputs[i];
      if (node.outputs.empty() || !node.outputs[0].type) Fail(node, "input without a type");
      if (std::string why = Mismatch(value, *node.outputs[0].type); !why.empty()) {
        Fail(node, "input value does not fit: " + why);
      }
      value = OnDevice(value);
      values_[graph_.inputs[i]] = {value};
      Observe(ir::TensorRef{graph_.inputs[i], 0}, value);
    }
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const ir::Node& node = graph_.nodes[i];
      if (node.kind != ir::NodeKind::kConstant) continue;
      if (node.outputs.empty() || !node.outputs[0].type) Fail(node, "constant without a type");
      at::Tensor value;
      if (auto it = inputs.constants.find(node.name); it != inputs.constants.end()) {
        value = it->second;
        if (std::string why = Mismatch(value, *node.outputs[0].type); !why.empty()) {
          Fail(node, "constant value does not fit: " + why);
        }
        value = OnDevice(value);
      } else {
        try {
          value = ZerosOf(*node.outputs[0].type, options_.device);
        } catch (const std::exception& e) {
          Fail(node, ErrorText(e));
        }
      }
      values_[i] = {value};
      Observe(ir::TensorRef{static_cast<ir::NodeId>(i), 0}, value);
    }
  }

  // A given value on the execution's device (no copy when it is there already).
  at::Tensor OnDevice(const at::Tensor& value) const {
    return value.defined() ? value.to(options_.device) : value;
  }

  at::Tensor Value(ir::TensorRef ref, const ir::Node& user) const {
    if (ref.node < 0 || static_cast<size_t>(ref.node) >= values_.size() ||
        static_cast<size_t>(ref.output) >= values_[ref.node].size() ||
        !values_[ref.node][ref.output].defined()) {
      Fail(user, "uses a value that is not available (" + graph_.ValueName(ref) + ")");
    }
    return values_[ref.node][ref.output];
  }

  void RunOperator(const ir::Node& node, const ir::OpInfo& info) {
    std::vector<at::Tensor> outputs;
    try {
      ir::BoundArgs args(info.schema, node);
      if (info.traits.collective == ir::CollectiveKind::kWait) {
        // wait_tensor: the value itself, the communication having completed.
        Store(node, {CollectiveInput(node, args)});
        return;
      }
      RandomMode random{options_.dropout_off, &generator_};
      outputs = CallOperator(
          node, info, args, [&](ir::TensorRef ref) { return Value(ref, node); }, random,
          options_.device);
      if (options_.transform_outputs) options_.transform_outputs(rank_, node, outputs);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      Fail(node, node.op.ToString() + " failed: " + ErrorText(e));
    }
    Store(node, std::move(outputs));
  }

  // An opaque node (its operator unknown to the registry, typed from the file): executed by
  // name through the ATen dispatcher; an error naming the operator when LibTorch lacks it.
  void RunOpaque(const ir::Node& node) {
    std::vector<at::Tensor> outputs;
    try {
      outputs = CallByName(node, [&](ir::TensorRef ref) { return Value(ref, node); });
      if (options_.transform_outputs) options_.transform_outputs(rank_, node, outputs);
    } catch (const NotExecutableError& e) {
      NotExecutable(node, e.problem());
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      Fail(node, ErrorText(e));
    }
    Store(node, std::move(outputs));
  }

  // The sizes of a static type (InputError at `node` for a symbolic one).
  std::vector<int64_t> ShapeOf(const ir::TensorType& type, const ir::Node& node) const {
    std::vector<int64_t> sizes;
    for (const ir::Dim& d : type.shape) {
      if (!d.is_static()) Fail(node, "symbolic size in " + type.ToString());
      sizes.push_back(d.value());
    }
    return sizes;
  }

  // The tensor a send or receive node names (its first tensor argument, a Tensor[]'s element).
  at::Tensor TransferTensor(const ir::Node& node) {
    std::vector<ir::TensorRef> refs = node.TensorInputs();
    if (refs.empty()) Fail(node, "point-to-point transfer without a tensor");
    return Value(refs[0], node);
  }

  // The call a backend sees for a send or receive node.
  RankCollective TransferCall(const ir::Node& node, ir::NodeId id, const ir::OpInfo& info) {
    const ir::Transfer& t = TransferAt(node, id);
    RankCollective call;
    call.kind = info.traits.collective;
    call.group = t.group;
    if (auto it = program_.groups.find(t.group); it != program_.groups.end()) {
      call.members = it->second;
    } else {
      for (int32_t r = 0; r < program_.world_size(); ++r) call.members.push_back(r);
    }
    call.rank = rank_;
    call.peer = call.kind == ir::CollectiveKind::kSend ? t.dst : t.src;
    if (call.kind == ir::CollectiveKind::kSend) {
      call.input = TransferTensor(node);
    } else {
      // the buffer's shape and dtype (its value is not read, and may be freed by now)
      const auto out = static_cast<size_t>(frontend::ReceivedOutput(info, node));
      if (out >= node.outputs.size() || !node.outputs[out].type) {
        Fail(node, "receive without a typed output for the received tensor");
      }
      call.input = at::empty(ShapeOf(*node.outputs[out].type, node),
                             at::TensorOptions().dtype(ToAten(node.outputs[out].type->dtype)));
    }
    return call;
  }

  // A send posts its tensor (in this process) or hands it to the backend, and goes on.
  void Send(const ir::Node& node, const ir::OpInfo& info) {
    const auto id = static_cast<ir::NodeId>(next_);
    at::Tensor value = TransferTensor(node);
    if (mailbox_ != nullptr) {
      const ir::Transfer& t = TransferAt(node, id);
      mailbox_->posted[static_cast<size_t>(&t - program_.transfers.data())] = value;
    } else {
      CallBackend(node, TransferCall(node, id, info));
    }
    // c10d::send gives a Work (no value), _c10d_functional::isend an empty tensor
    std::vector<at::Tensor> outputs(node.outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o) {
      if (node.outputs[o].type) {
        outputs[o] = at::empty(
            {0},
            at::TensorOptions().dtype(ToAten(node.outputs[o].type->dtype)).device(options_.device));
      }
    }
    Store(node, std::move(outputs));
  }

  // Before `node` runs: completes the pending receives it reads. False (the rank waits) when
  // one's send has not run.
  bool CompleteReceivesReadBy(const ir::Node& node) {
    for (const ir::TensorRef& ref : node.TensorInputs()) {
      if (std::find(pending_.begin(), pending_.end(), ref.node) == pending_.end()) continue;
      CompleteReceive(ref.node);
      if (waiting_) return false;
    }
    return true;
  }

  // Completes the posted receive `recv` (and, through a backend, the earlier receives from the
  // same peer and group, so that messages match in posting order); sets waiting_ when its send
  // has not run in this process.
  void CompleteReceive(ir::NodeId recv) {
    const ir::Node& node = graph_.nodes.at(recv);
    const ir::Transfer& t = TransferAt(node, recv);
    if (mailbox_ != nullptr) {
      at::Tensor value = mailbox_->posted[static_cast<size_t>(&t - program_.transfers.data())];
      if (!value.defined()) {
        waiting_ = recv;
        return;
      }
      Received(recv, value);
      return;
    }
    for (size_t k = 0; k < pending_.size();) {
      const ir::NodeId earlier = pending_[k];
      const ir::Transfer& e = TransferAt(graph_.nodes.at(earlier), earlier);
      if (e.src != t.src || e.group != t.group || earlier > recv) {
        ++k;
        continue;
      }
      const ir::Node& enode = graph_.nodes.at(earlier);
      Received(earlier, CallBackend(enode, TransferCall(enode, earlier, Info(enode))));
      // Received erased pending_[k]
    }
  }

  // Stores the received tensor as the receive node's value.
  void Received(ir::NodeId recv, const at::Tensor& value) {
    const ir::Node& node = graph_.nodes.at(recv);
    const ir::OpInfo& info = Info(node);
    std::vector<at::Tensor> outputs(node.outputs.size());
    const auto out = static_cast<size_t>(frontend::ReceivedOutput(info, node));
    if (out >= outputs.size()) Fail(node, "receive without an output for the received tensor");
    outputs[out] = value;
    pending_.erase(std::find(pending_.begin(), pending_.end(), recv));
    StoreAt(recv, std::move(outputs));
  }

  // Checks the current node's results against its annotated types and records them.
  void Store(const ir::Node& /*current*/, std::vector<at::Tensor> outputs) {
    StoreAt(static_cast<ir::NodeId>(next_), std::move(outputs));
  }

  // The same for node `id` (a receive completes after its node).
  void StoreAt(ir::NodeId id, std::vector<at::Tensor> outputs) {
    const ir::Node& node = graph_.nodes.at(id);
    if (outputs.size() < node.outputs.size()) {
      Fail(node, "computed " + std::to_string(outputs.size()) + " outputs, the graph names " +
                     std::to_string(node.outputs.size()));
    }
    outputs.resize(node.outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o) {
      const std::optional<ir::TensorType>& type = node.outputs[o].type;
      if (type && !outputs[o].defined()) {
        Fail(node, "output " + std::to_string(o) + " is None but annotated " + type->ToString());
      }
      if (type) {
        if (std::string why = Mismatch(outputs[o], *type); !why.empty()) {
          Fail(node, "output " + std::to_string(o) + " " + why);
        }
      }
      ir::TensorRef ref{id, static_cast<int32_t>(o)};
      if (keep_.count(ref) != 0) result_.kept[ref] = outputs[o];
      Observe(ref, outputs[o]);
    }
    values_[id] = std::move(outputs);
  }

  void Observe(ir::TensorRef ref, const at::Tensor& value) const {
    if (options_.observe && value.defined()) options_.observe(rank_, ref, value);
  }

  // Frees what the current node used for the last time and moves on.
  void Advance() {
    for (const ir::TensorRef& ref : frees_after_[next_]) {
      if (static_cast<size_t>(ref.output) < values_[ref.node].size()) {
        values_[ref.node][ref.output] = at::Tensor();
      }
    }
    ++next_;
  }

  const ir::Program& program_;
  Mailbox* mailbox_;
  const ir::Graph& graph_;
  int32_t rank_;
  ExecutionOptions options_;
  std::set<ir::TensorRef> keep_;
  at::Generator generator_;
  std::vector<std::vector<at::Tensor>> values_;          // by node, by output
  std::vector<std::vector<ir::TensorRef>> frees_after_;  // by node: values last used there
  size_t next_ = 0;
  std::optional<ir::NodeId> blocked_;
  std::optional<ir::NodeId> waiting_;
  std::vector<ir::NodeId> pending_;  // receives posted, not completed, in posting order
  ExecutionResult result_;
};

struct PendingCollective {
  const ir::OpInfo* info;
  std::string group;
};

PendingCollective Describe(const RankRun& run) {
  const ir::Node& node = run.graph().node(*run.blocked());
  const ir::OpInfo& info = run.Info(node);
  try {
    ir::BoundArgs args(info.schema, node);
    std::string group;
    if (!info.traits.group_arg.empty() && args.has(info.traits.group_arg) &&
        args[info.traits.group_arg].is_string()) {
      group = args[info.traits.group_arg].as_string();
    }
    return {&info, group};
  } catch (const std::exception& e) {
    run.Fail(node, ErrorText(e));
  }
}

std::vector<int32_t> Members(const ir::Program& program, const std::string& group) {
  if (auto it = program.groups.find(group); it != program.groups.end()) return it->second;
  std::vector<int32_t> all;
  for (int32_t r = 0; r < program.world_size(); ++r) all.push_back(r);
  return all;
}

// The collective a rank waits in, as that rank's call: its input, reduce op, broadcast source,
// all-to-all split sizes and the group's members; InputError at the node when the arguments
// contradict the group. An all_to_all_single with unequal splits is not executable unless
// `uneven_splits` (the in-process collectives run them; the MPI and NCCL backends do not).
RankCollective DescribeCall(RankRun& run, const std::vector<int32_t>& members,
                            const std::string& group, bool uneven_splits) {
  const ir::Node& node = run.graph().node(*run.blocked());
  const ir::OpInfo& info = run.Info(node);
  RankCollective call;
  call.kind = info.traits.collective;
  call.group = group;
  call.members = members;
  call.rank = run.rank();
  try {
    ir::BoundArgs args(info.schema, node);
    call.input = run.CollectiveInput(node, args);
    if (!info.traits.reduce_op_arg.empty()) {
      call.reduce_op = args[info.traits.reduce_op_arg].as_string();
    }
    if (args.has("group_size") && args["group_size"].is_int() &&
        args["group_size"].as_int() != static_cast<int64_t>(members.size())) {
      run.Fail(node, "group_size " + std::to_string(args["group_size"].as_int()) +
                         " but the group has " + std::to_string(members.size()) + " ranks");
    }
    if (call.kind == ir::CollectiveKind::kBroadcast) {
      // `_c10d_functional::broadcast`'s src is the ProcessGroup's root rank: a position in the
      // group, not a global rank (torch.distributed.broadcast converts before calling it), as
      // the symbolic lowering of broadcast reads it too.
      call.source = args["src"].as_int();
      if (call.source < 0 || call.source >= static_cast<int64_t>(members.size())) {
        run.Fail(node, "broadcast src " + std::to_string(call.source) +
                           " is not a position in its group of " + std::to_string(members.size()) +
                           " ranks");
      }
    }
    if (call.kind == ir::CollectiveKind::kAllToAll) {
      for (const char* splits : {"output_split_sizes", "input_split_sizes"}) {
        if (!args.has(splits) || !args[splits].is_int_list()) continue;
        std::vector<int64_t> sizes = args[splits].as_int_list();
        bool equal =
            std::all_of(sizes.begin(), sizes.end(), [&](int64_t s) { return s == sizes[0]; });
        if (!equal && !uneven_splits) {
          run.NotExecutable(node,
                            "all_to_all_single with unequal splits (only the in-process "
                            "collectives run them)");
        }
        (std::string(splits) == "input_split_sizes" ? call.input_splits : call.output_splits) =
            sizes;
      }
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    run.Fail(node, ErrorText(e));
  }
  return call;
}

// Computes the collective that every member of a group waits in.
void Complete(std::vector<RankRun>& runs, const std::vector<int32_t>& members,
              const std::string& group) {
  RankRun& first = runs[members[0]];
  const ir::Node& node0 = first.graph().node(*first.blocked());
  CollectiveCall call;
  for (int32_t r : members) {
    RankRun& run = runs[r];
    const ir::Node& node = run.graph().node(*run.blocked());
    if (!(node.op == node0.op)) {
      run.Fail(node, "collective " + node.op.ToString() + " meets " + node0.op.ToString() +
                         " on rank " + std::to_string(members[0]));
    }
    RankCollective mine = DescribeCall(run, members, group, /*uneven_splits=*/true);
    if (r == members[0]) {
      call.kind = mine.kind;
      call.reduce_op = mine.reduce_op;
      call.source = mine.source;
    }
    if (mine.reduce_op != call.reduce_op) {
      run.Fail(node, "reduce op '" + mine.reduce_op + "' meets '" + call.reduce_op + "'");
    }
    call.inputs.push_back(mine.input);
    call.input_splits.push_back(mine.input_splits);
    call.output_splits.push_back(mine.output_splits);
  }
  std::vector<at::Tensor> outputs;
  try {
    outputs = RunCollective(call);
  } catch (const std::exception& e) {
    first.Fail(node0, ErrorText(e));
  }
  for (size_t i = 0; i < members.size(); ++i) runs[members[i]].FinishCollective(outputs[i]);
}

std::vector<ExecutionResult> Run(const ir::Program& program, const std::vector<GraphInputs>& inputs,
                                 const ExecutionOptions& options,
                                 const std::vector<std::set<ir::TensorRef>>& keep) {
  int32_t world = program.world_size();
  if (static_cast<int32_t>(inputs.size()) != world) {
    throw InputError("", 0,
                     "the program has " + std::to_string(world) + " ranks but inputs for " +
                         std::to_string(inputs.size()) + " were given");
  }
  std::vector<RankRun> runs;
  runs.reserve(world);
  static const std::set<ir::TensorRef> kNothing;
  Mailbox mailbox(program);
  for (int32_t r = 0; r < world; ++r) {
    runs.emplace_back(program, r, inputs[r], options,
                      r < static_cast<int32_t>(keep.size()) ? keep[r] : kNothing, &mailbox);
  }
  while (true) {
    for (RankRun& run : runs) run.RunUntilCollective();
    bool all_done = true;
    bool progress = false;
    for (RankRun& run : runs) {
      if (!run.waiting()) continue;
      all_done = false;
      progress = run.TryCompleteWaiting() || progress;
    }
    for (int32_t r = 0; r < world; ++r) {
      if (!runs[r].blocked()) continue;
      all_done = false;
      PendingCollective pending = Describe(runs[r]);
      std::vector<int32_t> members = Members(program, pending.group);
      bool ready = true;
      for (int32_t m : members) {
        if (m < 0 || m >= world) {
          runs[r].Fail(runs[r].graph().node(*runs[r].blocked()),
                       "group '" + pending.group + "' names rank " + std::to_string(m) +
                           " outside the world");
        }
        ready = ready && runs[m].blocked() && Describe(runs[m]).group == pending.group;
      }
      if (ready) {
        Complete(runs, members, pending.group);
        progress = true;
      }
    }
    if (all_done) break;
    if (!progress) {
      for (RankRun& run : runs) {
        if (run.waiting()) {
          const ir::Node& recv = run.graph().node(*run.waiting());
          const ir::Transfer& t = run.TransferAt(recv, *run.waiting());
          run.Fail(recv, "waits for the tensor rank " + std::to_string(t.src) + " sends at " +
                             program.rank(t.src).file + ":" +
                             std::to_string(program.rank(t.src).node(t.send).def_line) +
                             ", which that rank never reaches (it finished or waits elsewhere)");
        }
        if (!run.blocked()) continue;
        PendingCollective pending = Describe(run);
        run.Fail(run.graph().node(*run.blocked()),
                 "waits in a collective on group '" + pending.group +
                     "' that the other members never reach (they finished or wait elsewhere)");
      }
    }
  }
  std::vector<ExecutionResult> results;
  for (RankRun& run : runs) results.push_back(run.TakeResult());
  return results;
}

}  // namespace

ExecutionResult Execute(const ir::Graph& graph, const GraphInputs& inputs,
                        const ExecutionOptions& options, const std::set<ir::TensorRef>& keep) {
  ir::Program program;
  program.ranks.push_back(graph);
  program.ranks[0].rank = 0;
  return Run(program, {inputs}, options, {keep}).at(0);
}

ExecutionResult ExecuteRank(const ir::Program& program, int32_t rank, const GraphInputs& inputs,
                            const ExecutionOptions& options, const std::set<ir::TensorRef>& keep) {
  if (!options.collective_backend) {
    throw std::invalid_argument("ExecuteRank needs ExecutionOptions::collective_backend");
  }
  if (rank < 0 || rank >= program.world_size()) {
    throw InputError("", 0,
                     "rank " + std::to_string(rank) + " is not a rank of the program (" +
                         std::to_string(program.world_size()) + " ranks)");
  }
  RankRun run(program, rank, inputs, options, keep, /*mailbox=*/nullptr);
  while (true) {
    run.RunUntilCollective();
    if (!run.blocked()) break;
    const ir::Node& node = run.graph().node(*run.blocked());
    std::string group = Describe(run).group;
    std::vector<int32_t> members = Members(program, group);
    if (std::find(members.begin(), members.end(), rank) == members.end()) {
      run.Fail(node, "rank " + std::to_string(rank) + " is not a member of group '" + group + "'");
    }
    run.FinishCollective(
        run.CallBackend(node, DescribeCall(run, members, group, /*uneven_splits=*/false)));
  }
  return run.TakeResult();
}

std::vector<ExecutionResult> ExecuteProgram(const ir::Program& program,
                                            const std::vector<GraphInputs>& inputs,
                                            const ExecutionOptions& options,
                                            const std::vector<std::set<ir::TensorRef>>& keep) {
  return Run(program, inputs, options, keep);
}

}  // namespace gg::runtime
