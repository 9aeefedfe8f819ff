// EGraph: the language-generic e-graph the symbolic engine runs equality saturation on.
//
// Nodes are (op id, integer payload, child classes) over an OpTable, so the tensor language and
// the toy test languages share one engine. Hash-consing, union-find, egg-style deferred rebuilding
// (congruence closure restored by Rebuild()), pluggable e-class analyses with repair, and an
// explanation forest recording why every union happened (rule id, "given" or "congruence").
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gg::symbolic {

using OpId = uint32_t;
using ClassId = uint32_t;
inline constexpr ClassId kNoClass = std::numeric_limits<ClassId>::max();
inline constexpr int kVariadic = -1;

// Symbol table of a language: op name <-> dense id, with its arity (kVariadic for any number of
// children) and whether the op is a payload leaf (`(num 5)`, `(tensor 17)`: no children, an
// int64 payload).
class OpTable {
 public:
  struct OpInfo {
    std::string name;
    int arity = 0;
    bool payload_leaf = false;
  };

  // Adds an op; throws std::invalid_argument on a duplicate name or a payload leaf with arity.
  OpId Add(std::string name, int arity);
  OpId AddPayloadLeaf(std::string name);
  std::optional<OpId> Find(std::string_view name) const;
  const OpInfo& Info(OpId op) const { return ops_[op]; }
  const std::string& Name(OpId op) const { return ops_[op].name; }
  size_t size() const { return ops_.size(); }

  // The payload leaf op that bare integers in patterns and terms stand for (`0` = `(num 0)`).
  // Defaults to the payload leaf named "num" when there is one.
  void SetLiteralOp(OpId op) { literal_op_ = op; }
  std::optional<OpId> literal_op() const;

 private:
  std::vector<OpInfo> ops_;
  std::unordered_map<std::string, OpId> by_name_;
  std::optional<OpId> literal_op_;
};

struct ENode {
  OpId op = 0;
  int64_t payload = 0;
  std::vector<ClassId> children;

  bool operator==(const ENode& other) const = default;
  // Total order (op, payload, children) used for deterministic sorting of class nodes.
  bool operator<(const ENode& other) const;
};

struct ENodeHash {
  size_t operator()(const ENode& node) const;
};

// A term as a flat vector of nodes; each child index refers to an earlier entry, the last entry
// is the root (egg's RecExpr). Shared subterms may be referenced several times.
struct RecExpr {
  std::vector<ENode> nodes;
  uint32_t Add(ENode node);
  uint32_t root() const { return static_cast<uint32_t>(nodes.size()) - 1; }
  bool empty() const { return nodes.empty(); }
  // `(add (num 1) x)`; payload leaves print as `(num 1)`; zero-ary ops print as their bare name.
  std::string ToString(const OpTable& ops) const;
};

class EGraph;

// Runtime interface of an e-class analysis (see AnalysisOf for the typed way to write one). The
// egraph calls MakeClass when a class is created, MergeClasses when two classes are unioned, and
// RemakeNode when congruence repair finds a node whose children's data may have changed.
class Analysis {
 public:
  struct MergeResult {
    bool into_changed = false;  // the surviving class's data changed: its parents need repair
    bool from_changed = false;  // the result differs from the absorbed class's data
  };
  virtual ~Analysis() = default;
  virtual void MakeClass(const EGraph& graph, ClassId id, const ENode& node) = 0;
  virtual MergeResult MergeClasses(ClassId into, ClassId from) = 0;
  // Merges Make(node) into class `into`; returns whether its data changed.
  virtual bool RemakeNode(const EGraph& graph, ClassId into, const ENode& node) = 0;
  // Called after a class was created or its data changed; may add nodes and union (e.g.
  // constant folding adds `(num k)`).
  virtual void Modify(EGraph& graph, ClassId id) {}
};

// Typed analysis via CRTP. Derived provides
//   Data Make(const EGraph&, const ENode&)   (children's data via (*this)[child])
//   bool Merge(Data& into, Data from)        (returns whether `into` changed)
// and may override Modify. Several analyses can be attached to one egraph; alternatively one
// analysis can carry a struct with several fields.
template <class Derived, class DataT>
class AnalysisOf : public Analysis {
 public:
  using Data = DataT;

  const Data& operator[](ClassId id) const;  // data of the class containing `id`

  void MakeClass(const EGraph& graph, ClassId id, const ENode& node) override {
    graph_ = &graph;
    if (data_.size() <= id) data_.resize(id + 1);
    data_[id].value = self().Make(graph, node);
  }
  MergeResult MergeClasses(ClassId into, ClassId from) override {
    MergeResult result;
    if constexpr (std::equality_comparable<Data>) {
      Data from_copy = data_[from].value;
      result.into_changed = self().Merge(data_[into].value, std::move(data_[from].value));
      result.from_changed = !(data_[into].value == from_copy);
    } else {
      result.into_changed = self().Merge(data_[into].value, std::move(data_[from].value));
      result.from_changed = true;  // unknown: repair conservatively
    }
    return result;
  }
  bool RemakeNode(const EGraph& graph, ClassId into, const ENode& node) override {
    return self().Merge(data_[into].value, self().Make(graph, node));
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const EGraph* graph_ = nullptr;
  struct Slot {  // (a wrapper so that Data = bool does not become std::vector<bool>)
    Data value{};
  };
  std::vector<Slot> data_;  // indexed by class id; only roots hold live data
};

// Why two classes were unioned. Reason ids are interned strings; 0 and 1 are reserved.
using ReasonId = uint32_t;
inline constexpr ReasonId kGivenReason = 0;
inline constexpr ReasonId kCongruenceReason = 1;

// One step of an explanation: the edge between two original e-nodes, the reason for it, and
// whether it is used in the direction it was recorded (a rule rewrote `from` into `to`).
struct ProofStep {
  std::string reason;
  bool forward = true;
  ClassId from = kNoClass;  // original node ids (see EGraph::NodeAt)
  ClassId to = kNoClass;
};

// A run of consecutive equal steps of an explanation: their reason and the direction they are
// used in (as ProofStep::forward).
struct ProofRun {
  ReasonId reason = kGivenReason;
  bool forward = true;
  bool operator==(const ProofRun& other) const = default;
};

class EGraph {
 public:
  struct Options {
    bool explanations = true;  // keep the explanation forest (costs two words per node)
  };

  explicit EGraph(const OpTable& ops) : EGraph(ops, Options{}) {}
  EGraph(const OpTable& ops, Options options);
  EGraph(const EGraph&) = delete;
  EGraph& operator=(const EGraph&) = delete;

  const OpTable& ops() const { return *ops_; }

  // The first attached analysis of type A, or nullptr (side conditions of rules read class facts
  // through it).
  template <class A>
  const A* FindAnalysis() const {
    for (const auto& analysis : analyses_) {
      if (const A* found = dynamic_cast<const A*>(analysis.get())) return found;
    }
    return nullptr;
  }

  // Attaches an analysis; must happen before the first node is added (std::logic_error
  // otherwise). Returns the analysis for typed access to its data.
  template <class A>
  A& AddAnalysis(std::unique_ptr<A> analysis) {
    A& ref = *analysis;
    AttachAnalysis(std::move(analysis));
    return ref;
  }

  // Adds a node (children are canonicalized) and returns its canonical class.
  ClassId Add(ENode node) { return Find(AddUncanonical(std::move(node))); }
  // As Add, but returns the id of the original e-node equal to `node` (for explanations).
  ClassId AddUncanonical(ENode node);
  ClassId AddExpr(const RecExpr& expr);
  ClassId AddExprUncanonical(const RecExpr& expr);
  // The class of an existing node/term, or nullopt; does not add anything.
  std::optional<ClassId> Lookup(ENode node) const;
  std::optional<ClassId> LookupExpr(const RecExpr& expr) const;

  ClassId Find(ClassId id) const;
  // Unions two classes; returns false if they already were one. Call Rebuild() before searching.
  bool Union(ClassId a, ClassId b, ReasonId reason = kGivenReason);
  ReasonId InternReason(std::string_view reason);
  const std::string& ReasonName(ReasonId id) const { return reasons_[id]; }

  // Restores congruence closure and analysis invariants (egg's deferred rebuild). Returns the
  // number of unions it performed.
  size_t Rebuild();
  bool clean() const { return pending_.empty() && analysis_pending_.empty(); }

  // Sizes: e-nodes (distinct nodes ever added; unions do not remove them) and live classes.
  size_t NumNodes() const { return nodes_.size(); }
  size_t NumClasses() const { return num_classes_; }
  // Canonical class ids in increasing order.
  std::vector<ClassId> ClassIds() const;
  // Canonical nodes of a class, sorted; after Rebuild() they are duplicate-free.
  std::span<const ENode> Nodes(ClassId id) const { return classes_[Find(id)].nodes; }
  // Original node ids of Nodes(id), in the same order.
  std::span<const ClassId> NodeIds(ClassId id) const { return classes_[Find(id)].node_ids; }
  // Nodes of a class with the given op (a contiguous run, since nodes are sorted by op first).
  std::span<const ENode> NodesWithOp(ClassId id, OpId op) const;
  // The e-node as originally added (children as they were then).
  const ENode& NodeAt(ClassId node_id) const { return nodes_[node_id]; }
  // Original ids of the nodes that have class `id` as a child (their children as added: compare
  // through Find; a node may be listed more than once).
  std::span<const ClassId> ParentNodeIds(ClassId id) const { return classes_[Find(id)].parents; }
  // Canonical classes containing a node with `op`, increasing; requires clean().
  const std::vector<ClassId>& ClassesWithOp(OpId op) const;

  // Chain of reasons connecting two original e-nodes (ids from AddUncanonical or
  // AddExprUncanonical), or nullopt if they are not equal. Requires explanations.
  std::optional<std::vector<ProofStep>> Explain(ClassId a_node, ClassId b_node) const;
  // Same, for two terms already in the graph; nullopt if either is absent or they differ.
  std::optional<std::vector<ProofStep>> ExplainExprs(const RecExpr& a, const RecExpr& b) const;
  // Explain(a_node, b) for each of `b_nodes`, as runs (consecutive steps with the same reason and
  // direction merged): what a report prints. One call walks each forest edge once, so explaining
  // every member of a class is linear in the class plus the output, where separate Explain calls
  // would walk the shared part of the paths again for each member (a class of one tensor per
  // layer and rank is a path a thousand edges deep).
  std::vector<std::optional<std::vector<ProofRun>>> ExplainRuns(
      ClassId a_node, std::span<const ClassId> b_nodes) const;

  // Canonical text of the whole graph (classes in id order with their nodes), for determinism
  // checks and debugging.
  std::string Dump() const;

  ENode Canonicalize(ENode node) const;

  // Records every mutating call made from outside (AddUncanonical, Union, InternReason's result,
  // Rebuild) into *trace from now on, and stops with nullptr; calls the graph makes on itself
  // (congruence unions, an analysis's Modify) are consequences and are not recorded. The graph's
  // state is a function of that record and of what its analyses read of each payload: equal
  // records from a fresh graph give equal graphs (memoized local inference, memo.h).
  void SetTrace(std::vector<int64_t>* trace) { trace_ = trace; }
  size_t NumReasons() const { return reasons_.size(); }

 private:
  // Depth of mutating calls in progress: only the outermost one is traced.
  struct TraceScope {
    explicit TraceScope(const EGraph& g) : graph(g) { ++graph.trace_depth_; }
    ~TraceScope() { --graph.trace_depth_; }
    TraceScope(const TraceScope&) = delete;
    TraceScope& operator=(const TraceScope&) = delete;
    const EGraph& graph;
  };
  bool Tracing() const { return trace_ != nullptr && trace_depth_ == 0; }

  struct EClass {
    std::vector<ENode> nodes;       // canonical after rebuild, sorted
    std::vector<ClassId> node_ids;  // original node id of each entry in `nodes`
    std::vector<ClassId> parents;   // node ids of nodes that have this class as a child
  };

  void AttachAnalysis(std::unique_ptr<Analysis> analysis);
  ClassId FindMutable(ClassId id);
  void RebuildClasses();
  void MakeExplainRoot(ClassId node);
  std::optional<ClassId> LookupNodeId(const ENode& canonical) const;

  const OpTable* ops_;
  Options options_;
  std::vector<std::unique_ptr<Analysis>> analyses_;
  std::vector<ENode> nodes_;                  // original nodes, by node id
  mutable std::vector<ClassId> union_find_;   // parent pointers (path compression in Find)
  std::vector<EClass> classes_;               // by class id; valid for roots only
  std::unordered_map<ENode, ClassId, ENodeHash> memo_;  // canonical node -> a node id
  std::vector<ClassId> pending_;              // node ids whose canonical form may have changed
  std::vector<ClassId> analysis_pending_;     // node ids whose analysis data must be remade
  std::vector<ClassId> dirty_classes_;        // classes whose node lists need re-canonicalizing
  size_t num_classes_ = 0;
  std::vector<std::string> reasons_;
  std::unordered_map<std::string, ReasonId> reason_ids_;
  // Explanation forest: one vertex per original node id; parent edge with reason and direction.
  std::vector<ClassId> explain_parent_;
  std::vector<ReasonId> explain_reason_;
  std::vector<uint8_t> explain_forward_;  // 1: the edge's reason rewrote this node into parent
  // Lazily built index op -> classes containing it (valid while by_op_valid_).
  mutable std::vector<std::vector<ClassId>> by_op_;
  mutable bool by_op_valid_ = false;
  std::vector<int64_t>* trace_ = nullptr;
  mutable int trace_depth_ = 0;
};

template <class Derived, class DataT>
const DataT& AnalysisOf<Derived, DataT>::operator[](ClassId id) const {
  return data_[graph_->Find(id)].value;
}

}  // namespace gg::symbolic
