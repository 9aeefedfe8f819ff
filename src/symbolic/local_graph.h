// LocalGraph: the local e-graph of one S operator in relation inference (inference.h): the
// relations known for its inputs, the operator lowered, and the D operators reachable from the
// related D tensors (structural ones freely, computing ones up to a hop limit). DIndex: what
// inference knows of D once per run (consumers, matching collectives, replicas of one value).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/program.h"
#include "symbolic/egraph.h"
#include "symbolic/inference.h"
#include "symbolic/lowering.h"
#include "symbolic/relation.h"
#include "symbolic/tensor_lang.h"

namespace gg::symbolic {

using ir::TensorRef;

struct DKey {
  int32_t rank;
  TensorRef ref;
  friend bool operator<(const DKey& a, const DKey& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.ref < b.ref;
  }
};

// The registry entry of an operator node (nullptr for inputs and unknown operators).
const ir::OpInfo* InfoOf(const ir::Node& node);

// Nodes whose value depends on no graph input's value: factories, constants, buffers with
// unspecified contents (empty_like reads only its input's shape), metadata-only factories
// (zeros_like, new_zeros, ones_like: a constant shaped like another tensor) and operators reading
// only such nodes (lift_fresh_copy of a constant, a causal mask from iota compares). They need
// no relation: their own term stands for them. The producers are followed kInputFreeDepth
// operators back (past that, a node counts as input-free only when it reads nothing).
inline constexpr int kInputFreeDepth = 16;
bool InputFree(const ir::Graph& graph, const ir::Node& node);

ir::CollectiveKind CollectiveOf(const ir::Node& node);

// Facts about D computed once: who consumes what, and which collectives of the ranks match.
class DIndex {
 public:
  explicit DIndex(const ir::Program& program) : program_(program) {
    const size_t world = program.ranks.size();
    consumers_.resize(world);
    canonical_.resize(world);
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
      canonical_[r] = CommonSubexpressions(g);
      for (size_t id = 0; id < g.nodes.size(); ++id) {
        const ir::Node& node = g.nodes[id];
        std::vector<TensorRef> inputs = node.TensorInputs();
        for (TensorRef& in : inputs) in = Canonical(static_cast<int32_t>(r), in);
        tensor_inputs_[r][id] = inputs;
        // A repeated computation is reached through its representative only.
        if (canonical_[r][id] != static_cast<ir::NodeId>(id)) continue;
        std::set<ir::NodeId> producers;
        for (TensorRef in : inputs) producers.insert(in.node);
        for (ir::NodeId p : producers) consumers_[r][p].push_back(static_cast<ir::NodeId>(id));
        ir::CollectiveKind kind = CollectiveOf(node);
        collective_[r][id] = kind;
        if (kind == ir::CollectiveKind::kNone || kind == ir::CollectiveKind::kWait ||
            ir::IsPointToPoint(kind)) {
          continue;
        }
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
    // A transfer is a call of two members: the send and the receive that gets its tensor.
    for (const ir::Transfer& t : program.transfers) {
      std::vector<std::pair<int32_t, ir::NodeId>> call = {{t.src, t.send}, {t.dst, t.recv}};
      peers_[{t.src, t.send}] = call;
      peers_[{t.dst, t.recv}] = std::move(call);
    }
    AddCollectiveReplicas();
  }

  // Common subexpressions of D: an operator of a rank that computes what an earlier one of that
  // rank computes (the same deterministic, non-collective operator with the same arguments over
  // the same inputs, up to this equivalence) is represented by the earlier one. Leaves, inputs
  // and consumers are given in representatives, so a value every layer recomputes (the unsqueeze
  // of a rotary table) enters a local e-graph once per rank, not once per layer and rank, and
  // relations name the representative. Sound: the two compute one value.
  TensorRef Canonical(int32_t rank, TensorRef ref) const {
    return TensorRef{canonical_[rank][ref.node], ref.output};
  }
  DKey Canonical(const DKey& key) const { return DKey{key.rank, Canonical(key.rank, key.ref)}; }
  // Per node of `graph`, its representative (itself when no earlier node computes the same).
  static std::vector<ir::NodeId> CommonSubexpressions(const ir::Graph& graph);

  // Facts about one D node, computed once: each local e-graph that reaches a node asks them again,
  // and a tensor that every layer reads brings one leaf per layer and rank (and their consumers)
  // into every e-graph that reads it.
  //
  // The inputs a D node's lowering reads (collectives: their input; a receive reads nothing of
  // its own rank: its value is the tensor its peer sends, SentTensor).
  const std::vector<TensorRef>& ReadInputs(int32_t rank, ir::NodeId id) const;
  // A send or receive node's transfer: the sending rank and the tensor it sends, and the
  // receiving rank and the output holding the received value; nullopt for other nodes.
  struct TransferEnds {
    DKey sent;
    DKey received;
  };
  std::optional<TransferEnds> Transfer(int32_t rank, ir::NodeId id) const;
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
  void AddReplica(TensorRef s_tensor, const DKey& key, bool member);

  // `key` is the piece at `region` (per dim its offset, then per dim its size) of a concat
  // related to `s_tensor`: a replica of the pieces at the same region of the S tensor's other
  // concats (S == concat(0, a, b) == concat(0, c, d) with a and c alike in shape gives a == c:
  // the data-parallel replicas of a tensor-parallel shard on a 2-D mesh).
  void AddPieceReplica(TensorRef s_tensor, const std::vector<int64_t>& region, const DKey& key,
                       bool member);

  // Once the input relations' replicas are known, D tensors that the same deterministic
  // operators compute from replicas on different ranks are replicas too (value numbering across
  // ranks): on a 2-D mesh, dp replica 1's activations are replica 0's. Runs once, and only when
  // some piece replica exists (a mesh of two or more axes; elsewhere the relations inference
  // finds relate the replicas, and the index stays as it was).
  void AddComputedReplicas();

  // When one group spans the component of `key` (every two of its members are replicas: the
  // usual shape), its members in increasing order; nullptr otherwise or without replicas.
  const std::vector<DKey>* ReplicaClique(const DKey& key) const;

  // The replicas of `key` in increasing order (the D tensors sharing a group with it).
  std::vector<DKey> Replicas(const DKey& key) const;

 private:
  struct ReplicaGroup {
    std::vector<uint32_t> members;     // replica ids, in the order they joined
    mutable std::vector<DKey> sorted;  // their keys sorted (ReplicaClique), rebuilt on growth
  };

  uint32_t ReplicaId(const DKey& key);
  void AddToGroup(uint32_t group, const DKey& key, bool member);
  // The members of one all-reduce, all-gather or broadcast call receive one value: their outputs
  // are replicas (on a 2-D mesh, a relation found through the all-reduce of one data-parallel
  // replica then reaches the other's).
  void AddCollectiveReplicas();
  uint32_t Root(uint32_t id) const {
    while (comp_parent_[id] != id) id = comp_parent_[id] = comp_parent_[comp_parent_[id]];
    return id;
  }
  // Adds replica `id` to `group` (once) and merges their components.
  void Join(uint32_t group, uint32_t id);

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
  std::map<std::pair<TensorRef, std::vector<int64_t>>, uint32_t> piece_groups_;  // (S, region)
  bool computed_replicas_done_ = false;
  std::vector<ReplicaGroup> groups_;
  std::map<DKey, uint32_t> replica_ids_;
  std::vector<DKey> replica_keys_;
  std::vector<std::vector<uint32_t>> key_groups_;  // replica id -> the groups holding it
  // Components of the replica relation (union-find over replica ids; size and widest group at
  // the root).
  mutable std::vector<uint32_t> comp_parent_;
  std::vector<uint32_t> comp_size_;
  std::vector<uint32_t> comp_span_;
  std::vector<std::vector<std::vector<ir::NodeId>>> consumers_;  // of representatives
  std::vector<std::vector<ir::NodeId>> canonical_;               // rank -> node -> representative
  std::map<std::pair<int32_t, ir::NodeId>, std::vector<std::pair<int32_t, ir::NodeId>>> peers_;
};
// Adds relation expression `expr` to `egraph` (a -1 in a reshape resolved from the child's type
// in `analysis`), each D tensor's class given by `leaf`.
ClassId AddRelExprTo(EGraph& egraph, const TensorAnalysis& analysis, const RelExpr& expr,
                     const std::function<ClassId(const DTensor&)>& leaf);

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

  ClassId DLeaf(int32_t rank, TensorRef ref, int32_t hop);

  ClassId AddRelExpr(const RelExpr& expr);

  // Adds D operators reachable from the D leaves present, within the hop and size limits.
  void ExpandD();

  // Adds the producers of the D tensors `from`, theirs, and so on, `depth` operators back (a
  // collective with its peers; within max_d_nodes). The output check's second try: two D tensors
  // can be equal by what computes them, not by what reads them (the all-reduces of two
  // data-parallel replicas over their tensor-parallel groups sum replicas of one value).
  void ExpandProducers(const std::vector<DKey>& from, int depth);

  // Limits the D operators ExpandD may add to those on a path between the D tensors present now
  // (the related ones) and the D tensors of `targets`: the producers of the targets, theirs, and
  // so on, stopping at tensors already present (collectives bring their peers' inputs); and the
  // producers of related tensors computed from a target, and their input-free producers (zeros).
  // Called before the targets are added. A walk past max_d_nodes operators stops there: a hint
  // that far from the related tensors is not worth a narrow search.
  void RestrictToPathsTo(const std::vector<std::pair<TensorRef, RelExpr>>& targets);

  bool d_limit_hit() const { return d_limit_hit_; }
  size_t NumAddedD() const { return added_d_.size(); }
  // Whether the hop limit left some reachable D operator out.
  bool truncated() const { return truncated_; }
  std::vector<std::string> Candidates() const;

  // The class of an S tensor produced by an input-free S node (factories): its own term.
  std::optional<ClassId> LowerInputFreeS(ir::NodeId id);

  ClassId Num(int64_t v) { return egraph_.Add(lang_.Num(v)); }

 private:
  int32_t HopOf(int32_t rank, TensorRef ref) const {
    auto it = d_leaves_.find({rank, ref});
    return it == d_leaves_.end() ? -1 : it->second.hop;
  }

  // Makes the inputs of a D node present: inputs produced by input-free nodes are added on the
  // spot; returns the largest hop of the inputs, or nullopt when one is not reachable.
  std::optional<int32_t> InputsReady(int32_t rank, ir::NodeId id);
  // Whether `ref` is a graph input of D or input-free, or only rearranges such tensors (views,
  // slices, concatenations: relation ops) within a few operators: a parameter (its flattened
  // view, its shard padded with zero rows) that a packing operator reads beside a related tensor
  // (FSDP2's flat all-gather input concatenates every parameter of a module group).
  bool IsInputView(int32_t rank, TensorRef ref, int depth = 4) const;

  void TryAddD(int32_t rank, ir::NodeId id);

  // A lowering that only rearranges: every output is one of the inputs (clone, copy, a full
  // slice_scatter) or a class of relation ops.
  // Relations often name a piece of a D tensor (a split output, a view) rather than the tensor:
  // D operators reading the whole (slice_scatter of the fused QKV) need the whole present. So a
  // structural producer (only relation ops: views, slices, splits) of a related D tensor is
  // added, and its inputs are related D tensors too (hop 0): its equalities are D's own.
  void AddStructuralProducer(int32_t rank, TensorRef ref);
  // masked_fill(constant, m, v): an additive mask, known finite where its constant and v are.
  bool IsConstantFill(int32_t rank, const ir::Node& node) const;
  // Marks the leaf of `ref`, the output of such a fill, finite (TensorLeaf::finite) when it is.
  void MarkFiniteFill(int32_t rank, TensorRef ref, const ir::Node& node);

  void AddD(int32_t rank, ir::NodeId id, int32_t input_hop);

  // A new D leaf: its class, to be expanded from the frontier.
  ClassId NewDLeaf(const DKey& key, int32_t hop);

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
  void Settle(ReplicaScan& scan);
  void AddReplicaClique(ClassId cls, size_t self, ReplicaScan& scan);

  // A D leaf whose consumers are explored only while within the hop limit.
  ClassId DLeafNoExpand(int32_t rank, TensorRef ref, int32_t hop);

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

}  // namespace gg::symbolic
