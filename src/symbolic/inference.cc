#include "symbolic/inference.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <type_traits>
#include <unordered_set>
#include <variant>

#include "ir/op_registry.h"
#include "symbolic/extract.h"
#include "symbolic/index_domain.h"
#include "symbolic/lowering.h"
#include "symbolic/memo.h"
#include "symbolic/tensor_lang.h"

namespace gg::symbolic {
namespace {

using ir::TensorRef;
using Clock = std::chrono::steady_clock;

struct DKey {
  int32_t rank;
  TensorRef ref;
  friend bool operator<(const DKey& a, const DKey& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.ref < b.ref;
  }
};

const ir::OpInfo* InfoOf(const ir::Node& node) {
  if (node.kind != ir::NodeKind::kOperator) return nullptr;
  return ir::OpRegistry::Default().Find(node.op);
}

// Nodes whose value depends on no graph input's value: factories, constants, buffers with
// unspecified contents (empty_like reads only its input's shape), metadata-only factories
// (zeros_like, new_zeros, ones_like: a constant shaped like another tensor) and operators reading
// only such nodes (lift_fresh_copy of a constant). They need no relation: their own term stands
// for them.
bool InputFree(const ir::Graph& graph, const ir::Node& node, int depth = 0) {
  if (node.kind == ir::NodeKind::kInput) return false;
  const ir::OpInfo* info = InfoOf(node);
  if (info && (info->traits.nondeterministic_init || info->traits.metadata_only)) return true;
  if (depth >= 4) return node.TensorInputs().empty();
  for (TensorRef in : node.TensorInputs()) {
    if (!InputFree(graph, graph.node(in.node), depth + 1)) return false;
  }
  return true;
}

// The D tensors (rank, tensor) an expression reads.
void CollectDLeaves(const RelExpr& expr, std::set<std::pair<int32_t, TensorRef>>* out) {
  ForEachDLeaf(expr, [&](const DTensor& d) { out->insert({d.rank, d.tensor}); });
}

// Plain relations (an S tensor equal to one D tensor, a replica) both ways.
struct PlainRelations {
  std::map<std::pair<int32_t, TensorRef>, std::vector<TensorRef>> s_of;  // D tensor -> S tensors
  std::map<TensorRef, std::set<int32_t>> ranks_of;                       // S tensor -> ranks
};

// Where rank `rank`'s replica of a result left S's computation: the earliest D operator upstream
// of `tensor` whose result no relation names while each input it reads is a replica of an S
// tensor (or depends on no graph input), and where an S operator reading those S tensors has
// replicas on other ranks but none on this one. That is the shape of a rank that computes a
// replicated value differently (one rank's code path, a rank-dependent constant); a D tensor
// that is merely unnamed (its S counterpart was related through other D tensors) is not claimed.
// Empty when there is no such operator.
std::string DDeparture(const ir::Graph& s_graph, const ir::Graph& d_graph, int32_t rank,
                       TensorRef tensor, const std::set<std::pair<int32_t, TensorRef>>& related,
                       const PlainRelations& plain) {
  std::map<TensorRef, std::vector<ir::NodeId>> s_readers;
  for (size_t id = 0; id < s_graph.nodes.size(); ++id) {
    for (TensorRef in : s_graph.nodes[id].TensorInputs()) {
      s_readers[in].push_back(static_cast<ir::NodeId>(id));
    }
  }
  struct Found {
    ir::NodeId d_node;
    ir::NodeId s_node;
  };
  std::optional<Found> earliest;
  std::set<ir::NodeId> seen;
  std::vector<ir::NodeId> stack{tensor.node};
  while (!stack.empty()) {
    ir::NodeId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const ir::Node& node = d_graph.node(id);
    if (node.kind != ir::NodeKind::kOperator || InputFree(d_graph, node)) continue;
    bool named = false;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      named |= related.count({rank, TensorRef{id, static_cast<int32_t>(o)}}) != 0;
    }
    if (named) continue;
    std::set<TensorRef> s_inputs;  // the S tensors its inputs are replicas of
    bool replicas = true;
    for (TensorRef in : node.TensorInputs()) {
      if (InputFree(d_graph, d_graph.node(in.node))) continue;
      auto it = plain.s_of.find({rank, in});
      if (it == plain.s_of.end()) {
        replicas = false;
        stack.push_back(in.node);
        continue;
      }
      s_inputs.insert(it->second.begin(), it->second.end());
    }
    if (!replicas || s_inputs.empty() || (earliest && earliest->d_node < id)) continue;
    // An S operator over those tensors whose replicas lack this rank's.
    for (TensorRef u : s_inputs) {
      auto readers = s_readers.find(u);
      if (readers == s_readers.end()) continue;
      for (ir::NodeId v : readers->second) {
        const ir::Node& s_node = s_graph.node(v);
        for (size_t o = 0; o < s_node.outputs.size(); ++o) {
          auto ranks = plain.ranks_of.find(TensorRef{v, static_cast<int32_t>(o)});
          if (ranks == plain.ranks_of.end() || ranks->second.count(rank)) continue;
          if (!earliest || id < earliest->d_node || v < earliest->s_node) earliest = Found{id, v};
        }
      }
    }
  }
  if (!earliest) return "";
  const ir::Node& node = d_graph.node(earliest->d_node);
  const ir::Node& s_node = s_graph.node(earliest->s_node);
  std::string text = "rank " + std::to_string(rank) + " departs from S at " + node.name + " (" +
                     node.op.ToString() + ")";
  if (!node.source.empty()) text += " at " + node.source.ToString();
  return text + ": its inputs are replicas of S tensors, but where S computes " + s_node.name +
         " (" + s_node.op.ToString() + "), which other ranks replicate, rank " +
         std::to_string(rank) + "'s result equals no S tensor";
}

ir::CollectiveKind CollectiveOf(const ir::Node& node) {
  const ir::OpInfo* info = InfoOf(node);
  return info ? info->traits.collective : ir::CollectiveKind::kNone;
}

// Facts about D computed once: who consumes what, and which collectives of the ranks match.
class DIndex {
 public:
  explicit DIndex(const ir::Program& program) : program_(program) {
    const size_t world = program.ranks.size();
    consumers_.resize(world);
    tensor_inputs_.resize(world);
    collective_.resize(world);
    read_inputs_.resize(world);
    input_free_.resize(world);
    relation_only_.resize(world);
    std::map<std::string, std::vector<std::vector<ir::NodeId>>> sequences;  // group -> rank -> ids
    for (size_t r = 0; r < program.ranks.size(); ++r) {
      const ir::Graph& g = program.ranks[r];
      consumers_[r].resize(g.nodes.size());
      tensor_inputs_[r].resize(g.nodes.size());
      collective_[r].resize(g.nodes.size());
      read_inputs_[r].resize(g.nodes.size());
      input_free_[r].assign(g.nodes.size(), kUnknown);
      relation_only_[r].assign(g.nodes.size(), kUnknown);
      for (size_t id = 0; id < g.nodes.size(); ++id) {
        const ir::Node& node = g.nodes[id];
        std::vector<TensorRef> inputs = node.TensorInputs();
        std::set<ir::NodeId> producers;
        for (TensorRef in : inputs) producers.insert(in.node);
        for (ir::NodeId p : producers) consumers_[r][p].push_back(static_cast<ir::NodeId>(id));
        tensor_inputs_[r][id] = std::move(inputs);
        ir::CollectiveKind kind = CollectiveOf(node);
        collective_[r][id] = kind;
        if (kind == ir::CollectiveKind::kNone || kind == ir::CollectiveKind::kWait) continue;
        std::string group = GroupName(node);
        auto& per_rank = sequences[group];
        per_rank.resize(program.ranks.size());
        per_rank[r].push_back(static_cast<ir::NodeId>(id));
      }
    }
    // The k-th collective of a group on every member rank is one collective call.
    for (const auto& [group, per_rank] : sequences) {
      std::vector<int32_t> members = Members(group);
      for (int32_t r : members) {
        if (r >= static_cast<int32_t>(per_rank.size())) continue;
        for (size_t k = 0; k < per_rank[r].size(); ++k) {
          std::vector<std::pair<int32_t, ir::NodeId>> call;
          for (int32_t g : members) {
            if (g < static_cast<int32_t>(per_rank.size()) && k < per_rank[g].size()) {
              call.emplace_back(g, per_rank[g][k]);
            }
          }
          peers_[{r, per_rank[r][k]}] = std::move(call);
        }
      }
    }
  }

  // Facts about one D node, computed once: each local e-graph that reaches a node asks them again,
  // and a tensor that every layer reads brings one leaf per layer and rank (and their consumers)
  // into every e-graph that reads it.
  //
  // The inputs a D node's lowering reads (collectives: their input).
  const std::vector<TensorRef>& ReadInputs(int32_t rank, ir::NodeId id) const {
    std::optional<std::vector<TensorRef>>& slot = read_inputs_[rank][id];
    if (!slot) {
      slot = Collective(rank, id) != ir::CollectiveKind::kNone
                 ? tensor_inputs_[rank][id]
                 : symbolic::ReadInputs(program_.rank(rank), id, constants_);
    }
    return *slot;
  }
  const std::vector<TensorRef>& TensorInputs(int32_t rank, ir::NodeId id) const {
    return tensor_inputs_[rank][id];
  }
  ir::CollectiveKind Collective(int32_t rank, ir::NodeId id) const { return collective_[rank][id]; }
  // InputFree of the node.
  bool IsInputFree(int32_t rank, ir::NodeId id) const {
    int8_t& slot = input_free_[rank][id];
    if (slot == kUnknown) slot = InputFree(program_.rank(rank), program_.rank(rank).node(id));
    return slot != 0;
  }
  // LowersToRelationOps of the node under `constants` (cached for the spec's constants).
  bool IsRelationOnly(int32_t rank, ir::NodeId id, const ConstantValues* constants) const {
    if (constants != constants_) return LowersToRelationOps(program_.rank(rank), id, constants);
    int8_t& slot = relation_only_[rank][id];
    if (slot == kUnknown) slot = LowersToRelationOps(program_.rank(rank), id, constants);
    return slot != 0;
  }
  void SetConstants(const ConstantValues* constants) { constants_ = constants; }

  const std::vector<ir::NodeId>& Consumers(int32_t rank, ir::NodeId producer) const {
    return consumers_[rank][producer];
  }
  // Members of the call that node `id` of `rank` takes part in, as (rank, node) pairs.
  const std::vector<std::pair<int32_t, ir::NodeId>>* Peers(int32_t rank, ir::NodeId id) const {
    auto it = peers_.find({rank, id});
    return it == peers_.end() ? nullptr : &it->second;
  }
  std::vector<int32_t> Members(const std::string& group) const {
    auto it = program_.groups.find(group);
    if (it != program_.groups.end()) return it->second;
    std::vector<int32_t> all(program_.ranks.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
    return all;
  }
  static std::string GroupName(const ir::Node& node) {
    const ir::OpInfo* info = InfoOf(node);
    if (!info || info->traits.group_arg.empty()) return "";
    ir::BoundArgs args(info->schema, node);
    const ir::Value& v = args[info->traits.group_arg];
    return v.is_string() ? v.as_string() : "";
  }

  // D tensors known to be equal: each was related alone to one S tensor (replicas of one value on
  // several ranks). A relation written through one replica (reshape(x@0)) reaches only that
  // rank's D operators; a local e-graph holding x@0 adds x@1 too, or the other ranks' uses of
  // the value stay out of its neighbourhood and a true relation is reported as missing.
  //
  // `key` was related alone to `s_tensor`: it is a replica of every D tensor related alone to it
  // so far, and (when `member`: the relation was kept) of those related later. The replicas of
  // one S tensor are stored as one group, not as pairs: a tensor every layer reads (a rotary
  // table) is related to one D tensor per layer and rank, and every layer's copy of it in S to
  // all of them, so pairs would grow with the cube of the depth.
  void AddReplica(TensorRef s_tensor, const DKey& key, bool member) {
    auto [it, fresh] = s_groups_.emplace(s_tensor, static_cast<uint32_t>(groups_.size()));
    if (fresh) groups_.emplace_back();
    uint32_t group = it->second;
    if (!member) {
      // A replica of the present members only: a group of its own holding them and the key.
      if (groups_[group].members.empty()) return;
      std::vector<uint32_t> snapshot = groups_[group].members;
      group = static_cast<uint32_t>(groups_.size());
      groups_.emplace_back();
      for (uint32_t m : snapshot) Join(group, m);
    }
    Join(group, ReplicaId(key));
  }

  // When one group spans the component of `key` (every two of its members are replicas: the
  // usual shape), its members in increasing order; nullptr otherwise or without replicas.
  const std::vector<DKey>* ReplicaClique(const DKey& key) const {
    auto it = replica_ids_.find(key);
    if (it == replica_ids_.end()) return nullptr;
    uint32_t root = Root(it->second);
    if (comp_span_[root] == kNoGroup) return nullptr;
    const ReplicaGroup& span = groups_[comp_span_[root]];
    if (span.members.size() != comp_size_[root] || span.members.size() < 2) return nullptr;
    if (span.sorted.size() != span.members.size()) {
      span.sorted.clear();
      for (uint32_t m : span.members) span.sorted.push_back(replica_keys_[m]);
      std::sort(span.sorted.begin(), span.sorted.end());
    }
    return &span.sorted;
  }

  // The replicas of `key` in increasing order (the D tensors sharing a group with it).
  std::vector<DKey> Replicas(const DKey& key) const {
    std::vector<DKey> out;
    auto it = replica_ids_.find(key);
    if (it == replica_ids_.end()) return out;
    for (uint32_t g : key_groups_[it->second]) {
      for (uint32_t m : groups_[g].members) {
        if (m != it->second) out.push_back(replica_keys_[m]);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end(),
                          [](const DKey& a, const DKey& b) { return !(a < b) && !(b < a); }),
              out.end());
    return out;
  }

 private:
  struct ReplicaGroup {
    std::vector<uint32_t> members;     // replica ids, in the order they joined
    mutable std::vector<DKey> sorted;  // their keys sorted (ReplicaClique), rebuilt on growth
  };

  uint32_t ReplicaId(const DKey& key) {
    auto [it, fresh] = replica_ids_.emplace(key, static_cast<uint32_t>(replica_keys_.size()));
    if (fresh) {
      replica_keys_.push_back(key);
      key_groups_.emplace_back();
      comp_parent_.push_back(it->second);
      comp_size_.push_back(1);
      comp_span_.push_back(kNoGroup);
    }
    return it->second;
  }
  uint32_t Root(uint32_t id) const {
    while (comp_parent_[id] != id) id = comp_parent_[id] = comp_parent_[comp_parent_[id]];
    return id;
  }
  // Adds replica `id` to `group` (once) and merges their components.
  void Join(uint32_t group, uint32_t id) {
    std::vector<uint32_t>& groups_of = key_groups_[id];
    if (std::find(groups_of.begin(), groups_of.end(), group) != groups_of.end()) return;
    ReplicaGroup& g = groups_[group];
    uint32_t root = Root(id);
    if (!g.members.empty()) {
      uint32_t other = Root(g.members.front());
      if (other != root) {
        if (comp_size_[other] > comp_size_[root]) std::swap(other, root);
        comp_parent_[other] = root;
        comp_size_[root] += comp_size_[other];
        if (comp_span_[root] == kNoGroup ||
            (comp_span_[other] != kNoGroup && groups_[comp_span_[other]].members.size() >
                                                  groups_[comp_span_[root]].members.size())) {
          comp_span_[root] = comp_span_[other];
        }
      }
    }
    g.members.push_back(id);
    groups_of.push_back(group);
    if (comp_span_[root] == kNoGroup ||
        g.members.size() > groups_[comp_span_[root]].members.size()) {
      comp_span_[root] = group;
    }
  }

  static constexpr uint32_t kNoGroup = std::numeric_limits<uint32_t>::max();
  static constexpr int8_t kUnknown = -1;

  const ir::Program& program_;
  const ConstantValues* constants_ = nullptr;
  // Per rank and node (see ReadInputs).
  std::vector<std::vector<std::vector<TensorRef>>> tensor_inputs_;
  std::vector<std::vector<ir::CollectiveKind>> collective_;
  mutable std::vector<std::vector<std::optional<std::vector<TensorRef>>>> read_inputs_;
  mutable std::vector<std::vector<int8_t>> input_free_;     // kUnknown, 0 or 1
  mutable std::vector<std::vector<int8_t>> relation_only_;  // kUnknown, 0 or 1
  std::map<TensorRef, uint32_t> s_groups_;                  // S tensor -> its group
  std::vector<ReplicaGroup> groups_;
  std::map<DKey, uint32_t> replica_ids_;
  std::vector<DKey> replica_keys_;
  std::vector<std::vector<uint32_t>> key_groups_;  // replica id -> the groups holding it
  // Components of the replica relation (union-find over replica ids; size and widest group at
  // the root).
  mutable std::vector<uint32_t> comp_parent_;
  std::vector<uint32_t> comp_size_;
  std::vector<uint32_t> comp_span_;
  std::vector<std::vector<std::vector<ir::NodeId>>> consumers_;
  std::map<std::pair<int32_t, ir::NodeId>, std::vector<std::pair<int32_t, ir::NodeId>>> peers_;
};

// Lowers one collective given the classes of the call's inputs (one per member, in member
// order) and the position of the calling rank among the members.
std::optional<ClassId> LowerCollective(EGraph& egraph, const ir::Node& node,
                                       const std::vector<ClassId>& member_inputs,
                                       size_t position, const ir::TensorType& out_type) {
  const TensorLanguage& lang = TensorLanguage::Get();
  const ir::OpInfo* info = InfoOf(node);
  if (!info || member_inputs.empty()) return std::nullopt;
  ir::BoundArgs args(info->schema, node);
  std::string reduce = "sum";
  if (!info->traits.reduce_op_arg.empty()) {
    const ir::Value& v = args[info->traits.reduce_op_arg];
    if (v.is_string()) reduce = v.as_string();
  }
  std::transform(reduce.begin(), reduce.end(), reduce.begin(), ::tolower);
  auto reduced = [&]() -> std::optional<ClassId> {
    if (member_inputs.size() == 1) return member_inputs[0];
    OpId op = reduce == "sum" || reduce == "avg" ? lang.sumr
              : reduce == "max"                  ? lang.maxr
              : reduce == "min"                  ? lang.minr
                                                 : lang.opaque;
    if (op == lang.opaque) return std::nullopt;
    ClassId out = egraph.Add(ENode{op, 0, member_inputs});
    if (reduce == "avg") {
      out = egraph.Add(ENode{lang.scale, 0,
                             {out, egraph.Add(lang.Flt(1.0 / member_inputs.size()))}});
    }
    return out;
  };
  switch (info->traits.collective) {
    case ir::CollectiveKind::kAllReduce:
      return reduced();
    case ir::CollectiveKind::kAllGather: {
      if (member_inputs.size() == 1) return member_inputs[0];
      std::vector<ClassId> children{egraph.Add(lang.Num(0))};
      children.insert(children.end(), member_inputs.begin(), member_inputs.end());
      return egraph.Add(ENode{lang.concat, 0, std::move(children)});
    }
    case ir::CollectiveKind::kReduceScatter: {
      auto sum = reduced();
      if (!sum || member_inputs.size() == 1) return sum;
      if (out_type.shape.empty() || !out_type.shape[0].is_static()) return std::nullopt;
      int64_t rows = out_type.shape[0].value();
      int64_t start = rows * static_cast<int64_t>(position);
      return egraph.Add(ENode{lang.slice, 0,
                              {*sum, egraph.Add(lang.Num(0)), egraph.Add(lang.Num(start)),
                               egraph.Add(lang.Num(start + rows))}});
    }
    case ir::CollectiveKind::kBroadcast: {
      int64_t src = args["src"].is_int() ? args["src"].as_int() : 0;
      if (src < 0 || src >= static_cast<int64_t>(member_inputs.size())) return std::nullopt;
      return member_inputs[src];
    }
    case ir::CollectiveKind::kAllToAll: {
      // Equal splits only: member g's input is cut into n row chunks, chunk j goes to member j,
      // so this member receives concat(0, chunk_position(input_g) for every g).
      int64_t n = static_cast<int64_t>(member_inputs.size());
      if (n == 1) return member_inputs[0];
      if (out_type.shape.empty() || !out_type.shape[0].is_static()) return std::nullopt;
      int64_t rows = out_type.shape[0].value();
      if (rows % n != 0) return std::nullopt;
      int64_t chunk = rows / n;
      for (const char* splits : {"output_split_sizes", "input_split_sizes"}) {
        const ir::Value& v = args[splits];
        if (v.is_none()) continue;
        if (!v.is_int_list()) return std::nullopt;
        for (int64_t size : v.as_int_list()) {
          if (size != chunk) return std::nullopt;
        }
      }
      int64_t start = chunk * static_cast<int64_t>(position);
      std::vector<ClassId> children{egraph.Add(lang.Num(0))};
      for (ClassId input : member_inputs) {
        children.push_back(egraph.Add(
            ENode{lang.slice, 0,
                  {input, egraph.Add(lang.Num(0)), egraph.Add(lang.Num(start)),
                   egraph.Add(lang.Num(start + chunk))}}));
      }
      return egraph.Add(ENode{lang.concat, 0, std::move(children)});
    }
    default:
      return std::nullopt;
  }
}

// One local e-graph: S operator, its inputs' relations and the reachable D operators.
class LocalGraph {
 public:
  LocalGraph(const ir::Graph& s_graph, const ir::Program& d_program, const DIndex& d_index,
             const InferenceOptions& options)
      : s_graph_(s_graph),
        d_program_(d_program),
        d_index_(d_index),
        options_(options),
        lang_(TensorLanguage::Get()),
        egraph_(lang_.ops()) {
    TensorAnalysis& analysis = egraph_.AddAnalysis(std::make_unique<TensorAnalysis>(leaves_));
    analysis.set_world_size(d_program.world_size());
    analysis_ = &analysis;
    // Everything built from here on is the local problem's memo key (memo.h).
    if (options.memoize) egraph_.SetTrace(&trace_);
  }

  // The calls that built the e-graph so far (memoize only); stops recording.
  const std::vector<int64_t>& EndTrace() {
    egraph_.SetTrace(nullptr);
    return trace_;
  }

  EGraph& egraph() { return egraph_; }
  const TensorAnalysis& analysis() const { return *analysis_; }
  // Values of graph constants stated by the spec, for lowering S and D nodes that read them.
  void SetConstants(const ConstantValues* constants) { constants_ = constants; }
  const ConstantValues* constants() const { return constants_; }
  // The spec's `rng positional`: random operators lower by their table entry (else unique).
  void SetRngPositional(bool positional) { rng_positional_ = positional; }
  const LeafTable& leaves() const { return leaves_; }

  ClassId SLeaf(TensorRef ref) {
    auto it = s_leaves_.find(ref);
    if (it != s_leaves_.end()) return egraph_.Find(it->second.second);
    TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, ref, s_graph_.type(ref), s_graph_.ValueName(ref)};
    ClassId node_id = egraph_.AddUncanonical(lang_.Tensor(leaves_.Intern(leaf)));
    s_leaves_[ref] = {node_id, egraph_.Find(node_id)};
    return egraph_.Find(node_id);
  }
  bool HasSLeaf(TensorRef ref) const { return s_leaves_.count(ref) > 0; }
  ClassId SLeafNodeId(TensorRef ref) {
    SLeaf(ref);
    return s_leaves_[ref].first;
  }
  // The S leaf's node id, or -1 when it has none yet; adds nothing.
  int64_t SLeafNodeIdIfAny(TensorRef ref) const {
    auto it = s_leaves_.find(ref);
    return it == s_leaves_.end() ? -1 : static_cast<int64_t>(it->second.first);
  }

  ClassId DLeaf(int32_t rank, TensorRef ref, int32_t hop) {
    DKey key{rank, ref};
    auto it = d_leaves_.find(key);
    if (it != d_leaves_.end()) {
      if (hop < it->second.hop) {
        it->second.hop = hop;
        frontier_.push_back(key);
      }
      return egraph_.Find(it->second.cls);
    }
    ClassId cls = NewDLeaf(key, hop);
    // The replicas join the class, each added like this one (with its own replicas), in
    // increasing order.
    if (const std::vector<DKey>* clique = d_index_.ReplicaClique(key)) {
      ReplicaScan scan{*clique, hop, egraph_.InternReason("replica")};
      size_t self = std::lower_bound(clique->begin(), clique->end(), key) - clique->begin();
      AddReplicaClique(cls, self, scan);
    } else {
      std::vector<DKey> replicas = d_index_.Replicas(key);
      if (!replicas.empty()) {
        ReasonId reason = egraph_.InternReason("replica");
        for (const DKey& other : replicas) {
          egraph_.Union(cls, DLeaf(other.rank, other.ref, hop), reason);
        }
      }
    }
    return egraph_.Find(cls);
  }

  ClassId AddRelExpr(const RelExpr& expr) {
    return std::visit(
        [&](const auto& n) -> ClassId {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, DTensor>) {
            return DLeaf(n.rank, n.tensor, 0);
          } else if constexpr (std::is_same_v<T, Concat>) {
            std::vector<ClassId> ch{Num(n.dim)};
            for (const RelExpr& c : n.children) ch.push_back(AddRelExpr(c));
            return egraph_.Add(ENode{lang_.concat, 0, std::move(ch)});
          } else if constexpr (std::is_same_v<T, Slice>) {
            return egraph_.Add(ENode{
                lang_.slice, 0, {AddRelExpr(n.child), Num(n.dim), Num(n.start), Num(n.end)}});
          } else if constexpr (std::is_same_v<T, Sum> || std::is_same_v<T, Max> ||
                               std::is_same_v<T, Min>) {
            OpId op = std::is_same_v<T, Sum> ? lang_.sumr
                      : std::is_same_v<T, Max> ? lang_.maxr
                                               : lang_.minr;
            std::vector<ClassId> ch;
            for (const RelExpr& c : n.children) ch.push_back(AddRelExpr(c));
            if (ch.size() == 1) return ch[0];
            return egraph_.Add(ENode{op, 0, std::move(ch)});
          } else if constexpr (std::is_same_v<T, Scale>) {
            return egraph_.Add(
                ENode{lang_.scale, 0, {AddRelExpr(n.child), egraph_.Add(lang_.Flt(n.factor))}});
          } else if constexpr (std::is_same_v<T, Reshape>) {
            ClassId child = AddRelExpr(n.child);
            std::vector<ClassId> ch{child};
            const auto& type = (*analysis_)[child].type;
            // Resolve a -1 so that equal reshapes hash-cons to one node.
            std::vector<int64_t> shape = n.shape;
            int64_t known = 1, infer_at = -1;
            for (size_t i = 0; i < shape.size(); ++i) {
              if (shape[i] == -1) {
                infer_at = static_cast<int64_t>(i);
              } else {
                known *= shape[i];
              }
            }
            if (infer_at >= 0 && type && ir::IsStatic(type->shape) && known != 0) {
              shape[infer_at] = ir::NumElements(type->shape).value() / known;
            }
            for (int64_t s : shape) ch.push_back(Num(s));
            return egraph_.Add(ENode{lang_.reshape, 0, std::move(ch)});
          } else if constexpr (std::is_same_v<T, Transpose>) {
            return egraph_.Add(
                ENode{lang_.transpose, 0, {AddRelExpr(n.child), Num(n.d0), Num(n.d1)}});
          } else {
            std::vector<ClassId> ch{AddRelExpr(n.child)};
            for (int64_t d : n.perm) ch.push_back(Num(d));
            return egraph_.Add(ENode{lang_.permute, 0, std::move(ch)});
          }
        },
        expr.node().kind);
  }

  // Adds D operators reachable from the D leaves present, within the hop and size limits.
  void ExpandD() {
    // A queue (frontier_head_ is its front): the frontier of a replicated tensor holds one leaf
    // per layer and rank, and erasing at the front would move all of them per step.
    while (frontier_head_ < frontier_.size()) {
      DKey key = frontier_[frontier_head_++];
      if (HopOf(key.rank, key.ref) == 0) AddStructuralProducer(key.rank, key.ref);
      for (ir::NodeId consumer : d_index_.Consumers(key.rank, key.ref.node)) {
        TryAddD(key.rank, consumer);
        if (added_d_.size() >= options_.max_d_nodes) {
          d_limit_hit_ = true;
          return;
        }
      }
    }
  }

  // Limits the D operators ExpandD may add to those on a path from the D tensors present now
  // (the related ones) to the D tensors of `targets`: the producers of the targets, theirs, and
  // so on, stopping at tensors already present (collectives bring their peers' inputs). Called
  // before the targets are added. A walk past max_d_nodes operators stops there: a hint that far
  // from the related tensors is not worth a narrow search.
  void RestrictToPathsTo(const std::vector<std::pair<TensorRef, RelExpr>>& targets) {
    allowed_.emplace();
    std::vector<DKey> stack;
    std::function<void(const RelExpr&)> leaves_of = [&](const RelExpr& e) {
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, DTensor>) {
              stack.push_back(DKey{n.rank, n.tensor});
            } else if constexpr (std::is_same_v<T, Concat> || std::is_same_v<T, Sum> ||
                                 std::is_same_v<T, Max> || std::is_same_v<T, Min>) {
              for (const RelExpr& c : n.children) leaves_of(c);
            } else {
              leaves_of(n.child);
            }
          },
          e.node().kind);
    };
    for (const auto& target : targets) leaves_of(target.second);
    std::set<DKey> seen;
    while (!stack.empty() && allowed_->size() < options_.max_d_nodes) {
      DKey key = stack.back();
      stack.pop_back();
      if (d_leaves_.count(key) || !seen.insert(key).second) continue;
      const ir::Node& producer = d_program_.rank(key.rank).node(key.ref.node);
      if (producer.kind != ir::NodeKind::kOperator) continue;
      std::vector<std::pair<int32_t, ir::NodeId>> members = {{key.rank, key.ref.node}};
      ir::CollectiveKind kind = d_index_.Collective(key.rank, key.ref.node);
      if (kind != ir::CollectiveKind::kNone && kind != ir::CollectiveKind::kWait) {
        if (const auto* peers = d_index_.Peers(key.rank, key.ref.node)) members = *peers;
      }
      for (const auto& [rank, id] : members) {
        if (!allowed_->insert({rank, id}).second) continue;
        for (TensorRef in : d_index_.ReadInputs(rank, id)) stack.push_back(DKey{rank, in});
      }
    }
  }

  bool d_limit_hit() const { return d_limit_hit_; }
  size_t NumAddedD() const { return added_d_.size(); }
  // Whether the hop limit left some reachable D operator out.
  bool truncated() const { return truncated_; }
  std::vector<std::string> Candidates() const {
    std::vector<std::string> out;
    for (const auto& [rank, id] : added_d_) {
      const ir::Node& n = d_program_.rank(rank).node(id);
      if (n.kind != ir::NodeKind::kOperator) continue;
      out.push_back(n.name + "@" + std::to_string(rank) + " (" + n.op.ToString() + ")");
    }
    return out;
  }

  // The class of an S tensor produced by an input-free S node (factories): its own term.
  std::optional<ClassId> LowerInputFreeS(ir::NodeId id) {
    // Input-free producers of its inputs first (a constant's expand read by a div): the whole
    // input-free chain is then one term, congruent with D's same chain.
    for (TensorRef in : s_graph_.node(id).TensorInputs()) {
      const ir::Node& producer = s_graph_.node(in.node);
      if (!HasSLeaf(in) && producer.kind == ir::NodeKind::kOperator &&
          InputFree(s_graph_, producer)) {
        LowerInputFreeS(in.node);
      }
    }
    LoweredNode lowered = LowerNode(
        egraph_, *analysis_, s_graph_, id, [&](TensorRef r) { return SLeaf(r); },
        "S:" + std::to_string(id), constants_, rng_positional_);
    for (size_t i = 0; i < lowered.outputs.size(); ++i) {
      if (lowered.outputs[i]) {
        egraph_.Union(SLeaf(TensorRef{id, static_cast<int32_t>(i)}), *lowered.outputs[i],
                      egraph_.InternReason("lowering"));
      }
    }
    return lowered.outputs.empty() ? std::nullopt : lowered.outputs[0];
  }

  ClassId Num(int64_t v) { return egraph_.Add(lang_.Num(v)); }

 private:
  int32_t HopOf(int32_t rank, TensorRef ref) const {
    auto it = d_leaves_.find({rank, ref});
    return it == d_leaves_.end() ? -1 : it->second.hop;
  }

  // Makes the inputs of a D node present: inputs produced by input-free nodes are added on the
  // spot; returns the largest hop of the inputs, or nullopt when one is not reachable.
  std::optional<int32_t> InputsReady(int32_t rank, ir::NodeId id) {
    int32_t hop = 0;
    for (TensorRef in : d_index_.ReadInputs(rank, id)) {
      int32_t h = HopOf(rank, in);
      if (h < 0) {
        const ir::Node& producer = d_program_.rank(rank).node(in.node);
        if (!d_index_.IsInputFree(rank, in.node) || !producer.outputs[in.output].type) {
          return std::nullopt;
        }
        AddD(rank, in.node, 0);
        h = HopOf(rank, in);
        if (h < 0) return std::nullopt;
      }
      hop = std::max(hop, h);
    }
    return hop;
  }

  void TryAddD(int32_t rank, ir::NodeId id) {
    if (added_d_.count({rank, id})) return;
    if (allowed_ && !allowed_->count({rank, id})) return;
    ir::CollectiveKind kind = d_index_.Collective(rank, id);
    bool collective = kind != ir::CollectiveKind::kNone && kind != ir::CollectiveKind::kWait;
    if (collective) {
      const auto* peers = d_index_.Peers(rank, id);
      if (!peers) return;
      int32_t hop = 0;
      for (const auto& [g, gid] : *peers) {
        auto h = InputsReady(g, gid);
        if (!h) return;
        hop = std::max(hop, *h);
      }
      for (const auto& [g, gid] : *peers) AddD(g, gid, hop);
      return;
    }
    auto hop = InputsReady(rank, id);
    if (!hop) return;
    AddD(rank, id, *hop);
  }

  // A lowering that only rearranges: every output is one of the inputs (clone, copy, a full
  // slice_scatter) or a class of relation ops.
  // Relations often name a piece of a D tensor (a split output, a view) rather than the tensor:
  // D operators reading the whole (slice_scatter of the fused QKV) need the whole present. So a
  // structural producer (only relation ops: views, slices, splits) of a related D tensor is
  // added, and its inputs are related D tensors too (hop 0): its equalities are D's own.
  void AddStructuralProducer(int32_t rank, TensorRef ref) {
    if (added_d_.count({rank, ref.node})) return;
    const ir::Graph& g = d_program_.rank(rank);
    const ir::Node& node = g.node(ref.node);
    if (node.kind != ir::NodeKind::kOperator) return;
    const ir::CollectiveKind kind = d_index_.Collective(rank, ref.node);
    if (kind == ir::CollectiveKind::kWait || kind == ir::CollectiveKind::kAllGather) {
      // A wait passes its input on and a gather holds every member's input whole (a concat):
      // those inputs are pieces of the related tensor by D's own equalities (hop 0), so D
      // operators reading one rank's piece join the neighbourhood (under sequence parallelism a
      // replicated layer applied to the local sequence shard, the same shard that is gathered
      // for the column-parallel layers). A reduction's inputs are partial sums, not pieces.
      std::vector<std::pair<int32_t, ir::NodeId>> members = {{rank, ref.node}};
      if (kind == ir::CollectiveKind::kAllGather) {
        const auto* peers = d_index_.Peers(rank, ref.node);
        if (!peers) return;
        members = *peers;
      }
      for (const auto& [pg, pid] : members) {
        if (d_index_.TensorInputs(pg, pid).empty()) return;
      }
      for (const auto& [pg, pid] : members) DLeaf(pg, d_index_.TensorInputs(pg, pid)[0], 0);
      AddD(rank, ref.node, 0);
      return;
    }
    if (kind != ir::CollectiveKind::kNone) return;
    if (!d_index_.IsRelationOnly(rank, ref.node, constants_)) return;
    for (TensorRef in : d_index_.TensorInputs(rank, ref.node)) DLeaf(rank, in, 0);
    AddD(rank, ref.node, 0);
  }

  void AddD(int32_t rank, ir::NodeId id, int32_t input_hop) {
    if (!added_d_.insert({rank, id}).second) return;
    const ir::Graph& g = d_program_.rank(rank);
    const ir::Node& node = g.node(id);
    ReasonId reason = egraph_.InternReason("D:" + node.name + "@" + std::to_string(rank));
    ir::CollectiveKind kind = d_index_.Collective(rank, id);
    std::vector<std::optional<ClassId>> outputs(node.outputs.size());
    bool structural = true;
    if (kind == ir::CollectiveKind::kWait) {
      const std::vector<TensorRef>& ins = d_index_.TensorInputs(rank, id);
      if (!ins.empty()) outputs[0] = DLeaf(rank, ins[0], input_hop);
    } else if (kind != ir::CollectiveKind::kNone) {
      const auto* peers = d_index_.Peers(rank, id);
      std::vector<ClassId> member_inputs;
      size_t position = 0;
      for (size_t k = 0; peers && k < peers->size(); ++k) {
        const auto& [pg, pid] = (*peers)[k];
        if (pg == rank) position = k;
        const std::vector<TensorRef>& ins = d_index_.TensorInputs(pg, pid);
        if (ins.empty()) return;
        member_inputs.push_back(DLeaf(pg, ins[0], HopOf(pg, ins[0])));
      }
      if (node.outputs[0].type) {
        outputs[0] = LowerCollective(egraph_, node, member_inputs, position, *node.outputs[0].type);
      }
    } else {
      // Input-free producers (constants and their expands) are lowered too, whatever their hop:
      // their terms are what makes S's and D's uses of the same constant congruent.
      for (TensorRef in : d_index_.TensorInputs(rank, id)) {
        const ir::Node& producer = g.node(in.node);
        if (HopOf(rank, in) < 0 && producer.kind == ir::NodeKind::kOperator &&
            d_index_.IsInputFree(rank, in.node) && producer.outputs[in.output].type) {
          AddD(rank, in.node, 0);
        }
      }
      std::set<ClassId> input_classes;
      LoweredNode lowered = LowerNode(
          egraph_, *analysis_, g, id,
          [&](TensorRef r) {
            ClassId c = DLeaf(rank, r, std::max(HopOf(rank, r), 0));
            input_classes.insert(c);
            return c;
          },
          "D" + std::to_string(rank) + ":" + std::to_string(id), constants_, rng_positional_);
      outputs = lowered.outputs;
      std::set<ClassId> canonical;
      for (ClassId c : input_classes) canonical.insert(egraph_.Find(c));
      structural = IsRelationOnly(egraph_, lowered, canonical);
    }
    int32_t hop = input_hop + (structural ? 0 : 1);
    if (hop > options_.compute_hops) {
      // Still record the output leaves' equalities, but do not expand past them.
      hop = options_.compute_hops + 1;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i] || !node.outputs[i].type) continue;
      TensorRef out{id, static_cast<int32_t>(i)};
      ClassId leaf = DLeafNoExpand(rank, out, hop);
      egraph_.Union(leaf, *outputs[i], reason);
    }
  }

  // A new D leaf: its class, to be expanded from the frontier.
  ClassId NewDLeaf(const DKey& key, int32_t hop) {
    const ir::Graph& g = d_program_.rank(key.rank);
    TensorLeaf leaf{TensorLeaf::Side::kDist, key.rank, key.ref, g.type(key.ref),
                    g.ValueName(key.ref)};
    ClassId cls = egraph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
    d_leaves_[key] = {cls, hop};
    frontier_.push_back(key);
    return cls;
  }

  // DLeaf's replica walk over a component where all members are replicas of each other: new leaf
  // `cls` (members[self]) visits every other member in order, adding the absent ones (each
  // visiting all members in turn), lowering the hop of present ones, and uniting their classes
  // with its own. Done literally that is quadratic in the members (about 1000 for a rotary table
  // at 126 layers, in each layer's e-graphs); the walk skips only steps that change nothing, so
  // the e-graph gets the same nodes, unions and frontier in the same order. `settled` is a prefix
  // of members that are present at hop <= `hop` in one class: once `cls` is in that class, a
  // step to any of them changes nothing, and since classes only merge and hops only fall, the
  // prefix stays settled.
  struct ReplicaScan {
    const std::vector<DKey>& members;
    int32_t hop;
    ReasonId reason;
    size_t settled = 0;
    ClassId first = kNoClass;  // class of members[0] once settled > 0
  };
  void Settle(ReplicaScan& scan) {
    while (scan.settled < scan.members.size()) {
      auto it = d_leaves_.find(scan.members[scan.settled]);
      if (it == d_leaves_.end() || it->second.hop > scan.hop) return;
      if (scan.settled == 0) {
        scan.first = it->second.cls;
      } else if (egraph_.Find(it->second.cls) != egraph_.Find(scan.first)) {
        return;
      }
      ++scan.settled;
    }
  }
  void AddReplicaClique(ClassId cls, size_t self, ReplicaScan& scan) {
    for (size_t i = 0; i < scan.members.size();) {
      if (i == self) {
        ++i;
        continue;
      }
      Settle(scan);
      if (i < scan.settled && egraph_.Find(cls) == egraph_.Find(scan.first)) {
        i = scan.settled;
        continue;
      }
      const DKey& other = scan.members[i];
      ClassId other_cls;
      auto it = d_leaves_.find(other);
      if (it != d_leaves_.end()) {
        if (scan.hop < it->second.hop) {
          it->second.hop = scan.hop;
          frontier_.push_back(other);
        }
        other_cls = it->second.cls;
      } else {
        other_cls = NewDLeaf(other, scan.hop);
        AddReplicaClique(other_cls, i, scan);
      }
      egraph_.Union(cls, egraph_.Find(other_cls), scan.reason);
      ++i;
    }
  }

  // A D leaf whose consumers are explored only while within the hop limit.
  ClassId DLeafNoExpand(int32_t rank, TensorRef ref, int32_t hop) {
    if (hop > options_.compute_hops) {
      // The neighbourhood is cut here: a deeper search may reach more.
      if (!d_index_.Consumers(rank, ref.node).empty()) truncated_ = true;
      DKey key{rank, ref};
      auto it = d_leaves_.find(key);
      if (it != d_leaves_.end()) return egraph_.Find(it->second.cls);
      const ir::Graph& g = d_program_.rank(rank);
      TensorLeaf leaf{TensorLeaf::Side::kDist, rank, ref, g.type(ref), g.ValueName(ref)};
      ClassId cls = egraph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
      d_leaves_[key] = {cls, hop};
      return cls;
    }
    return DLeaf(rank, ref, hop);
  }

  struct DLeafState {
    ClassId cls;
    int32_t hop;
  };

  const ir::Graph& s_graph_;
  const ir::Program& d_program_;
  const DIndex& d_index_;
  const InferenceOptions& options_;
  const TensorLanguage& lang_;
  LeafTable leaves_;
  EGraph egraph_;
  TensorAnalysis* analysis_ = nullptr;
  std::vector<int64_t> trace_;
  std::map<TensorRef, std::pair<ClassId, ClassId>> s_leaves_;  // ref -> (node id, class)
  std::map<DKey, DLeafState> d_leaves_;
  std::vector<DKey> frontier_;
  size_t frontier_head_ = 0;
  std::set<std::pair<int32_t, ir::NodeId>> added_d_;
  // Set by RestrictToPathsTo: the only D operators ExpandD may add.
  std::optional<std::set<std::pair<int32_t, ir::NodeId>>> allowed_;
  bool d_limit_hit_ = false;
  bool truncated_ = false;
  const ConstantValues* constants_ = nullptr;
  bool rng_positional_ = false;
};

// Cost of clean terms: one per relation op or D tensor; constants are free; anything else is
// not allowed in a relation.
double CleanNodeCost(const LeafTable& leaves, const ENode& node) {
  const TensorLanguage& lang = TensorLanguage::Get();
  if (node.op == lang.num || node.op == lang.flt) return 0.0;
  if (node.op == lang.tensor) {
    return leaves.at(node.payload).side == TensorLeaf::Side::kDist ? 1.0 : kInfiniteCost;
  }
  return lang.is_relation(node.op) ? 1.0 : kInfiniteCost;
}

// Converts an extracted clean term into a RelExpr.
std::optional<RelExpr> ToRelExpr(const RecExpr& expr, uint32_t index, const LeafTable& leaves) {
  const TensorLanguage& lang = TensorLanguage::Get();
  const ENode& n = expr.nodes[index];
  auto num = [&](size_t i) { return expr.nodes[n.children[i]].payload; };
  auto child = [&](size_t i) { return ToRelExpr(expr, n.children[i], leaves); };
  auto children_from = [&](size_t first) -> std::optional<std::vector<RelExpr>> {
    std::vector<RelExpr> out;
    for (size_t i = first; i < n.children.size(); ++i) {
      auto c = child(i);
      if (!c) return std::nullopt;
      out.push_back(*c);
    }
    return out;
  };
  if (n.op == lang.tensor) {
    const TensorLeaf& leaf = leaves.at(n.payload);
    return RelExpr::Tensor(leaf.rank, leaf.ref, leaf.name);
  }
  if (n.op == lang.concat) {
    auto ch = children_from(1);
    if (!ch) return std::nullopt;
    return RelExpr::Concat(num(0), std::move(*ch));
  }
  if (n.op == lang.slice) {
    auto c = child(0);
    if (!c) return std::nullopt;
    return RelExpr::Slice(*c, num(1), num(2), num(3));
  }
  if (n.op == lang.sumr || n.op == lang.maxr || n.op == lang.minr) {
    auto ch = children_from(0);
    if (!ch) return std::nullopt;
    if (n.op == lang.sumr) return RelExpr::Sum(std::move(*ch));
    if (n.op == lang.maxr) return RelExpr::Max(std::move(*ch));
    return RelExpr::Min(std::move(*ch));
  }
  if (n.op == lang.scale) {
    auto c = child(0);
    if (!c) return std::nullopt;
    return RelExpr::Scale(TensorLanguage::FltValue(expr.nodes[n.children[1]].payload), *c);
  }
  if (n.op == lang.reshape) {
    auto c = child(0);
    if (!c) return std::nullopt;
    std::vector<int64_t> shape;
    for (size_t i = 1; i < n.children.size(); ++i) shape.push_back(num(i));
    return RelExpr::Reshape(*c, std::move(shape));
  }
  if (n.op == lang.transpose) {
    auto c = child(0);
    if (!c) return std::nullopt;
    return RelExpr::Transpose(*c, num(1), num(2));
  }
  if (n.op == lang.permute) {
    auto c = child(0);
    if (!c) return std::nullopt;
    std::vector<int64_t> perm;
    for (size_t i = 1; i < n.children.size(); ++i) perm.push_back(num(i));
    return RelExpr::Permute(*c, std::move(perm));
  }
  return std::nullopt;
}

// The S nodes the expected tensors depend on (through tensor inputs), as a mask. Assumed and
// cut tensors are leaves: the node producing one is needed only when another of its outputs is,
// and nothing upstream of a leaf is (the region a spec checks ends at its cuts).
std::vector<bool> NeededNodes(const ir::Graph& s_graph, const SpecResult& spec) {
  std::vector<bool> needed(s_graph.nodes.size(), false);
  std::vector<TensorRef> stack;
  for (const Relation& r : spec.expected_outputs) stack.push_back(r.s_tensor);
  std::set<TensorRef> leaves;
  for (const Relation& r : spec.assumed) leaves.insert(r.s_tensor);
  for (const CutPoint& c : spec.cuts) leaves.insert(c.s_tensor);
  while (!stack.empty()) {
    TensorRef ref = stack.back();
    stack.pop_back();
    if (leaves.count(ref) || needed[ref.node]) continue;
    const ir::NodeId id = ref.node;
    needed[id] = true;
    // An input-free node's value reads none of its inputs' values (ones_like(loss)): they are
    // not needed for it.
    if (InputFree(s_graph, s_graph.node(id))) continue;
    for (TensorRef in : s_graph.node(id).TensorInputs()) stack.push_back(in);
  }
  return needed;
}

}  // namespace

std::string_view NodeStatusName(NodeStatus status) {
  switch (status) {
    case NodeStatus::kInferred:
      return "inferred";
    case NodeStatus::kNoRelation:
      return "no-relation";
    case NodeStatus::kLimitHit:
      return "limit-hit";
    case NodeStatus::kBlocked:
      return "blocked";
    case NodeStatus::kConflict:
      return "conflict";
  }
  return "?";
}

std::string_view HintUseName(HintUse use) {
  switch (use) {
    case HintUse::kNone:
      return "none";
    case HintUse::kRelated:
      return "related";
    case HintUse::kFellBack:
      return "fell-back";
  }
  return "?";
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kRefines:
      return "REFINES";
    case Verdict::kViolation:
      return "VIOLATION";
    case Verdict::kUnknown:
      return "UNKNOWN";
  }
  return "?";
}

std::string_view UnknownCauseName(UnknownCause cause) {
  switch (cause) {
    case UnknownCause::kNone:
      return "none";
    case UnknownCause::kLimit:
      return "limit";
    case UnknownCause::kNoRelation:
      return "no-relation";
    case UnknownCause::kConflict:
      return "conflict";
    case UnknownCause::kOpaque:
      return "opaque";
  }
  return "?";
}

void ApplyNumericEvidence(VerifyResult* result, NumericEvidence evidence) {
  if (result->verdict == Verdict::kRefines) return;
  std::string numerically = "; numerically (" + evidence.how + ") ";
  if (!evidence.error.empty()) {
    result->summary += "; no numeric evidence: " + evidence.error;
  } else if (!evidence.counterexamples.empty()) {
    // A counterexample is a difference of values, whatever stopped the proof.
    result->verdict = Verdict::kViolation;
    result->summary += numerically + evidence.counterexamples.front();
    if (evidence.counterexamples.size() > 1) {
      result->summary += " (+" + std::to_string(evidence.counterexamples.size() - 1) + " more)";
    }
  } else if (!evidence.marginal.empty()) {
    result->summary += numerically + evidence.marginal.front() +
                       ": beyond the rounding model's tolerance in at most " +
                       std::to_string(kMarginalElements) + " elements by less than " +
                       std::to_string(static_cast<int>(kDecisiveExcess)) +
                       "x: not evidence (try more seeds with graphguard check)";
  } else {
    std::string counts = std::to_string(evidence.outputs_agreeing) + " of " +
                         std::to_string(evidence.outputs_checked) +
                         " expected output relations hold";
    if (evidence.outputs_unevaluated > 0) {
      result->summary += numerically + counts + ", " +
                         std::to_string(evidence.outputs_unevaluated) + " could not be evaluated";
    } else if (result->unknown_cause == UnknownCause::kNoRelation) {
      result->summary += numerically + counts + ": a lemma is likely missing";
    } else {
      result->summary += numerically + counts;
    }
  }
  result->evidence = std::move(evidence);
}

void AddPremises(VerifyResult* result, const std::vector<Premise>& premises) {
  std::set<Premise> all(result->premises.begin(), result->premises.end());
  all.insert(premises.begin(), premises.end());
  result->premises.assign(all.begin(), all.end());
}

VerifyResult Verify(const ir::Graph& s_graph, const ir::Program& d_program, const SpecResult& spec,
                    const std::vector<Rewrite>& rules, const InferenceOptions& options) {
  auto start = Clock::now();
  VerifyResult result;
  result.hints_given = options.hints != nullptr ? options.hints->count() : 0;
  DIndex d_index(d_program);
  d_index.SetConstants(&spec.constants);
  const bool rng_positional = spec.rng_model == "positional";
  std::map<TensorRef, std::vector<InferredRelation>> known;
  // The expressions of each `known` list, for constant-time duplicate checks (a list can hold one
  // relation per layer and rank).
  std::map<TensorRef, std::unordered_set<RelExpr, RelExprHash>> known_exprs;
  auto remember = [&](const Relation& r, std::vector<std::string> proof) {
    auto& list = known[r.s_tensor];
    auto& exprs = known_exprs[r.s_tensor];
    if (exprs.count(r.expr)) return;
    bool keep = options.max_relations == 0 || list.size() < options.max_relations;
    if (const auto* d = std::get_if<DTensor>(&r.expr.node().kind)) {
      d_index.AddReplica(r.s_tensor, DKey{d->rank, d->tensor}, keep);
    }
    if (keep) {
      exprs.insert(r.expr);
      list.push_back({r, std::move(proof)});
    }
  };
  for (const Relation& r : spec.inputs) remember(r, {"spec: " + r.origin});
  for (const Relation& r : spec.assumed) remember(r, {"assumed: " + r.origin});

  std::vector<bool> needed = NeededNodes(s_graph, spec);
  // Cuts without a relation: a leaf nothing is known of. An operator of the region that reads
  // one is blocked, and the verdict names the cut (it is never REFINES).
  std::map<TensorRef, std::string> unrelated_cuts;
  for (const CutPoint& c : spec.cuts) {
    if (!c.related) unrelated_cuts.emplace(c.s_tensor, c.origin);
  }
  std::map<ir::NodeId, TensorRef> blocked_by_cut;  // S operator -> the unrelated cut it reads
  // Which outputs of each S node matter: consumed by a needed node, or expected.
  std::set<TensorRef> wanted;
  for (size_t id = 0; id < s_graph.nodes.size(); ++id) {
    if (!needed[id] || InputFree(s_graph, s_graph.nodes[id])) continue;
    for (TensorRef in : s_graph.nodes[id].TensorInputs()) wanted.insert(in);
  }
  for (const Relation& r : spec.expected_outputs) wanted.insert(r.s_tensor);

  // The class of an S tensor an operator reads: its leaf, united with every known relation (or
  // with its own term when an input-free node produced it). Inputs read without a relation are
  // collected in *missing; every read input is recorded as used.
  std::set<TensorRef> used;
  for (const Relation& r : spec.expected_outputs) used.insert(r.s_tensor);
  // S operators that saturated without a relation of their own although every input they read
  // was related: their lowered term is carried into their consumers' e-graphs (S's own
  // computation, composed; sound), so only the first tensor of a chain that D really computes
  // needs an equal. Such a failure is `covered` once a consumer that inlined it is related.
  std::set<ir::NodeId> inlinable;
  std::set<ir::NodeId> covered;
  std::set<ir::NodeId>* inlined_now = nullptr;
  int32_t inline_depth = 0;
  bool defining_related = false;  // lowering a related input's own S definition
  std::function<ClassId(LocalGraph&, TensorRef, std::vector<TensorRef>*)> input_class;

  // Lowers S node `sid` into `local` over its inputs' classes.
  auto lower_s = [&](LocalGraph& local, ir::NodeId sid, std::vector<TensorRef>* missing) {
    const ir::Node& n = s_graph.node(sid);
    LoweredNode l;
    l.outputs.assign(n.outputs.size(), std::nullopt);
    l.opaque.assign(n.outputs.size(), false);
    ir::CollectiveKind kind = CollectiveOf(n);
    if (kind != ir::CollectiveKind::kNone) {
      std::vector<TensorRef> ins = n.TensorInputs();
      if (!ins.empty() && n.outputs[0].type) {
        ClassId in = input_class(local, ins[0], missing);
        l.outputs[0] = kind == ir::CollectiveKind::kWait
                           ? std::optional<ClassId>(in)
                           : LowerCollective(local.egraph(), n, {in}, 0, *n.outputs[0].type);
      }
      return l;
    }
    return LowerNode(
        local.egraph(), local.analysis(), s_graph, sid,
        [&](TensorRef r) { return input_class(local, r, missing); }, "S:" + std::to_string(sid),
        &spec.constants, rng_positional);
  };

  input_class = [&](LocalGraph& local, TensorRef in, std::vector<TensorRef>* missing) {
    used.insert(in);
    bool fresh = !local.HasSLeaf(in);
    ClassId leaf = local.SLeaf(in);
    if (!fresh) return leaf;
    auto it = known.find(in);
    if (it != known.end() && !it->second.empty()) {
      ReasonId reason = local.egraph().InternReason("relation of " + s_graph.ValueName(in));
      for (const InferredRelation& rel : it->second) {
        local.egraph().Union(leaf, local.AddRelExpr(rel.relation.expr), reason);
      }
      // Read by an S operator carried into a consumer: S's own definition of this related tensor
      // joins too (one level; its inputs only through their own relations), so that a lemma
      // spanning several S operators sees their structure (the vocabulary-parallel target logit:
      // a mask (t < a) | (t >= b) over the targets t), and the D tensors related to those inputs
      // bring the D operators computing the same thing into the neighbourhood. Sound: it is S's
      // own computation; an input without a relation (or input-free producer) skips it.
      const ir::Node& producer = s_graph.node(in.node);
      if (inline_depth > 0 && !defining_related && producer.kind == ir::NodeKind::kOperator &&
          !InputFree(s_graph, producer)) {
        bool inputs_related = true;
        for (TensorRef r : producer.TensorInputs()) {
          auto k = known.find(r);
          bool related = local.HasSLeaf(r) || (k != known.end() && !k->second.empty()) ||
                         InputFree(s_graph, s_graph.node(r.node));
          inputs_related = inputs_related && related;
        }
        if (inputs_related) {
          defining_related = true;
          std::vector<TensorRef> unrelated;
          LoweredNode l = lower_s(local, in.node, &unrelated);
          defining_related = false;
          if (unrelated.empty() && in.output < static_cast<int32_t>(l.outputs.size()) &&
              l.outputs[in.output]) {
            local.egraph().Union(leaf, *l.outputs[in.output],
                                 local.egraph().InternReason("S:" + producer.name));
          }
        }
      }
    } else if (InputFree(s_graph, s_graph.node(in.node))) {
      local.LowerInputFreeS(in.node);
    } else if (inlinable.count(in.node) && !defining_related &&
               inline_depth < options.max_inline_depth) {
      ++inline_depth;
      LoweredNode l = lower_s(local, in.node, missing);
      --inline_depth;
      ReasonId reason = local.egraph().InternReason("S:" + s_graph.node(in.node).name);
      for (size_t i = 0; i < l.outputs.size(); ++i) {
        if (l.outputs[i]) {
          local.egraph().Union(local.SLeaf(TensorRef{in.node, static_cast<int32_t>(i)}),
                               *l.outputs[i], reason);
        }
      }
      if (inlined_now) inlined_now->insert(in.node);
    } else {
      missing->push_back(in);
    }
    return local.egraph().Find(leaf);
  };

  LocalProblemCache memo_cache;
  // Debugging aid for lemma authors: GG_DUMP_EGRAPH=<S node name> (read once per run).
  const char* dump_egraph = std::getenv("GG_DUMP_EGRAPH");
  for (size_t idx = 0; idx < s_graph.nodes.size(); ++idx) {
    ir::NodeId id = static_cast<ir::NodeId>(idx);
    const ir::Node& node = s_graph.node(id);
    if (!needed[id] || node.kind != ir::NodeKind::kOperator || InputFree(s_graph, node)) continue;
    std::vector<size_t> outs;
    bool all_assumed = true;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      TensorRef ref{id, static_cast<int32_t>(i)};
      if (!node.outputs[i].type || !wanted.count(ref)) continue;
      outs.push_back(i);
      if (!known.count(ref)) all_assumed = false;
    }
    if (outs.empty() || all_assumed) continue;
    if (options.progress) options.progress(id);

    // One search of the operator's local e-graph. `hinted` (the hint expressions of the wanted
    // outputs) narrows the D neighbourhood to the D operators between the related D tensors and
    // the hinted ones, with no depth limit but the hint budget; otherwise the neighbourhood is
    // every D operator within `hops` computing operators of the related tensors. Either way the
    // relation kept is the one the e-graph proves: a hint is only where the search looks.
    struct Attempt {
      NodeOutcome outcome;
      bool blocked = false;
      bool truncated = false;
      size_t hints_proved = 0;
    };
    auto search = [&](int32_t hops, const std::vector<std::pair<TensorRef, RelExpr>>* hinted) {
      Attempt a;
      NodeOutcome& outcome = a.outcome;
      InferenceOptions attempt = options;
      attempt.compute_hops = hinted ? options.max_compute_hops : hops;
      outcome.s_node = id;
      outcome.hops = attempt.compute_hops;
      LocalGraph local(s_graph, d_program, d_index, attempt);
      local.SetConstants(&spec.constants);
      local.SetRngPositional(rng_positional);
      std::vector<TensorRef> missing;
      // The S operator itself (S collectives run on one rank: identity or a size-1 reduction).
      std::set<ir::NodeId> inlined_here;
      inlined_now = &inlined_here;
      LoweredNode self = lower_s(local, id, &missing);
      inlined_now = nullptr;
      std::vector<std::optional<ClassId>> lowered = self.outputs;
      std::vector<bool> opaque = self.opaque;
      if (!missing.empty()) {
        outcome.status = NodeStatus::kBlocked;
        outcome.detail = "input " + s_graph.ValueName(missing.front()) + " has no relation";
        for (TensorRef m : missing) {
          auto cut = unrelated_cuts.find(m);
          if (cut == unrelated_cuts.end()) continue;
          outcome.detail =
              "input " + s_graph.ValueName(m) + " is cut without a relation (" + cut->second + ")";
          blocked_by_cut.emplace(id, m);
          break;
        }
        a.blocked = true;
        return a;
      }
      ReasonId s_reason = local.egraph().InternReason("S:" + node.name);
      for (size_t i : outs) {
        if (lowered[i]) {
          local.egraph().Union(local.SLeaf(TensorRef{id, static_cast<int32_t>(i)}), *lowered[i],
                               s_reason);
        }
      }
      std::vector<std::pair<ClassId, ClassId>> hint_classes;  // (S output leaf, hint)
      if (hinted) {
        local.RestrictToPathsTo(*hinted);
        for (const auto& [ref, expr] : *hinted) {
          hint_classes.emplace_back(local.SLeaf(ref), local.AddRelExpr(expr));
        }
      }
      local.ExpandD();
      local.egraph().Rebuild();
      outcome.candidates = local.Candidates();

      auto goal = [&](const EGraph&) {
        for (size_t i : outs) {
          if (!local.analysis()[local.SLeaf(TensorRef{id, static_cast<int32_t>(i)})].clean) {
            return false;
          }
        }
        return true;
      };
      const bool goal_reached = goal(local.egraph());
      // The key: everything the saturation and extraction below can observe (memo.h).
      // GG_DUMP_EGRAPH's operator is always saturated, so that its e-graph can be printed.
      const bool dumping = dump_egraph != nullptr && node.name == dump_egraph;
      const bool memoize = options.memoize && !dumping;
      LocalProblemKey key;
      const LocalSolution* solution = nullptr;
      const std::vector<int64_t>* trace = options.memoize ? &local.EndTrace() : nullptr;
      if (memoize) {
        key.Add(hinted ? 1 : 0);
        key.AddAll(*trace);
        key.Add(static_cast<int64_t>(local.egraph().NumReasons()));
        key.AddLeaves(local.leaves());
        for (size_t i : outs) {
          TensorRef ref{id, static_cast<int32_t>(i)};
          key.Add(static_cast<int64_t>(i));
          key.Add(local.SLeafNodeIdIfAny(ref));
          key.AddType(*node.outputs[i].type);
        }
        for (const auto& [leaf, hint] : hint_classes) {
          key.Add(leaf);
          key.Add(hint);
        }
        solution = memo_cache.Find(key);
      }
      LocalSolution solved;
      if (solution != nullptr) {
        ++result.local_reused;
      } else {
        ++result.local_solved;
        const size_t leaves_at_key = local.leaves().size();
        solved.first_late_reason = static_cast<ReasonId>(local.egraph().NumReasons());
        RunReport report;
        if (!goal_reached) {
          Runner runner(local.egraph(), rules, hinted ? options.hint_limits : options.per_node);
          runner.WithGoal(goal);
          report = runner.Run();
        } else {
          report.stop = StopReason::kGoalReached;
        }
        for (const auto& [leaf, hint] : hint_classes) {
          solved.hints_proved += local.egraph().Find(leaf) == local.egraph().Find(hint);
        }
        solved.stop = report.stop;
        // Debugging aid for lemma authors: GG_DUMP_EGRAPH=<S node name> prints that operator's
        // saturated local e-graph (every search of it) to stderr.
        if (dumping) std::fprintf(stderr, "%s\n", local.egraph().Dump().c_str());
        solved.iterations = report.iterations;
        solved.egraph_nodes = local.egraph().NumNodes();
        solved.egraph_classes = local.egraph().NumClasses();

        Extractor extractor(local.egraph(), AdditiveCost([&](const ENode& n) {
                              return CleanNodeCost(local.leaves(), n);
                            }));
        // Where the clock stopped the search is not a function of the key.
        bool cacheable = report.stop != StopReason::kTimeLimit;
        for (size_t i : outs) {
          TensorRef ref{id, static_cast<int32_t>(i)};
          ClassId cls = local.SLeaf(ref);
          LocalSolution::Output& out = solved.outputs.emplace_back();
          const TensorFacts& facts = local.analysis()[cls];
          if (facts.conflict) {
            out.conflict = facts.conflict_reason;
            break;
          }
          auto best = extractor.Extract(cls);
          if (!best) continue;
          out.found = true;
          ClassId leaf_node = local.SLeafNodeId(ref);
          // The relations and their terms' nodes, in order; their proofs come from one walk of
          // the explanation forest (a class can hold one D tensor per layer and rank).
          std::vector<ClassId> term_nodes;
          auto record = [&](const RecExpr& term) {
            if (!ToRelExpr(term, term.root(), local.leaves())) return;
            for (const ENode& n : term.nodes) {
              if (n.op == TensorLanguage::Get().tensor &&
                  n.payload >= static_cast<int64_t>(leaves_at_key)) {
                cacheable = false;  // a leaf the key does not describe
              }
            }
            out.terms.push_back(term);
            term_nodes.push_back(local.egraph().AddExprUncanonical(term));
          };
          record(best->expr);
          // Every D tensor in the class is a relation too (replicas on other ranks).
          for (const ENode& n : local.egraph().Nodes(cls)) {
            if (n.op != TensorLanguage::Get().tensor) continue;
            if (local.leaves().at(n.payload).side != TensorLeaf::Side::kDist) continue;
            RecExpr single;
            single.Add(n);
            record(single);
          }
          for (auto& runs : local.egraph().ExplainRuns(leaf_node, term_nodes)) {
            out.proofs.push_back(runs ? std::move(*runs) : std::vector<ProofRun>{});
          }
        }
        for (size_t r = solved.first_late_reason; r < local.egraph().NumReasons(); ++r) {
          solved.late_reasons.push_back(local.egraph().ReasonName(static_cast<ReasonId>(r)));
        }
        if (memoize && cacheable) {
          solution = &memo_cache.Insert(key, std::move(solved));
        } else {
          solution = &solved;
        }
      }

      // The outcome, from this problem's solution or an identical one's: its terms read against
      // this e-graph's leaves name this problem's D tensors, its proofs this e-graph's reasons.
      outcome.stop = solution->stop;
      outcome.iterations = solution->iterations;
      outcome.egraph_nodes = solution->egraph_nodes;
      outcome.egraph_classes = solution->egraph_classes;
      a.hints_proved = solution->hints_proved;
      bool all_found = true;
      std::string missing_detail;
      for (size_t k = 0; k < solution->outputs.size(); ++k) {
        const LocalSolution::Output& out = solution->outputs[k];
        TensorRef ref{id, static_cast<int32_t>(outs[k])};
        if (out.conflict) {
          outcome.status = NodeStatus::kConflict;
          outcome.detail = s_graph.ValueName(ref) + ": " + *out.conflict;
          all_found = false;
          break;
        }
        if (!out.found) {
          all_found = false;
          missing_detail = "no clean expression over D for " + s_graph.ValueName(ref);
          if (opaque[outs[k]]) {
            missing_detail +=
                " (operator " + node.op.ToString() + " has no lowering into the tensor language)";
          }
          continue;
        }
        for (size_t t = 0; t < out.terms.size(); ++t) {
          std::optional<RelExpr> rel = ToRelExpr(out.terms[t], out.terms[t].root(), local.leaves());
          remember(Relation{ref, *rel, "inferred"},
                   InstantiateProof(out.proofs[t], local.egraph(), *solution));
        }
      }
      RunReport report;
      report.stop = solution->stop;
      if (outcome.status != NodeStatus::kConflict) {
        if (all_found) {
          outcome.status = NodeStatus::kInferred;
        } else {
          bool limit = report.stop == StopReason::kIterationLimit ||
                       report.stop == StopReason::kNodeLimit ||
                       report.stop == StopReason::kTimeLimit || local.d_limit_hit();
          bool no_semantics = false;
          for (size_t i : outs) no_semantics = no_semantics || opaque[i];
          outcome.status = limit || no_semantics ? NodeStatus::kLimitHit : NodeStatus::kNoRelation;
          outcome.detail = missing_detail;
          const ir::OpInfo* info = InfoOf(node);
          if (no_semantics && info != nullptr && info->traits.random && !rng_positional) {
            outcome.detail = "random operator " + node.op.ToString() +
                             ": the spec states no RNG model, so its draws in S and in D are "
                             "unrelated and nothing is proved through it; if every random "
                             "operator of S and D draws the same value for the same element of "
                             "the same logical tensor (a counter-based generator with offsets), "
                             "state `rng positional` in the spec (docs/relations.md)";
          }
          if (limit) {
            outcome.detail += local.d_limit_hit() ? "; stopped: D operator limit"
                                                  : "; stopped: " +
                                                        std::string(StopReasonName(report.stop));
          }
        }
      }
      if (outcome.status == NodeStatus::kInferred) {
        covered.insert(inlined_here.begin(), inlined_here.end());
      }
      a.truncated = local.truncated();
      return a;
    };

    NodeOutcome outcome;
    auto node_start = Clock::now();
    bool blocked = false;
    size_t attempts = 0, work_nodes = 0, work_classes = 0, work_iterations = 0;
    auto count_work = [&](const NodeOutcome& o) {
      ++attempts;
      work_nodes += o.egraph_nodes;
      work_classes += o.egraph_classes;
      work_iterations += o.iterations;
    };
    // Hints first: when every wanted output has one, a search over the D operators leading to
    // the hinted tensors. Whatever it does not prove is left to the full search below.
    HintUse hint_use = HintUse::kNone;
    std::vector<std::pair<TensorRef, RelExpr>> hinted;
    if (options.hints != nullptr) {
      for (size_t i : outs) {
        TensorRef ref{id, static_cast<int32_t>(i)};
        auto it = options.hints->by_tensor.find(ref);
        if (it == options.hints->by_tensor.end() || it->second.empty()) {
          hinted.clear();
          break;
        }
        for (const RelExpr& expr : it->second) hinted.emplace_back(ref, expr);
      }
    }
    bool settled = false;
    if (!hinted.empty()) {
      Attempt a = search(0, &hinted);
      outcome = std::move(a.outcome);
      if (a.blocked) {
        // Blocked before any search: the full search would be too, and says so the same way.
        blocked = true;
        settled = true;
        outcome.hops = options.compute_hops;
      } else {
        count_work(outcome);
        result.hints_proved += a.hints_proved;
        settled = outcome.status == NodeStatus::kInferred;
        hint_use = settled ? HintUse::kRelated : HintUse::kFellBack;
      }
    }

    // Iterative deepening over the D neighbourhood: start with few computing D operators beyond
    // the related tensors and double the depth while the operator stays unrelated and the
    // neighbourhood still grows. A relation found shallow stays small; the depth limit is explicit
    // and reported when it stops the search.
    for (int32_t hops = std::max<int32_t>(options.compute_hops, 0); !settled;
         hops = std::max(1, hops * 2)) {
      Attempt a = search(hops, nullptr);
      outcome = std::move(a.outcome);
      if (a.blocked) {
        blocked = true;
        break;
      }
      count_work(outcome);
      if (outcome.status != NodeStatus::kNoRelation) break;
      // The whole reachable neighbourhood was searched: a real dead end under the catalogue.
      if (!a.truncated) break;
      if (hops >= options.max_compute_hops) {
        outcome.status = NodeStatus::kLimitHit;
        outcome.detail += "; stopped: D neighbourhood depth limit (" +
                          std::to_string(options.max_compute_hops) + " computing operators)";
        break;
      }
    }
    if (blocked) {
      result.nodes.push_back(std::move(outcome));
      continue;
    }
    outcome.hint = hint_use;
    outcome.attempts = attempts;
    outcome.work_nodes = work_nodes;
    outcome.work_classes = work_classes;
    outcome.work_iterations = work_iterations;
    if (hint_use == HintUse::kRelated) ++result.hints_related;
    if (hint_use == HintUse::kFellBack) ++result.hints_fell_back;
    if (outcome.status == NodeStatus::kNoRelation) inlinable.insert(id);
    outcome.seconds = std::chrono::duration<double>(Clock::now() - node_start).count();
    result.max_egraph_nodes = std::max(result.max_egraph_nodes, outcome.egraph_nodes);
    result.total_egraph_nodes += outcome.egraph_nodes;
    result.nodes.push_back(std::move(outcome));
  }

  // Expected output relations: each must be in the class of its S tensor.
  std::optional<std::set<std::pair<int32_t, TensorRef>>> related_d;  // built on the first failure
  PlainRelations plain;
  for (const Relation& expected : spec.expected_outputs) {
    OutputCheck check;
    check.expected = expected;
    auto it = known.find(expected.s_tensor);
    if (it == known.end() || it->second.empty()) {
      check.detail = "no relation was inferred for " + s_graph.ValueName(expected.s_tensor);
      result.outputs.push_back(std::move(check));
      continue;
    }
    InferenceOptions check_options = options;
    check_options.memoize = false;
    LocalGraph local(s_graph, d_program, d_index, check_options);
    ClassId leaf = local.SLeaf(expected.s_tensor);
    for (const InferredRelation& rel : it->second) {
      if (rel.relation.expr == expected.expr) {
        check.implied = true;
        check.proof = rel.proof;
        break;
      }
      local.egraph().Union(leaf, local.AddRelExpr(rel.relation.expr),
                           local.egraph().InternReason("inferred relation"));
    }
    if (!check.implied) {
      ClassId target = local.AddRelExpr(expected.expr);
      // D's own equalities between the inferred and the expected D tensors (an all_to_all, a
      // gather between them) come from the D operators around both.
      local.SetConstants(&spec.constants);
      local.SetRngPositional(rng_positional);
      local.ExpandD();
      local.egraph().Rebuild();
      auto same = [&](const EGraph& g) { return g.Find(leaf) == g.Find(target); };
      RunReport report;
      if (!same(local.egraph())) {
        Runner runner(local.egraph(), rules, options.per_node);
        runner.WithGoal(same);
        report = runner.Run();
      }
      check.implied = same(local.egraph());
      if (!check.implied) {
        check.detail = "inferred " + RelationToString(it->second.front().relation, s_graph) +
                       ", which the lemmas do not show equal to the expectation (" +
                       std::string(StopReasonName(report.stop)) + ")";
        if (report.stop != StopReason::kSaturated) check.detail += " [limit]";
        // An expected D tensor no relation names: say where its rank left S's computation.
        if (!related_d) {
          related_d.emplace();
          for (const auto& [ref, rels] : known) {
            for (const InferredRelation& rel : rels) {
              CollectDLeaves(rel.relation.expr, &*related_d);
              if (const auto* d = std::get_if<DTensor>(&rel.relation.expr.node().kind)) {
                plain.s_of[{d->rank, d->tensor}].push_back(ref);
                plain.ranks_of[ref].insert(d->rank);
              }
            }
          }
        }
        std::set<std::pair<int32_t, TensorRef>> expected_leaves;
        CollectDLeaves(expected.expr, &expected_leaves);
        for (const auto& [rank, tensor] : expected_leaves) {
          if (related_d->count({rank, tensor})) continue;
          std::string departure =
              DDeparture(s_graph, d_program.rank(rank), rank, tensor, *related_d, plain);
          if (departure.empty()) continue;
          check.detail += "; " + departure;
          break;
        }
      }
    }
    result.outputs.push_back(std::move(check));
  }

  // Verdict: the first failing S operator (topological order) decides; then the outputs.
  // Only failures something reads count: an unspecified buffer a kernel overwrites (vLLM's
  // `output` arguments) is never read, so nothing is owed for it.
  for (size_t i = 0; i < result.nodes.size() && !result.first_failure; ++i) {
    const NodeOutcome& n = result.nodes[i];
    if (n.status == NodeStatus::kInferred) continue;
    // Blocked operators are downstream of a failure reported at its own operator, except those
    // that read a cut without a relation: the region's checked tensors need the cut there.
    if (n.status == NodeStatus::kBlocked && !blocked_by_cut.count(n.s_node)) continue;
    if (covered.count(n.s_node)) continue;  // carried into a consumer that D does compute
    for (size_t o = 0; o < s_graph.node(n.s_node).outputs.size(); ++o) {
      if (used.count(TensorRef{n.s_node, static_cast<int32_t>(o)})) {
        result.first_failure = i;
        break;
      }
    }
  }
  if (result.first_failure) {
    const NodeOutcome& f = result.nodes[*result.first_failure];
    const ir::Node& n = s_graph.node(f.s_node);
    std::string where = n.name + " (" + n.op.ToString() + ")";
    if (!n.source.empty()) where += " at " + n.source.ToString();
    result.verdict = Verdict::kUnknown;
    if (f.status == NodeStatus::kBlocked) {
      const TensorRef cut = blocked_by_cut.at(f.s_node);
      result.unknown_cause = UnknownCause::kNoRelation;
      result.summary = "S operator " + where + " reads " + s_graph.ValueName(cut) +
                       ", which the spec cuts without a relation (" + unrelated_cuts.at(cut) +
                       "): the checked tensors depend on it; state its relation (cut " +
                       s_graph.ValueName(cut) + " = RULE) or check a region that does not read it";
    } else if (f.status == NodeStatus::kLimitHit && n.kind == ir::NodeKind::kOperator &&
               InfoOf(n) == nullptr) {
      result.unknown_cause = UnknownCause::kOpaque;
      result.summary = "S operator " + where +
                       " is unknown to GraphGuard (loaded opaque from its annotation): " +
                       f.detail +
                       "; it is equal only by congruence (the same operator and arguments on "
                       "equal inputs); add it to the registry and the lowering to prove through it";
    } else if (f.status == NodeStatus::kLimitHit) {
      result.unknown_cause = UnknownCause::kLimit;
      result.summary = "could not relate " + where + ": " + f.detail;
    } else if (f.status == NodeStatus::kConflict) {
      result.unknown_cause = UnknownCause::kConflict;
      result.summary = "S operator " + where + ": " + f.detail;
    } else {
      result.unknown_cause = UnknownCause::kNoRelation;
      result.summary = "the lemmas relate no D expression to S operator " + where + ": " +
                       f.detail + " (S and D differ there, or a lemma is missing)";
    }
  } else {
    result.verdict = Verdict::kRefines;
    for (const OutputCheck& c : result.outputs) {
      if (c.implied) continue;
      bool limit = c.detail.find("[limit]") != std::string::npos;
      result.verdict = Verdict::kUnknown;
      result.unknown_cause = limit ? UnknownCause::kLimit : UnknownCause::kNoRelation;
      result.summary = "expected " + RelationToString(c.expected, s_graph) + " but " + c.detail;
      break;
    }
    if (result.verdict == Verdict::kRefines) {
      result.summary = "every expected output relation holds (" +
                       std::to_string(result.outputs.size()) + " checked, " +
                       std::to_string(result.nodes.size()) + " S operators related)";
    }
  }
  for (const auto& [ref, rels] : known) result.relations[s_graph.ValueName(ref)] = rels;
  AddPremises(&result, spec.premises);
  // Index ids proved non-negative only from the integer inputs' assumed non-negativity.
  AddPremises(&result, IndexDomainPremises(s_graph, "S", &spec.constants));
  for (int32_t r = 0; r < d_program.world_size(); ++r) {
    const std::string where = "D rank " + std::to_string(r);
    AddPremises(&result, IndexDomainPremises(d_program.rank(r), where, &spec.constants));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace gg::symbolic
