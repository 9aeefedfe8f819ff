#include "symbolic/local_graph.h"

#include <algorithm>
#include <functional>
#include <span>
#include <unordered_map>

#include "frontend/p2p.h"
#include "symbolic/index_domain.h"
#include "symbolic/lemma_conditions.h"

namespace gg::symbolic {

const ir::OpInfo* InfoOf(const ir::Node& node) {
  if (node.kind != ir::NodeKind::kOperator) return nullptr;
  return ir::OpRegistry::Default().Find(node.op);
}

// Nodes whose value depends on no graph input's value: factories, constants, buffers with
// unspecified contents (empty_like reads only its input's shape), metadata-only factories
// (zeros_like, new_zeros, ones_like: a constant shaped like another tensor) and operators reading
// only such nodes (lift_fresh_copy of a constant). They need no relation: their own term stands
// for them.
namespace {

// InputFree with the answers of nodes met so far (a mask's iota is read by several compares).
bool InputFreeMemo(const ir::Graph& graph, const ir::Node& node, int depth,
                   std::unordered_map<const ir::Node*, bool>& memo) {
  if (node.kind == ir::NodeKind::kInput) return false;
  const ir::OpInfo* info = InfoOf(node);
  if (info && (info->traits.nondeterministic_init || info->traits.metadata_only)) return true;
  // a received value is the peer's tensor, whatever buffer it was received into
  if (info && info->traits.collective == ir::CollectiveKind::kRecv) return false;
  if (depth >= kInputFreeDepth) return node.TensorInputs().empty();
  if (auto it = memo.find(&node); it != memo.end()) return it->second;
  bool free = true;
  for (TensorRef in : node.TensorInputs()) {
    if (!InputFreeMemo(graph, graph.node(in.node), depth + 1, memo)) {
      free = false;
      break;
    }
  }
  memo.emplace(&node, free);
  return free;
}

}  // namespace

bool InputFree(const ir::Graph& graph, const ir::Node& node) {
  std::unordered_map<const ir::Node*, bool> memo;
  return InputFreeMemo(graph, node, 0, memo);
}

ir::CollectiveKind CollectiveOf(const ir::Node& node) {
  const ir::OpInfo* info = InfoOf(node);
  return info ? info->traits.collective : ir::CollectiveKind::kNone;
}

namespace {

// A node may stand for an equal earlier one when its value is a function of its arguments alone:
// a known operator that draws no random numbers, has defined contents and is no collective (a
// collective's value depends on its peers, and pairing follows the call order).
bool Mergeable(const ir::Node& node) {
  const ir::OpInfo* info = InfoOf(node);
  if (!info) return false;
  const ir::OpTraits& t = info->traits;
  return !t.random && !t.nondeterministic_init && !t.custom &&
         t.collective == ir::CollectiveKind::kNone;
}

void HashCombine(size_t* seed, size_t v) {
  *seed ^= v + 0x9e3779b97f4a7c15ULL + (*seed << 6) + (*seed >> 2);
}

// A node's tensor arguments are compared by a number per producer node: its representative
// within one rank (CommonSubexpressions), or its value number across ranks (ComputedReplicas).
using NodeNumbers = std::vector<ir::NodeId>;

size_t HashValue(const ir::Value& v, const NodeNumbers& number) {
  size_t h = v.storage().index();
  if (v.is_tensor()) {
    HashCombine(&h, static_cast<size_t>(number[v.as_tensor().node]));
    HashCombine(&h, static_cast<size_t>(v.as_tensor().output));
  } else if (v.is_list()) {
    for (const ir::Value& e : v.as_list()) HashCombine(&h, HashValue(e, number));
  } else if (v.is_int()) {
    HashCombine(&h, std::hash<int64_t>()(v.as_int()));
  } else if (v.is_string()) {
    HashCombine(&h, std::hash<std::string>()(v.as_string()));
  }
  return h;  // other kinds: equal ones share the bucket, SameValue tells them apart
}

bool SameValue(const ir::Value& a, const ir::Value& b, const NodeNumbers& number_a,
               const NodeNumbers& number_b) {
  if (a.is_tensor() && b.is_tensor()) {
    return number_a[a.as_tensor().node] == number_b[b.as_tensor().node] &&
           a.as_tensor().output == b.as_tensor().output;
  }
  if (a.is_list() && b.is_list()) {
    const auto &x = a.as_list(), &y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!SameValue(x[i], y[i], number_a, number_b)) return false;
    }
    return true;
  }
  return a == b;  // a NaN constant equals nothing: never merged
}

bool SameComputation(const ir::Node& a, const ir::Node& b, const NodeNumbers& number_a,
                     const NodeNumbers& number_b) {
  if (a.op != b.op || a.functionalized != b.functionalized || a.args.size() != b.args.size() ||
      a.kwargs.size() != b.kwargs.size() || a.outputs.size() != b.outputs.size()) {
    return false;
  }
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (!SameValue(a.args[i], b.args[i], number_a, number_b)) return false;
  }
  for (size_t i = 0; i < a.kwargs.size(); ++i) {
    if (a.kwargs[i].name != b.kwargs[i].name ||
        !SameValue(a.kwargs[i].value, b.kwargs[i].value, number_a, number_b)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if (a.outputs[i].type != b.outputs[i].type) return false;
  }
  return true;
}

size_t HashComputation(const ir::Node& node, const NodeNumbers& number) {
  size_t h = std::hash<std::string>()(node.op.ToString());
  for (const ir::Value& v : node.args) HashCombine(&h, HashValue(v, number));
  for (const ir::NamedArg& a : node.kwargs) HashCombine(&h, HashValue(a.value, number));
  return h;
}

}  // namespace

std::vector<ir::NodeId> DIndex::CommonSubexpressions(const ir::Graph& graph) {
  std::vector<ir::NodeId> canonical(graph.nodes.size());
  std::unordered_map<size_t, std::vector<ir::NodeId>> buckets;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    canonical[id] = static_cast<ir::NodeId>(id);
    const ir::Node& node = graph.nodes[id];
    if (!Mergeable(node)) continue;
    std::vector<ir::NodeId>& bucket = buckets[HashComputation(node, canonical)];
    for (ir::NodeId earlier : bucket) {
      if (SameComputation(graph.nodes[earlier], node, canonical, canonical)) {
        canonical[id] = earlier;
        break;
      }
    }
    if (canonical[id] == static_cast<ir::NodeId>(id)) bucket.push_back(canonical[id]);
  }
  return canonical;
}

std::optional<DIndex::TransferEnds> DIndex::Transfer(int32_t rank, ir::NodeId id) const {
  if (!ir::IsPointToPoint(Collective(rank, id))) return std::nullopt;
  const ir::Transfer* t = program_.TransferOf(rank, id);
  if (t == nullptr) return std::nullopt;
  const std::vector<TensorRef>& sent = tensor_inputs_[t->src][t->send];
  const ir::Node& recv = program_.rank(t->dst).node(t->recv);
  const ir::OpInfo* info = InfoOf(recv);
  if (sent.empty() || info == nullptr) return std::nullopt;
  const int32_t out = frontend::ReceivedOutput(*info, recv);
  if (static_cast<size_t>(out) >= recv.outputs.size() || !recv.outputs[out].type) {
    return std::nullopt;
  }
  return TransferEnds{DKey{t->src, sent[0]}, DKey{t->dst, TensorRef{t->recv, out}}};
}

const std::vector<TensorRef>& DIndex::ReadInputs(int32_t rank, ir::NodeId id) const {
  std::optional<std::vector<TensorRef>>& slot = read_inputs_[rank][id];
  if (!slot) {
    if (Collective(rank, id) == ir::CollectiveKind::kRecv) {
      slot.emplace();  // its value is the peer's tensor, not a function of its buffer
    } else if (Collective(rank, id) != ir::CollectiveKind::kNone) {
      slot = tensor_inputs_[rank][id];
    } else {
      slot = symbolic::ReadInputs(program_.rank(rank), id, constants_);
      for (TensorRef& in : *slot) in = Canonical(rank, in);
    }
  }
  return *slot;
}

void DIndex::AddReplica(TensorRef s_tensor, const DKey& given, bool member) {
  auto [it, fresh] = s_groups_.emplace(s_tensor, static_cast<uint32_t>(groups_.size()));
  if (fresh) groups_.emplace_back();
  AddToGroup(it->second, given, member);
}

void DIndex::AddPieceReplica(TensorRef s_tensor, const std::vector<int64_t>& region,
                             const DKey& given, bool member) {
  auto [it, fresh] = piece_groups_.emplace(std::make_pair(s_tensor, region),
                                           static_cast<uint32_t>(groups_.size()));
  if (fresh) groups_.emplace_back();
  AddToGroup(it->second, given, member);
}

void DIndex::AddCollectiveReplicas() {
  // A received tensor is the one its peer sent.
  for (const ir::Transfer& t : program_.transfers) {
    std::optional<TransferEnds> ends = Transfer(t.src, t.send);
    if (!ends) continue;
    const auto group = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
    Join(group, ReplicaId(Canonical(ends->sent)));
    Join(group, ReplicaId(Canonical(ends->received)));
  }
  for (const auto& [self, call] : peers_) {
    if (call.size() < 2 || call.front() != self) continue;  // each call once
    const ir::CollectiveKind kind = Collective(self.first, self.second);
    if (kind != ir::CollectiveKind::kAllReduce && kind != ir::CollectiveKind::kAllGather &&
        kind != ir::CollectiveKind::kBroadcast) {
      continue;
    }
    // Only a complete call: every member of the group took part.
    const std::string group_name = GroupName(program_.rank(self.first).node(self.second));
    if (call.size() != Members(group_name).size()) continue;
    const auto group = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
    for (const auto& [rank, id] : call) {
      Join(group, ReplicaId(Canonical(DKey{rank, TensorRef{id, 0}})));
    }
  }
}

void DIndex::AddComputedReplicas() {
  if (computed_replicas_done_) return;
  computed_replicas_done_ = true;
  bool pieces = false;  // two concats of one S tensor share a piece region somewhere
  for (const auto& [key, group] : piece_groups_) {
    pieces = pieces || groups_[group].members.size() > 1;
  }
  if (!pieces) return;
  // Value numbers over every rank's nodes (representatives only): a replica takes its
  // component's number; an operator computing what another does (same operator and
  // arguments over tensors of equal numbers) the other's; anything else a fresh one.
  const size_t world = program_.ranks.size();
  std::vector<NodeNumbers> number(world);
  std::map<uint32_t, ir::NodeId> component_number;
  ir::NodeId next = 0;
  struct Seen {
    int32_t rank;
    ir::NodeId id;
  };
  std::unordered_map<size_t, std::vector<Seen>> buckets;
  std::map<ir::NodeId, std::vector<DKey>> members;  // number -> nodes computing it
  for (size_t r = 0; r < world; ++r) {
    const ir::Graph& g = program_.ranks[r];
    number[r].assign(g.nodes.size(), 0);
    const auto rank = static_cast<int32_t>(r);
    for (size_t id = 0; id < g.nodes.size(); ++id) {
      const auto nid = static_cast<ir::NodeId>(id);
      if (canonical_[r][id] != nid) {
        number[r][id] = number[r][canonical_[r][id]];
        continue;
      }
      const ir::Node& node = g.nodes[id];
      ir::NodeId n = next;
      auto replica = replica_ids_.find(DKey{rank, TensorRef{nid, 0}});
      if (node.outputs.size() == 1 && replica != replica_ids_.end()) {
        n = component_number.emplace(Root(replica->second), next).first->second;
      } else if (Collective(rank, nid) == ir::CollectiveKind::kWait &&
                 !tensor_inputs_[r][id].empty()) {
        n = number[r][tensor_inputs_[r][id][0].node];
      } else if (node.kind == ir::NodeKind::kOperator && Mergeable(node)) {
        std::vector<Seen>& bucket = buckets[HashComputation(node, number[r])];
        for (const Seen& earlier : bucket) {
          if (SameComputation(program_.ranks[earlier.rank].nodes[earlier.id], node,
                              number[earlier.rank], number[r])) {
            n = number[earlier.rank][earlier.id];
            break;
          }
        }
        if (n == next) bucket.push_back(Seen{rank, nid});
      }
      if (n == next) ++next;
      number[r][id] = n;
      members[n].push_back(DKey{rank, TensorRef{nid, 0}});
    }
  }
  for (const auto& [n, keys] : members) {
    std::set<int32_t> ranks;
    for (const DKey& k : keys) ranks.insert(k.rank);
    if (ranks.size() < 2) continue;
    const ir::Node& node = program_.rank(keys[0].rank).node(keys[0].ref.node);
    if (node.kind != ir::NodeKind::kOperator) continue;  // inputs: their groups exist
    for (int32_t out = 0; out < static_cast<int32_t>(node.outputs.size()); ++out) {
      const auto group = static_cast<uint32_t>(groups_.size());
      groups_.emplace_back();
      for (const DKey& k : keys) Join(group, ReplicaId(DKey{k.rank, TensorRef{k.ref.node, out}}));
    }
  }
}

void DIndex::AddToGroup(uint32_t group, const DKey& given, bool member) {
  const DKey key = Canonical(given);
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

const std::vector<DKey>* DIndex::ReplicaClique(const DKey& key) const {
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

std::vector<DKey> DIndex::Replicas(const DKey& key) const {
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

uint32_t DIndex::ReplicaId(const DKey& key) {
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

void DIndex::Join(uint32_t group, uint32_t id) {
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
          (comp_span_[other] != kNoGroup &&
           groups_[comp_span_[other]].members.size() > groups_[comp_span_[root]].members.size())) {
        comp_span_[root] = comp_span_[other];
      }
    }
  }
  g.members.push_back(id);
  groups_of.push_back(group);
  if (comp_span_[root] == kNoGroup || g.members.size() > groups_[comp_span_[root]].members.size()) {
    comp_span_[root] = group;
  }
}

ClassId LocalGraph::DLeaf(int32_t rank, TensorRef given, int32_t hop) {
  const TensorRef ref = d_index_.Canonical(rank, given);
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

ClassId AddRelExprTo(EGraph& egraph, const TensorAnalysis& analysis, const RelExpr& expr,
                     const std::function<ClassId(const DTensor&)>& leaf) {
  const TensorLanguage& lang = TensorLanguage::Get();
  auto Num = [&](int64_t v) { return egraph.Add(lang.Num(v)); };
  auto AddRelExpr = [&](const RelExpr& e) { return AddRelExprTo(egraph, analysis, e, leaf); };
  return std::visit(
      [&](const auto& n) -> ClassId {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, DTensor>) {
          return leaf(n);
        } else if constexpr (std::is_same_v<T, Concat>) {
          std::vector<ClassId> ch{Num(n.dim)};
          for (const RelExpr& c : n.children) ch.push_back(AddRelExpr(c));
          return egraph.Add(ENode{lang.concat, 0, std::move(ch)});
        } else if constexpr (std::is_same_v<T, Slice>) {
          return egraph.Add(
              ENode{lang.slice, 0, {AddRelExpr(n.child), Num(n.dim), Num(n.start), Num(n.end)}});
        } else if constexpr (std::is_same_v<T, Sum> || std::is_same_v<T, Max> ||
                             std::is_same_v<T, Min>) {
          OpId op = std::is_same_v<T, Sum>   ? lang.sumr
                    : std::is_same_v<T, Max> ? lang.maxr
                                             : lang.minr;
          std::vector<ClassId> ch;
          for (const RelExpr& c : n.children) ch.push_back(AddRelExpr(c));
          if (ch.size() == 1) return ch[0];
          return egraph.Add(ENode{op, 0, std::move(ch)});
        } else if constexpr (std::is_same_v<T, Scale>) {
          return egraph.Add(
              ENode{lang.scale, 0, {AddRelExpr(n.child), egraph.Add(lang.Flt(n.factor))}});
        } else if constexpr (std::is_same_v<T, Reshape>) {
          ClassId child = AddRelExpr(n.child);
          std::vector<ClassId> ch{child};
          const auto& type = analysis[child].type;
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
          return egraph.Add(ENode{lang.reshape, 0, std::move(ch)});
        } else if constexpr (std::is_same_v<T, Expand>) {
          std::vector<ClassId> ch{AddRelExpr(n.child)};
          for (int64_t s : n.sizes) ch.push_back(Num(s));
          return egraph.Add(ENode{lang.expand, 0, std::move(ch)});
        } else if constexpr (std::is_same_v<T, Transpose>) {
          return egraph.Add(ENode{lang.transpose, 0, {AddRelExpr(n.child), Num(n.d0), Num(n.d1)}});
        } else {
          std::vector<ClassId> ch{AddRelExpr(n.child)};
          for (int64_t d : n.perm) ch.push_back(Num(d));
          return egraph.Add(ENode{lang.permute, 0, std::move(ch)});
        }
      },
      expr.node().kind);
}

ClassId LocalGraph::AddRelExpr(const RelExpr& expr) {
  return AddRelExprTo(egraph_, *analysis_, expr,
                      [&](const DTensor& d) { return DLeaf(d.rank, d.tensor, 0); });
}

void LocalGraph::ExpandD() {
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

void LocalGraph::ExpandProducers(const std::vector<DKey>& from, int depth) {
  std::vector<std::pair<DKey, int>> queue;
  std::set<std::pair<int32_t, ir::NodeId>> seen;
  for (const DKey& key : from) queue.emplace_back(d_index_.Canonical(key), 0);
  for (size_t head = 0; head < queue.size(); ++head) {
    const auto [key, level] = queue[head];
    if (level >= depth || added_d_.size() >= options_.max_d_nodes) continue;
    if (d_program_.rank(key.rank).node(key.ref.node).kind != ir::NodeKind::kOperator) continue;
    std::vector<std::pair<int32_t, ir::NodeId>> members = {{key.rank, key.ref.node}};
    const ir::CollectiveKind kind = d_index_.Collective(key.rank, key.ref.node);
    if (kind != ir::CollectiveKind::kNone && kind != ir::CollectiveKind::kWait) {
      const auto* peers = d_index_.Peers(key.rank, key.ref.node);
      if (!peers) continue;
      members = *peers;
    }
    for (const auto& [rank, id] : members) {
      if (!seen.insert({rank, id}).second) continue;
      for (TensorRef in : d_index_.ReadInputs(rank, id)) {
        DLeaf(rank, in, 0);
        queue.emplace_back(DKey{rank, in}, level + 1);
      }
      AddD(rank, id, 0);
    }
  }
}

// How far back from a related tensor the walk of PathsTo looks for a target it is computed from
// (a gradient piece written into zeros is a few operators back, not a layer).
constexpr int32_t kMaxTargetDepthBack = 8;

void LocalGraph::RestrictToPathsTo(const std::vector<std::pair<TensorRef, RelExpr>>& targets) {
  allowed_.emplace();
  std::vector<DKey> stack;
  std::set<DKey> targets_set;
  for (const auto& target : targets) {
    ForEachDLeaf(target.second, [&](const DTensor& d) {
      stack.push_back(d_index_.Canonical(DKey{d.rank, d.tensor}));
      targets_set.insert(stack.back());
    });
  }
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
  // The other direction: a related tensor computed from a target (a gradient written into zeros
  // from the hinted piece). Breadth first back from the related tensors, within the same budget;
  // then every operator on the way whose inputs lead to a target is allowed, and so is every
  // input-free producer met.
  std::map<DKey, std::vector<DKey>> inputs_of;  // visited keys -> their producer's inputs
  std::vector<DKey> queue;
  std::vector<int32_t> depth;  // operators back from the related tensor that queued it
  for (const auto& [key, state] : d_leaves_) {
    if (inputs_of.emplace(key, std::vector<DKey>{}).second) {
      queue.push_back(key);
      depth.push_back(0);
    }
  }
  // Nodes are in topological order: a tensor produced no later than every target of its rank
  // has none among its producers' inputs, so it is not walked back (most related tensors are read
  // by the targets' computation, not computed from them).
  std::map<int32_t, ir::NodeId> first_target;  // per rank: the earliest target's producer
  for (const DKey& t : targets_set) {
    auto [it, fresh] = first_target.emplace(t.rank, t.ref.node);
    if (!fresh) it->second = std::min(it->second, t.ref.node);
  }
  for (size_t head = 0; head < queue.size() && inputs_of.size() < options_.max_d_nodes; ++head) {
    const DKey key = queue[head];
    if (targets_set.count(key) || depth[head] >= kMaxTargetDepthBack) continue;
    const ir::Node& producer = d_program_.rank(key.rank).node(key.ref.node);
    if (producer.kind != ir::NodeKind::kOperator) continue;
    if (d_index_.IsInputFree(key.rank, key.ref.node)) {
      // A constant (zeros of a target's shape): its value is what lets it drop out.
      allowed_->insert({key.rank, key.ref.node});
      continue;
    }
    auto first = first_target.find(key.rank);
    if (first == first_target.end() || key.ref.node <= first->second) continue;
    std::vector<DKey> ins;
    for (TensorRef in : d_index_.ReadInputs(key.rank, key.ref.node)) {
      DKey in_key = d_index_.Canonical(DKey{key.rank, in});
      ins.push_back(in_key);
      if (inputs_of.emplace(in_key, std::vector<DKey>{}).second) {
        queue.push_back(in_key);
        depth.push_back(depth[head] + 1);
      }
    }
    inputs_of[key] = std::move(ins);
  }
  std::map<DKey, bool> reaches;
  std::function<bool(const DKey&)> leads_to_target = [&](const DKey& key) {
    if (targets_set.count(key)) return true;
    auto [it, fresh] = reaches.emplace(key, false);
    if (!fresh) return it->second;
    auto in = inputs_of.find(key);
    if (in == inputs_of.end()) return false;
    bool any = false;
    for (const DKey& k : in->second) any = leads_to_target(k) || any;
    reaches[key] = any;
    if (!any) return false;
    allowed_->insert({key.rank, key.ref.node});
    ir::CollectiveKind kind = d_index_.Collective(key.rank, key.ref.node);
    if (kind != ir::CollectiveKind::kNone && kind != ir::CollectiveKind::kWait) {
      if (const auto* peers = d_index_.Peers(key.rank, key.ref.node)) {
        allowed_->insert(peers->begin(), peers->end());
      }
    }
    return true;
  };
  for (const auto& [key, state] : d_leaves_) leads_to_target(key);
}

std::vector<std::string> LocalGraph::Candidates() const {
  std::vector<std::string> out;
  for (const auto& [rank, id] : added_d_) {
    const ir::Node& n = d_program_.rank(rank).node(id);
    if (n.kind != ir::NodeKind::kOperator) continue;
    out.push_back(n.name + "@" + std::to_string(rank) + " (" + n.op.ToString() + ")");
  }
  return out;
}

std::optional<ClassId> LocalGraph::LowerInputFreeS(ir::NodeId id) {
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

std::optional<int32_t> LocalGraph::InputsReady(int32_t rank, ir::NodeId id) {
  int32_t hop = 0;
  const ir::Node& node = d_program_.rank(rank).node(id);
  // A concatenation packs tensors side by side: a graph input packed beside a related tensor
  // (another parameter of FSDP2's flat all-gather input) is a leaf of its own, so the packed
  // tensor, and what is computed from it, joins the neighbourhood.
  const bool packs =
      node.kind == ir::NodeKind::kOperator && node.op.ns == "aten" && node.op.name == "cat";
  for (TensorRef in : d_index_.ReadInputs(rank, id)) {
    int32_t h = HopOf(rank, in);
    if (h < 0) {
      const ir::Node& producer = d_program_.rank(rank).node(in.node);
      if (!producer.outputs[in.output].type) return std::nullopt;
      if (d_index_.IsInputFree(rank, in.node)) {
        AddD(rank, in.node, 0);
      } else if (packs && IsInputView(rank, in)) {
        DLeaf(rank, in, 0);
      } else {
        return std::nullopt;
      }
      h = HopOf(rank, in);
      if (h < 0) return std::nullopt;
    }
    hop = std::max(hop, h);
  }
  return hop;
}

bool LocalGraph::IsInputView(int32_t rank, TensorRef ref, int depth) const {
  const ir::Node& producer = d_program_.rank(rank).node(ref.node);
  if (producer.kind == ir::NodeKind::kInput || d_index_.IsInputFree(rank, ref.node)) return true;
  if (depth == 0 || producer.kind != ir::NodeKind::kOperator ||
      !d_index_.IsRelationOnly(rank, ref.node, constants_)) {
    return false;
  }
  const std::vector<TensorRef>& ins = d_index_.TensorInputs(rank, ref.node);
  return !ins.empty() && std::all_of(ins.begin(), ins.end(), [&](TensorRef in) {
    return IsInputView(rank, in, depth - 1);
  });
}

void LocalGraph::TryAddD(int32_t rank, ir::NodeId id) {
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

// masked_fill(c, m, v) of an input-free c with a number v: an additive attention mask made from
// a bool mask (Megatron's masked_fill(zeros, m, -10000)). Lemmas needing a finite mask (the
// online-softmax merge, online_softmax.rules) read that it is finite (MarkFiniteFill).
bool LocalGraph::IsConstantFill(int32_t rank, const ir::Node& node) const {
  if (node.op.ns != "aten" || node.op.name != "masked_fill" || node.op.overload != "Scalar") {
    return false;
  }
  const std::vector<TensorRef> ins = node.TensorInputs();
  return ins.size() == 2 && d_index_.IsInputFree(rank, d_index_.Canonical(rank, ins[0]).node);
}

void LocalGraph::AddStructuralProducer(int32_t rank, TensorRef ref) {
  if (added_d_.count({rank, ref.node})) return;
  const ir::Graph& g = d_program_.rank(rank);
  const ir::Node& node = g.node(ref.node);
  if (node.kind != ir::NodeKind::kOperator) return;
  const ir::CollectiveKind kind = d_index_.Collective(rank, ref.node);
  if (kind == ir::CollectiveKind::kRecv) {
    // A received tensor is the one its peer sent (on the sending rank: a piece of the related
    // tensor by D's own equalities, hop 0), so the sender's other uses of it join the
    // neighbourhood (the stage before a pipeline boundary).
    std::optional<DIndex::TransferEnds> ends = d_index_.Transfer(rank, ref.node);
    if (!ends || ends->received.ref.output != ref.output) return;
    DLeaf(ends->sent.rank, ends->sent.ref, 0);
    AddD(rank, ref.node, 0);
    return;
  }
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
  if (IsConstantFill(rank, node)) {
    MarkFiniteFill(rank, ref, node);
    return;
  }
  if (!d_index_.IsRelationOnly(rank, ref.node, constants_)) return;
  for (TensorRef in : d_index_.TensorInputs(rank, ref.node)) DLeaf(rank, in, 0);
  AddD(rank, ref.node, 0);
}

// Only the fact joins the e-graph, not the definition: with masked_fill(c, m, v) in the mask's
// class, every slice of the mask (a query piece, a key block, S's mask pieces) would be pushed
// into c and into m's own pieces (masked-fill-of-slice, then the bool mask's concats and slices),
// terms that the attention lemmas never read (ring attention at CP 4: 11,861 e-nodes where 5,937
// do without them).
void LocalGraph::MarkFiniteFill(int32_t rank, TensorRef ref, const ir::Node& node) {
  const ir::Value* value = node.args.size() > 2 ? &node.args[2] : node.Kwarg("value");
  const std::optional<ir::TensorType>& type = node.outputs.at(ref.output).type;
  if (value == nullptr || !value->is_number() || !type) return;
  // input-free (IsConstantFill), its leaf keyed by the canonical ref
  const TensorRef operand = d_index_.Canonical(rank, node.TensorInputs()[0]);
  if (HopOf(rank, operand) < 0) AddD(rank, operand.node, 0);  // its constant's term
  auto it = d_leaves_.find({rank, operand});
  if (it == d_leaves_.end() || !FiniteValued(egraph_, egraph_.Find(it->second.cls)) ||
      !FitsFinite(value->as_double(), type->dtype)) {
    return;
  }
  const ir::Graph& g = d_program_.rank(rank);
  leaves_.MarkFinite(
      leaves_.Intern(TensorLeaf{TensorLeaf::Side::kDist, rank, ref, *type, g.ValueName(ref)}));
}

void LocalGraph::AddD(int32_t rank, ir::NodeId id, int32_t input_hop) {
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
  } else if (ir::IsPointToPoint(kind)) {
    // The receive's value is the sent tensor; the send itself gives nothing read as a value.
    std::optional<DIndex::TransferEnds> ends = d_index_.Transfer(rank, id);
    if (ends && kind == ir::CollectiveKind::kRecv) {
      outputs[static_cast<size_t>(ends->received.ref.output)] = DLeaf(
          ends->sent.rank, ends->sent.ref, std::max(HopOf(ends->sent.rank, ends->sent.ref), 0));
    }
  } else if (kind != ir::CollectiveKind::kNone) {
    const auto* peers = d_index_.Peers(rank, id);
    std::vector<ClassId> member_inputs;
    std::vector<const ir::Node*> member_nodes;
    size_t position = 0;
    for (size_t k = 0; peers && k < peers->size(); ++k) {
      const auto& [pg, pid] = (*peers)[k];
      if (pg == rank) position = k;
      const std::vector<TensorRef>& ins = d_index_.TensorInputs(pg, pid);
      if (ins.empty()) return;
      member_inputs.push_back(DLeaf(pg, ins[0], HopOf(pg, ins[0])));
      member_nodes.push_back(&d_program_.rank(pg).node(pid));
    }
    if (node.outputs[0].type) {
      outputs[0] = LowerCollective(egraph_, node, member_inputs, position, *node.outputs[0].type,
                                   member_nodes);
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

ClassId LocalGraph::NewDLeaf(const DKey& key, int32_t hop) {
  const ir::Graph& g = d_program_.rank(key.rank);
  TensorLeaf leaf{TensorLeaf::Side::kDist, key.rank, key.ref, g.type(key.ref),
                  g.ValueName(key.ref)};
  ClassId cls = egraph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
  d_leaves_[key] = {cls, hop};
  frontier_.push_back(key);
  return cls;
}

void LocalGraph::Settle(ReplicaScan& scan) {
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

void LocalGraph::AddReplicaClique(ClassId cls, size_t self, ReplicaScan& scan) {
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

ClassId LocalGraph::DLeafNoExpand(int32_t rank, TensorRef given, int32_t hop) {
  const TensorRef ref = d_index_.Canonical(rank, given);
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

}  // namespace gg::symbolic
