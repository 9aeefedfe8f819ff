// EGraph implementation: hash-consing, union-find, deferred rebuild, analyses, explanations.
#include "symbolic/egraph.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace gg::symbolic {

// ---- OpTable ---------------------------------------------------------------------------------

OpId OpTable::Add(std::string name, int arity) {
  if (by_name_.count(name)) throw std::invalid_argument("duplicate op '" + name + "'");
  if (arity < kVariadic) throw std::invalid_argument("bad arity for op '" + name + "'");
  OpId id = static_cast<OpId>(ops_.size());
  by_name_.emplace(name, id);
  ops_.push_back(OpInfo{std::move(name), arity, false});
  return id;
}

OpId OpTable::AddPayloadLeaf(std::string name) {
  OpId id = Add(std::move(name), 0);
  ops_[id].payload_leaf = true;
  return id;
}

std::optional<OpId> OpTable::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<OpId> OpTable::literal_op() const {
  if (literal_op_) return literal_op_;
  auto num = Find("num");
  if (num && ops_[*num].payload_leaf) return num;
  return std::nullopt;
}

// ---- ENode -----------------------------------------------------------------------------------

bool ENode::operator<(const ENode& other) const {
  if (op != other.op) return op < other.op;
  if (payload != other.payload) return payload < other.payload;
  return children < other.children;
}

namespace {
inline uint64_t Mix(uint64_t h, uint64_t v) {
  // A multiply-xorshift step (as in splitmix64); good avalanche for small integer ids.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}
}  // namespace

size_t ENodeHash::operator()(const ENode& node) const {
  uint64_t h = Mix(node.op, static_cast<uint64_t>(node.payload));
  for (ClassId c : node.children) h = Mix(h, c);
  return static_cast<size_t>(h);
}

// ---- RecExpr ---------------------------------------------------------------------------------

uint32_t RecExpr::Add(ENode node) {
  nodes.push_back(std::move(node));
  return static_cast<uint32_t>(nodes.size()) - 1;
}

namespace {
void PrintExpr(const RecExpr& expr, const OpTable& ops, uint32_t index, std::string& out) {
  const ENode& node = expr.nodes[index];
  const OpTable::OpInfo& info = ops.Info(node.op);
  if (info.payload_leaf) {
    out += "(" + info.name + " " + std::to_string(node.payload) + ")";
    return;
  }
  if (node.children.empty() && info.arity == 0) {
    out += info.name;
    return;
  }
  out += "(" + info.name;
  for (ClassId child : node.children) {
    out += ' ';
    PrintExpr(expr, ops, child, out);
  }
  out += ')';
}
}  // namespace

std::string RecExpr::ToString(const OpTable& ops) const {
  std::string out;
  if (!nodes.empty()) PrintExpr(*this, ops, root(), out);
  return out;
}

// ---- EGraph: construction and lookup ---------------------------------------------------------

EGraph::EGraph(const OpTable& ops, Options options) : ops_(&ops), options_(options) {
  memo_.max_load_factor(0.5f);  // lookups dominate saturation: keep chains short
  reasons_ = {"given", "congruence"};
  reason_ids_ = {{"given", kGivenReason}, {"congruence", kCongruenceReason}};
}

void EGraph::AttachAnalysis(std::unique_ptr<Analysis> analysis) {
  if (!nodes_.empty()) throw std::logic_error("analyses must be attached before adding nodes");
  analyses_.push_back(std::move(analysis));
}

ClassId EGraph::Find(ClassId id) const {
  ClassId root = id;
  while (union_find_[root] != root) root = union_find_[root];
  while (union_find_[id] != root) {  // path compression
    ClassId next = union_find_[id];
    union_find_[id] = root;
    id = next;
  }
  return root;
}

ClassId EGraph::FindMutable(ClassId id) { return Find(id); }

ENode EGraph::Canonicalize(ENode node) const {
  for (ClassId& c : node.children) c = Find(c);
  return node;
}

std::optional<ClassId> EGraph::LookupNodeId(const ENode& canonical) const {
  auto it = memo_.find(canonical);
  if (it == memo_.end()) return std::nullopt;
  return it->second;
}

std::optional<ClassId> EGraph::Lookup(ENode node) const {
  auto id = LookupNodeId(Canonicalize(std::move(node)));
  if (!id) return std::nullopt;
  return Find(*id);
}

ClassId EGraph::AddUncanonical(ENode node) {
  if (Tracing()) {
    trace_->insert(trace_->end(),
                   {1, node.op, node.payload, static_cast<int64_t>(node.children.size())});
    trace_->insert(trace_->end(), node.children.begin(), node.children.end());
  }
  TraceScope scope(*this);
  node = Canonicalize(std::move(node));
  if (auto existing = LookupNodeId(node)) return *existing;
  ClassId id = static_cast<ClassId>(nodes_.size());
  nodes_.push_back(node);
  union_find_.push_back(id);
  if (options_.explanations) {
    explain_parent_.push_back(id);
    explain_reason_.push_back(kGivenReason);
    explain_forward_.push_back(1);
  }
  classes_.emplace_back();
  // Register as parent of each distinct child class once.
  const std::vector<ClassId>& kids = node.children;
  for (size_t i = 0; i < kids.size(); ++i) {
    bool seen = false;
    if (kids.size() <= 16) {
      for (size_t j = 0; j < i && !seen; ++j) seen = kids[j] == kids[i];
    } else {
      seen = std::find(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(i), kids[i]) !=
             kids.begin() + static_cast<std::ptrdiff_t>(i);
    }
    if (!seen) classes_[kids[i]].parents.push_back(id);
  }
  memo_.emplace(node, id);
  EClass& cls = classes_[id];
  cls.nodes.push_back(std::move(node));
  cls.node_ids.push_back(id);
  ++num_classes_;
  by_op_valid_ = false;
  for (auto& analysis : analyses_) analysis->MakeClass(*this, id, nodes_[id]);
  for (auto& analysis : analyses_) analysis->Modify(*this, id);
  return id;
}

ClassId EGraph::AddExprUncanonical(const RecExpr& expr) {
  if (expr.empty()) throw std::invalid_argument("AddExpr: empty expression");
  std::vector<ClassId> ids(expr.nodes.size());
  for (size_t i = 0; i < expr.nodes.size(); ++i) {
    ENode node = expr.nodes[i];
    for (ClassId& c : node.children) c = ids[c];
    ids[i] = AddUncanonical(std::move(node));
  }
  return ids.back();
}

ClassId EGraph::AddExpr(const RecExpr& expr) { return Find(AddExprUncanonical(expr)); }

namespace {
// Resolves every node of `expr` to the node id it is stored under, or nullopt.
std::optional<ClassId> LookupExprNodeId(
    const EGraph& graph, const RecExpr& expr,
    const std::function<std::optional<ClassId>(const ENode&)>& lookup) {
  if (expr.empty()) return std::nullopt;
  std::vector<ClassId> ids(expr.nodes.size());
  for (size_t i = 0; i < expr.nodes.size(); ++i) {
    ENode node = expr.nodes[i];
    for (ClassId& c : node.children) c = graph.Find(ids[c]);
    auto id = lookup(node);
    if (!id) return std::nullopt;
    ids[i] = *id;
  }
  return ids.back();
}
}  // namespace

std::optional<ClassId> EGraph::LookupExpr(const RecExpr& expr) const {
  auto id = LookupExprNodeId(*this, expr, [this](const ENode& n) { return LookupNodeId(n); });
  if (!id) return std::nullopt;
  return Find(*id);
}

ReasonId EGraph::InternReason(std::string_view reason) {
  auto it = reason_ids_.find(std::string(reason));
  // The name is not recorded, only which id it got: names reach explanations, never the state.
  if (it != reason_ids_.end()) {
    if (Tracing()) trace_->insert(trace_->end(), {3, it->second});
    return it->second;
  }
  ReasonId id = static_cast<ReasonId>(reasons_.size());
  if (Tracing()) trace_->insert(trace_->end(), {3, id});
  reasons_.emplace_back(reason);
  reason_ids_.emplace(std::string(reason), id);
  return id;
}

// ---- union and rebuild -----------------------------------------------------------------------

void EGraph::MakeExplainRoot(ClassId node) {
  ClassId parent = explain_parent_[node];
  ReasonId reason = explain_reason_[node];
  uint8_t forward = explain_forward_[node];
  explain_parent_[node] = node;
  while (parent != node) {  // reverse every edge on the path to the old root
    ClassId next_parent = explain_parent_[parent];
    ReasonId next_reason = explain_reason_[parent];
    uint8_t next_forward = explain_forward_[parent];
    explain_parent_[parent] = node;
    explain_reason_[parent] = reason;
    explain_forward_[parent] = forward ? 0 : 1;
    node = parent;
    parent = next_parent;
    reason = next_reason;
    forward = next_forward;
  }
}

bool EGraph::Union(ClassId a, ClassId b, ReasonId reason) {
  if (Tracing()) trace_->insert(trace_->end(), {2, a, b, reason});
  TraceScope scope(*this);
  ClassId root_a = FindMutable(a);
  ClassId root_b = FindMutable(b);
  if (root_a == root_b) return false;
  if (options_.explanations) {
    MakeExplainRoot(a);
    explain_parent_[a] = b;
    explain_reason_[a] = reason;
    explain_forward_[a] = 1;
  }
  // The class with more parents survives: fewer parents to re-canonicalize.
  if (classes_[root_a].parents.size() < classes_[root_b].parents.size()) {
    std::swap(root_a, root_b);
  }
  ClassId into = root_a;
  ClassId from = root_b;
  union_find_[from] = into;
  --num_classes_;
  by_op_valid_ = false;
  EClass absorbed = std::move(classes_[from]);
  classes_[from] = EClass{};
  pending_.insert(pending_.end(), absorbed.parents.begin(), absorbed.parents.end());
  EClass& target = classes_[into];
  for (auto& analysis : analyses_) {
    Analysis::MergeResult merged = analysis->MergeClasses(into, from);
    if (merged.into_changed) {
      analysis_pending_.insert(analysis_pending_.end(), target.parents.begin(),
                               target.parents.end());
    }
    if (merged.from_changed) {
      analysis_pending_.insert(analysis_pending_.end(), absorbed.parents.begin(),
                               absorbed.parents.end());
    }
  }
  target.nodes.insert(target.nodes.end(), std::make_move_iterator(absorbed.nodes.begin()),
                      std::make_move_iterator(absorbed.nodes.end()));
  target.node_ids.insert(target.node_ids.end(), absorbed.node_ids.begin(),
                         absorbed.node_ids.end());
  target.parents.insert(target.parents.end(), absorbed.parents.begin(), absorbed.parents.end());
  dirty_classes_.push_back(into);
  // Last: Modify may add nodes and union, which invalidates `target`.
  for (auto& analysis : analyses_) analysis->Modify(*this, into);
  return true;
}

size_t EGraph::Rebuild() {
  if (Tracing()) trace_->push_back(4);
  TraceScope scope(*this);
  size_t unions = 0;
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty()) {
      ClassId id = pending_.back();
      pending_.pop_back();
      ENode node = Canonicalize(nodes_[id]);
      dirty_classes_.push_back(FindMutable(id));
      auto [it, inserted] = memo_.try_emplace(std::move(node), id);
      if (!inserted) {
        ClassId other = it->second;  // copy: Union may add nodes and rehash memo_
        if (Union(other, id, kCongruenceReason)) ++unions;
      }
    }
    while (!analysis_pending_.empty()) {
      ClassId id = analysis_pending_.back();
      analysis_pending_.pop_back();
      ClassId cls = FindMutable(id);
      ENode node = Canonicalize(nodes_[id]);
      bool changed = false;
      for (auto& analysis : analyses_) changed |= analysis->RemakeNode(*this, cls, node);
      if (changed) {
        const auto& parents = classes_[cls].parents;
        analysis_pending_.insert(analysis_pending_.end(), parents.begin(), parents.end());
        for (auto& analysis : analyses_) analysis->Modify(*this, cls);
      }
    }
  }
  RebuildClasses();
  return unions;
}

void EGraph::RebuildClasses() {
  for (ClassId& c : dirty_classes_) c = Find(c);
  std::sort(dirty_classes_.begin(), dirty_classes_.end());
  dirty_classes_.erase(std::unique(dirty_classes_.begin(), dirty_classes_.end()),
                       dirty_classes_.end());
  std::vector<std::pair<ENode, ClassId>> entries;
  for (ClassId c : dirty_classes_) {
    EClass& cls = classes_[c];
    entries.clear();
    entries.reserve(cls.nodes.size());
    for (size_t i = 0; i < cls.nodes.size(); ++i) {
      entries.emplace_back(Canonicalize(std::move(cls.nodes[i])), cls.node_ids[i]);
    }
    std::sort(entries.begin(), entries.end());
    cls.nodes.clear();
    cls.node_ids.clear();
    for (auto& [node, id] : entries) {
      if (!cls.nodes.empty() && cls.nodes.back() == node) continue;  // keep the smallest id
      cls.nodes.push_back(std::move(node));
      cls.node_ids.push_back(id);
    }
  }
  dirty_classes_.clear();
  by_op_valid_ = false;
}

// ---- queries ---------------------------------------------------------------------------------

std::vector<ClassId> EGraph::ClassIds() const {
  std::vector<ClassId> ids;
  ids.reserve(num_classes_);
  for (ClassId i = 0; i < union_find_.size(); ++i) {
    if (union_find_[i] == i) ids.push_back(i);
  }
  return ids;
}

std::span<const ENode> EGraph::NodesWithOp(ClassId id, OpId op) const {
  const std::vector<ENode>& nodes = classes_[Find(id)].nodes;
  auto lo = std::partition_point(nodes.begin(), nodes.end(),
                                 [op](const ENode& n) { return n.op < op; });
  auto hi = std::partition_point(lo, nodes.end(), [op](const ENode& n) { return n.op == op; });
  return {nodes.data() + (lo - nodes.begin()), static_cast<size_t>(hi - lo)};
}

const std::vector<ClassId>& EGraph::ClassesWithOp(OpId op) const {
  if (!by_op_valid_) {
    by_op_.assign(ops_->size(), {});
    for (ClassId i = 0; i < union_find_.size(); ++i) {
      if (union_find_[i] != i) continue;
      OpId last = static_cast<OpId>(-1);
      for (const ENode& node : classes_[i].nodes) {
        if (node.op == last) continue;
        last = node.op;
        by_op_[node.op].push_back(i);
      }
    }
    by_op_valid_ = true;
  }
  static const std::vector<ClassId> kEmpty;
  return op < by_op_.size() ? by_op_[op] : kEmpty;
}

std::string EGraph::Dump() const {
  std::string out;
  for (ClassId c : ClassIds()) {
    out += "c" + std::to_string(c) + ":";
    const EClass& cls = classes_[c];
    for (size_t i = 0; i < cls.nodes.size(); ++i) {
      const ENode& node = cls.nodes[i];
      out += " " + ops_->Name(node.op);
      if (ops_->Info(node.op).payload_leaf) out += "=" + std::to_string(node.payload);
      out += "(";
      for (size_t k = 0; k < node.children.size(); ++k) {
        if (k) out += ",";
        out += std::to_string(Find(node.children[k]));
      }
      out += ")#" + std::to_string(cls.node_ids[i]);
    }
    out += "\n";
  }
  return out;
}

// ---- explanations ----------------------------------------------------------------------------

std::optional<std::vector<ProofStep>> EGraph::Explain(ClassId a_node, ClassId b_node) const {
  if (!options_.explanations) throw std::logic_error("Explain: explanations are disabled");
  if (a_node >= nodes_.size() || b_node >= nodes_.size()) return std::nullopt;
  if (Find(a_node) != Find(b_node)) return std::nullopt;
  // Ancestors of a (including a), with their position on a's path.
  std::unordered_map<ClassId, size_t> on_a_path;
  std::vector<ClassId> a_path{a_node};
  on_a_path.emplace(a_node, 0);
  for (ClassId x = a_node; explain_parent_[x] != x;) {
    x = explain_parent_[x];
    on_a_path.emplace(x, a_path.size());
    a_path.push_back(x);
  }
  std::vector<ClassId> b_path{b_node};
  while (!on_a_path.count(b_path.back())) {
    ClassId x = b_path.back();
    if (explain_parent_[x] == x) return std::nullopt;  // unreachable when the forest is sound
    b_path.push_back(explain_parent_[x]);
  }
  size_t meet = on_a_path.at(b_path.back());
  std::vector<ProofStep> steps;
  for (size_t i = 0; i < meet; ++i) {
    ClassId x = a_path[i];
    steps.push_back({reasons_[explain_reason_[x]], explain_forward_[x] != 0, x, a_path[i + 1]});
  }
  for (size_t i = b_path.size() - 1; i-- > 0;) {
    ClassId x = b_path[i];
    steps.push_back({reasons_[explain_reason_[x]], explain_forward_[x] == 0, b_path[i + 1], x});
  }
  return steps;
}

std::vector<std::optional<std::vector<ProofRun>>> EGraph::ExplainRuns(
    ClassId a_node, std::span<const ClassId> b_nodes) const {
  if (!options_.explanations) throw std::logic_error("Explain: explanations are disabled");
  std::vector<std::optional<std::vector<ProofRun>>> out(b_nodes.size());
  if (a_node >= nodes_.size()) return out;
  // a's path to its root, and the runs of its steps: the steps before position m on the path
  // form the runs [0, runs_before[m]) (the last one possibly shortened).
  std::unordered_map<ClassId, size_t> on_a_path{{a_node, 0}};
  std::vector<ProofRun> a_runs;
  std::vector<size_t> runs_before{0};
  for (ClassId x = a_node; explain_parent_[x] != x; x = explain_parent_[x]) {
    ProofRun step{explain_reason_[x], explain_forward_[x] != 0};
    if (a_runs.empty() || !(a_runs.back() == step)) a_runs.push_back(step);
    runs_before.push_back(a_runs.size());
    on_a_path.emplace(explain_parent_[x], runs_before.size() - 1);
  }
  // For every node walked from a b: where its path meets a's, and the runs from there down to
  // it, as a persistent list (a node's list is its parent's plus its own step).
  struct Cell {
    ProofRun run;
    int64_t prev;  // earlier cell of the list, or -1
  };
  struct Memo {
    size_t meet;   // position of the meeting node on a's path
    int64_t tail;  // last cell of the runs from the meeting node down, or -1 for none
  };
  std::vector<Cell> cells;
  std::unordered_map<ClassId, Memo> memo;
  for (const auto& [node, position] : on_a_path) memo.emplace(node, Memo{position, -1});
  std::vector<ClassId> climb;
  for (size_t k = 0; k < b_nodes.size(); ++k) {
    ClassId b = b_nodes[k];
    if (b >= nodes_.size() || Find(a_node) != Find(b)) continue;
    climb.clear();
    ClassId x = b;
    bool reached = true;
    while (!memo.count(x)) {
      climb.push_back(x);
      if (explain_parent_[x] == x) {
        reached = false;  // unreachable when the forest is sound
        break;
      }
      x = explain_parent_[x];
    }
    if (!reached) continue;
    for (size_t i = climb.size(); i-- > 0;) {
      ClassId child = climb[i];
      Memo m = memo.at(explain_parent_[child]);
      ProofRun step{explain_reason_[child], explain_forward_[child] == 0};
      if (m.tail < 0 || !(cells[m.tail].run == step)) {
        cells.push_back({step, m.tail});
        m.tail = static_cast<int64_t>(cells.size()) - 1;
      }
      memo.emplace(child, m);
    }
    const Memo& m = memo.at(b);
    std::vector<ProofRun> runs(a_runs.begin(), a_runs.begin() + runs_before[m.meet]);
    size_t down = runs.size();
    for (int64_t c = m.tail; c >= 0; c = cells[c].prev) runs.push_back(cells[c].run);
    std::reverse(runs.begin() + static_cast<std::ptrdiff_t>(down), runs.end());
    if (down > 0 && down < runs.size() && runs[down - 1] == runs[down]) {
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(down));
    }
    out[k] = std::move(runs);
  }
  return out;
}

std::optional<std::vector<ProofStep>> EGraph::ExplainExprs(const RecExpr& a,
                                                           const RecExpr& b) const {
  auto lookup = [this](const ENode& n) { return LookupNodeId(n); };
  auto a_id = LookupExprNodeId(*this, a, lookup);
  auto b_id = LookupExprNodeId(*this, b, lookup);
  if (!a_id || !b_id) return std::nullopt;
  return Explain(*a_id, *b_id);
}

}  // namespace gg::symbolic
