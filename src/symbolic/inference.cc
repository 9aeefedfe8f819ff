#include "symbolic/inference.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <variant>

#include "ir/op_registry.h"
#include "symbolic/extract.h"
#include "symbolic/index_domain.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/local_graph.h"
#include "symbolic/lowering.h"
#include "symbolic/memo.h"
#include "symbolic/tensor_lang.h"
#include "symbolic/worker_pool.h"

namespace gg::symbolic {
namespace {

using ir::TensorRef;
using Clock = std::chrono::steady_clock;

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
                       const PlainRelations& plain, const DIndex& d_index) {
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
      // Relations name a repeated computation by its representative (DIndex::Canonical).
      named |= related.count(
                   {rank, d_index.Canonical(rank, TensorRef{id, static_cast<int32_t>(o)})}) != 0;
    }
    if (named) continue;
    std::set<TensorRef> s_inputs;  // the S tensors its inputs are replicas of
    bool replicas = true;
    for (TensorRef in : node.TensorInputs()) {
      if (InputFree(d_graph, d_graph.node(in.node))) continue;
      auto it = plain.s_of.find({rank, d_index.Canonical(rank, in)});
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

// Hints of at most this many D tensors are added to a guided attempt's e-graph as its goal.
constexpr size_t kMaxHintTargetLeaves = 16;

// A hint worth making a goal: a D tensor, or concats and sums of D tensors (at most
// kMaxHintTargetLeaves). A hint with views in it (reshape, permute, slice) is no shorter for the
// consumers than the clean member found first, and reaching it costs a deeper search. *leaves
// counts the D tensors seen so far.
bool IsFlatHint(const RelExpr& expr, size_t* leaves) {
  return std::visit(
      [&](const auto& kind) {
        using Kind = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<Kind, DTensor>) {
          return ++*leaves <= kMaxHintTargetLeaves;
        } else if constexpr (std::is_same_v<Kind, Concat> || std::is_same_v<Kind, Sum>) {
          return std::all_of(kind.children.begin(), kind.children.end(),
                             [&](const RelExpr& c) { return IsFlatHint(c, leaves); });
        } else {
          return false;
        }
      },
      expr.node().kind);
}

bool IsFlatHint(const RelExpr& expr) {
  size_t leaves = 0;
  return IsFlatHint(expr, &leaves);
}

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
std::optional<RelExpr> ToRelExpr(const RecExpr& expr, uint32_t index, const LeafTable& leaves,
                                 bool* flattened = nullptr) {
  const TensorLanguage& lang = TensorLanguage::Get();
  const ENode& n = expr.nodes[index];
  auto num = [&](size_t i) { return expr.nodes[n.children[i]].payload; };
  auto child = [&](size_t i) { return ToRelExpr(expr, n.children[i], leaves, flattened); };
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
    // A concat's children that are concats along the same dimension are spliced in (the
    // lemma concat-flatten): a search stopped as soon as its goal held may not have flattened
    // them yet, and the relation reported and passed on reads the same either way.
    std::vector<RelExpr> flat;
    for (RelExpr& c : *ch) {
      const auto* inner = std::get_if<Concat>(&c.node().kind);
      if (inner != nullptr && inner->dim == num(0)) {
        flat.insert(flat.end(), inner->children.begin(), inner->children.end());
        if (flattened != nullptr) *flattened = true;
      } else {
        flat.push_back(std::move(c));
      }
    }
    return RelExpr::Concat(num(0), std::move(flat));
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
  if (n.op == lang.transpose) {
    auto c = child(0);
    if (!c) return std::nullopt;
    return RelExpr::Transpose(*c, num(1), num(2));
  }
  // (op x ints...): reshape, expand and permute take their integers as trailing children.
  using IntListOp = RelExpr (*)(RelExpr, std::vector<int64_t>);
  for (auto [op, make] : {std::pair<OpId, IntListOp>{lang.reshape, &RelExpr::Reshape},
                          std::pair<OpId, IntListOp>{lang.expand, &RelExpr::Expand},
                          std::pair<OpId, IntListOp>{lang.permute, &RelExpr::Permute}}) {
    if (n.op != op) continue;
    auto c = child(0);
    if (!c) return std::nullopt;
    std::vector<int64_t> ints;
    for (size_t i = 1; i < n.children.size(); ++i) ints.push_back(num(i));
    return make(*c, std::move(ints));
  }
  return std::nullopt;
}

// The tensors an S node's value depends on: what its lowered term reads (ReadInputs) for an
// operator, its tensor inputs otherwise.
std::vector<TensorRef> NodeReads(const ir::Graph& s_graph, ir::NodeId id, const SpecResult& spec) {
  const ir::Node& node = s_graph.node(id);
  return node.kind == ir::NodeKind::kOperator ? ReadInputs(s_graph, id, &spec.constants)
                                              : node.TensorInputs();
}

// The S nodes the expected tensors depend on, as a mask: through the tensors each operator's
// lowered term reads (ReadInputs: all its inputs when it is opaque; index_put of `x[rows, cols]
// -= u` reads x, the indices and u, not the updated values it is handed), which is what the proof
// of its relation uses. Assumed and cut tensors are leaves: the node producing one is needed only
// when another of its outputs is, and nothing upstream of a leaf is (the region a spec checks
// ends at its cuts).
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
    for (TensorRef in : NodeReads(s_graph, id, spec)) stack.push_back(in);
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
    case HintUse::kLeftUnrelated:
      return "left-unrelated";
    case HintUse::kFullRelated:
      return "full-related";
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

namespace {

// "name (f32->bf16)" for each operator of `graph` whose floating output has fewer significand
// bits than its first floating input.
std::vector<std::string> NarrowingConversions(const ir::Graph& graph) {
  std::vector<std::string> found;
  for (const ir::Node& node : graph.nodes) {
    if (node.kind != ir::NodeKind::kOperator) continue;
    int from_bits = 0;
    ir::DType from = ir::DType::kFloat32;
    for (ir::TensorRef in : node.TensorInputs()) {
      from = graph.type(in).dtype;
      from_bits = ir::SignificandBits(from);
      if (from_bits > 0) break;
    }
    if (from_bits == 0) continue;
    for (const ir::NodeOutput& out : node.outputs) {
      if (!out.type) continue;
      const int bits = ir::SignificandBits(out.type->dtype);
      if (bits > 0 && bits < from_bits) {
        found.push_back(node.name + " (" + std::string(ir::ShortName(from)) + "->" +
                        std::string(ir::ShortName(out.type->dtype)) + ")");
        break;
      }
    }
  }
  return found;
}

}  // namespace

std::vector<Premise> RoundingPremises(const ir::Graph& s_graph, const ir::Program& d_program,
                                      const std::vector<Rewrite>& rules,
                                      const VerifyResult& result) {
  std::set<std::string> rounding_ids;
  for (const Rewrite& rule : rules) {
    if (IsRoundingRule(rule)) rounding_ids.insert(rule.id);
  }
  if (rounding_ids.empty()) return {};
  std::set<std::string> used;
  auto scan = [&](const std::vector<std::string>& proof) {
    for (const std::string& step : proof) {
      if (rounding_ids.count(step)) used.insert(step);
    }
  };
  for (const OutputCheck& output : result.outputs) scan(output.proof);
  for (const auto& [name, rels] : result.relations) {
    for (const InferredRelation& rel : rels) scan(rel.proof);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> conversions;
  auto collect = [&](const ir::Graph& graph, std::string where) {
    std::vector<std::string> found = NarrowingConversions(graph);
    if (!found.empty()) conversions.emplace_back(std::move(where), std::move(found));
  };
  collect(s_graph, "S");
  for (int32_t r = 0; r < d_program.world_size(); ++r) {
    collect(d_program.rank(r), "D rank " + std::to_string(r));
  }
  if (used.empty() && conversions.empty()) return {};
  std::string text = "floating-point rounding at casts ignored";
  if (!used.empty()) {
    text += "; used:";
    for (const std::string& id : used) text += " " + id;
  }
  constexpr size_t kNamed = 4;  // conversions named per graph
  for (const auto& [where, names] : conversions) {
    text += "; " + where + " narrows:";
    for (size_t i = 0; i < names.size() && i < kNamed; ++i) text += (i ? ", " : " ") + names[i];
    if (names.size() > kNamed) text += " and " + std::to_string(names.size() - kNamed) + " more";
  }
  return {{"rounding", text, kRoundingFile}};
}

namespace {

// One run of relation inference and its verdict (Verify). The state the S operators share lives
// here: what is known per S tensor, which S tensors were read, which failed operators may be
// carried into their consumers, the memo of local problems. Run() takes the S operators level by
// level (InferLevel), checks the expected outputs, then decides.
class Verifier {
 public:
  Verifier(const ir::Graph& s_graph, const ir::Program& d_program, const SpecResult& spec,
           const std::vector<Rewrite>& rules, const InferenceOptions& options)
      : s_graph_(s_graph),
        d_program_(d_program),
        spec_(spec),
        rules_(rules),
        options_(options),
        d_index_(d_program),
        rng_positional_(spec.rng_model == "positional"),
        pool_(options.threads) {
    d_index_.SetConstants(&spec.constants);
    result_.hints_given = options.hints != nullptr ? options.hints->count() : 0;
  }

  VerifyResult Run() {
    auto start = Clock::now();
    for (const Relation& r : spec_.inputs) Remember(r, {"spec: " + r.origin});
    for (const Relation& r : spec_.assumed) Remember(r, {"assumed: " + r.origin});
    d_index_.AddComputedReplicas();

    needed_ = NeededNodes(s_graph_, spec_);
    // Cuts without a relation: a leaf nothing is known of. An operator of the region that reads
    // one is blocked, and the verdict names the cut (it is never REFINES).
    for (const CutPoint& c : spec_.cuts) {
      if (!c.related) unrelated_cuts_.emplace(c.s_tensor, c.origin);
    }
    // Which outputs of each S node matter: read by a needed node (NeededNodes), or expected.
    for (size_t id = 0; id < s_graph_.nodes.size(); ++id) {
      if (!needed_[id] || InputFree(s_graph_, s_graph_.nodes[id])) continue;
      for (TensorRef in : NodeReads(s_graph_, static_cast<ir::NodeId>(id), spec_)) {
        wanted_.insert(in);
      }
    }
    for (const Relation& r : spec_.expected_outputs) wanted_.insert(r.s_tensor);
    for (const Relation& r : spec_.expected_outputs) used_.insert(r.s_tensor);

    for (const std::vector<size_t>& level : Levels()) InferLevel(level);
    // In topological (node) order, as the operators of a level are recorded as they finish.
    std::stable_sort(
        result_.nodes.begin(), result_.nodes.end(),
        [](const NodeOutcome& a, const NodeOutcome& b) { return a.s_node < b.s_node; });
    CheckOutputs();
    Decide();
    for (const auto& [ref, rels] : known_) result_.relations[s_graph_.ValueName(ref)] = rels;
    // Each operator's row carries the relations known for its outputs (the report's nodes[]).
    for (NodeOutcome& n : result_.nodes) {
      const size_t outputs = s_graph_.nodes[static_cast<size_t>(n.s_node)].outputs.size();
      for (size_t i = 0; i < outputs; ++i) {
        auto it = known_.find(TensorRef{n.s_node, static_cast<int32_t>(i)});
        if (it != known_.end())
          n.relations.insert(n.relations.end(), it->second.begin(), it->second.end());
      }
    }
    AddPremises(&result_, spec_.premises);
    // Index ids proved non-negative only from the integer inputs' assumed non-negativity.
    AddPremises(&result_, IndexDomainPremises(s_graph_, "S", &spec_.constants));
    for (int32_t r = 0; r < d_program_.world_size(); ++r) {
      const std::string where = "D rank " + std::to_string(r);
      AddPremises(&result_, IndexDomainPremises(d_program_.rank(r), where, &spec_.constants));
    }
    // Casts commuted with sums up to rounding (rounding.rules), or narrowing casts in the graphs.
    AddPremises(&result_, RoundingPremises(s_graph_, d_program_, rules_, result_));
    result_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::move(result_);
  }

 private:
  // One search of an operator's local e-graph (Search).
  struct Attempt {
    NodeOutcome outcome;
    bool blocked = false;
    bool truncated = false;
    bool inlined = false;  // S definitions of unrelated operators were carried into it
  };

  // Records a relation of an S tensor (once), and a plain one's D tensor as a replica.
  void Remember(const Relation& r, std::vector<std::string> proof) {
    auto& list = known_[r.s_tensor];
    auto& exprs = known_exprs_[r.s_tensor];
    if (exprs.count(r.expr)) return;
    bool keep = options_.max_relations == 0 || list.size() < options_.max_relations;
    if (const auto* d = std::get_if<DTensor>(&r.expr.node().kind)) {
      d_index_.AddReplica(r.s_tensor, DKey{d->rank, d->tensor}, keep);
    } else if (std::holds_alternative<Concat>(r.expr.node().kind) ||
               std::holds_alternative<Scale>(r.expr.node().kind)) {
      std::vector<std::pair<std::vector<int64_t>, DKey>> pieces;
      std::vector<int64_t> offsets(s_graph_.type(r.s_tensor).shape.size(), 0);
      if (ConcatPieces(r.expr, offsets, &pieces)) {
        for (const auto& [region, key] : pieces) {
          d_index_.AddPieceReplica(r.s_tensor, region, key, keep);
        }
      }
    }
    if (keep) {
      exprs.insert(r.expr);
      list.push_back({r, std::move(proof)});
    }
  }

  // The D tensors of a tree of concats over D tensors (each possibly scaled by a nonzero number)
  // with their regions in the whole (per dim the offset, then per dim the size, then the
  // factor's bits when it is not 1: pieces are replicas only at one factor), the piece at
  // `offsets`; false for any other expression or a size that is not static. Returns the pieces'
  // extent through `offsets`' dims.
  bool ConcatPieces(const RelExpr& expr, std::vector<int64_t> offsets,
                    std::vector<std::pair<std::vector<int64_t>, DKey>>* pieces,
                    std::vector<int64_t>* extent = nullptr, double factor = 1.0) const {
    std::vector<int64_t> sizes;
    if (const auto* d = std::get_if<DTensor>(&expr.node().kind)) {
      const ir::TensorType& t = d_program_.rank(d->rank).type(d->tensor);
      if (t.shape.size() != offsets.size()) return false;
      for (const ir::Dim& dim : t.shape) {
        if (!dim.is_static()) return false;
        sizes.push_back(dim.value());
      }
      std::vector<int64_t> region = offsets;
      region.insert(region.end(), sizes.begin(), sizes.end());
      if (factor != 1.0) region.push_back(std::bit_cast<int64_t>(factor));
      pieces->emplace_back(std::move(region), DKey{d->rank, d->tensor});
    } else if (const auto* sc = std::get_if<Scale>(&expr.node().kind)) {
      if (sc->factor == 0.0 || !std::isfinite(sc->factor)) return false;
      return ConcatPieces(sc->child, std::move(offsets), pieces, extent, factor * sc->factor);
    } else if (const auto* c = std::get_if<Concat>(&expr.node().kind)) {
      const auto rank = static_cast<int64_t>(offsets.size());
      const int64_t dim = c->dim < 0 ? c->dim + rank : c->dim;
      if (dim < 0 || dim >= rank || c->children.empty()) return false;
      for (const RelExpr& child : c->children) {
        std::vector<int64_t> child_sizes;
        if (!ConcatPieces(child, offsets, pieces, &child_sizes, factor)) return false;
        if (sizes.empty()) {
          sizes = child_sizes;
        } else {
          sizes[static_cast<size_t>(dim)] += child_sizes[static_cast<size_t>(dim)];
        }
        offsets[static_cast<size_t>(dim)] += child_sizes[static_cast<size_t>(dim)];
      }
    } else {
      return false;
    }
    if (extent) *extent = std::move(sizes);
    return true;
  }

  // Lowers S node `sid` into `local` over its inputs' classes.
  LoweredNode LowerS(LocalGraph& local, ir::NodeId sid, std::vector<TensorRef>* missing) {
    const ir::Node& n = s_graph_.node(sid);
    LoweredNode l;
    l.outputs.assign(n.outputs.size(), std::nullopt);
    l.opaque.assign(n.outputs.size(), false);
    ir::CollectiveKind kind = CollectiveOf(n);
    if (kind != ir::CollectiveKind::kNone) {
      std::vector<TensorRef> ins = n.TensorInputs();
      if (!ins.empty() && n.outputs[0].type) {
        ClassId in = InputClass(local, ins[0], missing);
        l.outputs[0] = kind == ir::CollectiveKind::kWait
                           ? std::optional<ClassId>(in)
                           : LowerCollective(local.egraph(), n, {in}, 0, *n.outputs[0].type);
      }
      return l;
    }
    return LowerNode(
        local.egraph(), local.analysis(), s_graph_, sid,
        [&](TensorRef r) { return InputClass(local, r, missing); }, "S:" + std::to_string(sid),
        &spec_.constants, rng_positional_);
  }

  // The class of an S tensor an operator reads: its leaf, united with every known relation (or
  // with its own term when an input-free node produced it). Inputs read without a relation are
  // collected in *missing; every read input is recorded as used.
  ClassId InputClass(LocalGraph& local, TensorRef in, std::vector<TensorRef>* missing) {
    used_.insert(in);
    bool fresh = !local.HasSLeaf(in);
    ClassId leaf = local.SLeaf(in);
    if (!fresh) return leaf;
    auto it = known_.find(in);
    if (it != known_.end() && !it->second.empty()) {
      ReasonId reason = local.egraph().InternReason("relation of " + s_graph_.ValueName(in));
      for (const InferredRelation& rel : it->second) {
        local.egraph().Union(leaf, local.AddRelExpr(rel.relation.expr), reason);
      }
      // Read by an S operator carried into a consumer: S's own definition of this related tensor
      // joins too (one level; its inputs only through their own relations), so that a lemma
      // spanning several S operators sees their structure (the vocabulary-parallel target logit:
      // a mask (t < a) | (t >= b) over the targets t), and the D tensors related to those inputs
      // bring the D operators computing the same thing into the neighbourhood. Sound: it is S's
      // own computation; an input without a relation (or input-free producer) skips it.
      const ir::Node& producer = s_graph_.node(in.node);
      if (inline_depth_ > 0 && !defining_related_ && producer.kind == ir::NodeKind::kOperator &&
          !InputFree(s_graph_, producer)) {
        bool inputs_related = true;
        for (TensorRef r : producer.TensorInputs()) {
          auto k = known_.find(r);
          bool related = local.HasSLeaf(r) || (k != known_.end() && !k->second.empty()) ||
                         InputFree(s_graph_, s_graph_.node(r.node));
          inputs_related = inputs_related && related;
        }
        if (inputs_related) {
          defining_related_ = true;
          std::vector<TensorRef> unrelated;
          LoweredNode l = LowerS(local, in.node, &unrelated);
          defining_related_ = false;
          if (unrelated.empty() && in.output < static_cast<int32_t>(l.outputs.size()) &&
              l.outputs[in.output]) {
            local.egraph().Union(leaf, *l.outputs[in.output],
                                 local.egraph().InternReason("S:" + producer.name));
          }
        }
      }
    } else if (InputFree(s_graph_, s_graph_.node(in.node))) {
      local.LowerInputFreeS(in.node);
    } else if (inlinable_.count(in.node) && !defining_related_ &&
               inline_depth_ < options_.max_inline_depth) {
      ++inline_depth_;
      LoweredNode l = LowerS(local, in.node, missing);
      --inline_depth_;
      ReasonId reason = local.egraph().InternReason("S:" + s_graph_.node(in.node).name);
      for (size_t i = 0; i < l.outputs.size(); ++i) {
        if (l.outputs[i]) {
          local.egraph().Union(local.SLeaf(TensorRef{in.node, static_cast<int32_t>(i)}),
                               *l.outputs[i], reason);
        }
      }
      if (inlined_now_) inlined_now_->insert(in.node);
    } else {
      missing->push_back(in);
    }
    return local.egraph().Find(leaf);
  }

  // One S operator's inference in progress: the attempt to make next (the guided one when every
  // wanted output has a hint, else each deepening step of the full search) and the work so far.
  struct OperatorSearch {
    ir::NodeId id = -1;
    std::vector<size_t> outs;                           // the wanted outputs
    std::vector<std::pair<TensorRef, RelExpr>> hinted;  // their hints (empty: none)
    bool hint_next = false;                             // the next attempt is the guided one
    bool hint_failed = false;  // the guided attempt failed: the full search follows
    int32_t hops = 0;          // else the next attempt's depth
    int32_t limit_deepenings = 0;  // deeper attempts made after a node or iteration limit
    bool done = false;
    bool blocked = false;
    HintUse hint_use = HintUse::kNone;
    NodeOutcome outcome;  // the last attempt's
    size_t attempts = 0, work_nodes = 0, work_classes = 0, work_iterations = 0;
    double seconds = 0;  // its own phases' time (not that of operators searched alongside)
  };

  // One attempt's local problem, built and keyed, before its saturation.
  struct Prepared {
    std::unique_ptr<InferenceOptions> options;  // the attempt's (its depth); read by `local`
    std::unique_ptr<LocalGraph> local;
    bool hinted = false;
    std::vector<bool> opaque;           // per output of the S operator: no lowering
    std::set<ir::NodeId> inlined_here;  // S operators lowered into it (inlinable_)
    // Guided attempts: per wanted output, the classes of its hints' expressions (small ones
    // only, kMaxHintTargetLeaves); the goal is then one of them, not any clean member.
    std::map<size_t, std::vector<ClassId>> hint_targets;
    bool goal_reached = false;
    bool dumping = false;
    bool memoize = false;
    LocalProblemKey key;
    const LocalSolution* cached = nullptr;  // an identical earlier problem's solution
    bool solve = false;                     // saturated in the parallel phase
    LocalSolution solved;
    bool cacheable = true;
    Attempt attempt;  // blocked before any search: attempt.blocked and its outcome
  };

  // The operators of each level of S (one more than the deepest operator an input comes from),
  // in node order: operators of one level do not read each other's outputs.
  std::vector<std::vector<size_t>> Levels() const {
    std::vector<size_t> level(s_graph_.nodes.size(), 0);
    std::vector<std::vector<size_t>> levels;
    for (size_t idx = 0; idx < s_graph_.nodes.size(); ++idx) {
      const ir::Node& node = s_graph_.nodes[idx];
      size_t l = 0;
      for (TensorRef in : node.TensorInputs()) {
        l = std::max(l, level[static_cast<size_t>(in.node)] + 1);
      }
      level[idx] = l;
      if (levels.size() <= l) levels.resize(l + 1);
      levels[l].push_back(idx);
    }
    return levels;
  }

  // Infers the operators of one level. Each round builds the next attempt of every operator
  // still open (in node order, on this thread: building reads and extends shared state), then
  // saturates the new problems in parallel (a saturation touches only its own e-graph and the
  // read-only rules), then takes the solutions in node order. The rounds, and so every relation,
  // proof and count, are the same for any thread count.
  void InferLevel(const std::vector<size_t>& level) {
    std::vector<OperatorSearch> searches;
    for (size_t idx : level) {
      if (std::optional<OperatorSearch> s = BeginOperator(idx)) searches.push_back(std::move(*s));
    }
    while (true) {
      std::vector<OperatorSearch*> open;
      for (OperatorSearch& s : searches) {
        if (!s.done) open.push_back(&s);
      }
      if (open.empty()) return;
      std::vector<Prepared> round(open.size());
      std::vector<size_t> to_solve;
      // Problems of this round already to be solved (views of their keys in `round`).
      std::unordered_set<std::string_view> keys;
      for (size_t i = 0; i < open.size(); ++i) {
        auto start = Clock::now();
        round[i] = Prepare(*open[i]);
        open[i]->seconds += Seconds(start);
        const Prepared& p = round[i];
        if (p.attempt.blocked || p.cached != nullptr) continue;
        // A problem equal to one earlier in the round waits for its solution (below), as it
        // would wait for it in the memo if the two were searched one after the other.
        if (p.memoize && !keys.insert(p.key.bytes()).second) continue;
        round[i].solve = true;
        to_solve.push_back(i);
      }
      std::vector<double> solve_seconds(round.size(), 0);
      pool_.ParallelFor(to_solve.size(), [&](size_t k) {
        auto start = Clock::now();
        Prepared& p = round[to_solve[k]];
        p.solved = Solve(p, *open[to_solve[k]]);
        solve_seconds[to_solve[k]] = Seconds(start);
      });
      for (size_t i = 0; i < open.size(); ++i) {
        OperatorSearch& s = *open[i];
        Prepared& p = round[i];
        auto start = Clock::now();
        if (!p.attempt.blocked) p.attempt = Finish(p, s);
        s.seconds += solve_seconds[i] + Seconds(start);
        Advance(s, std::move(p.attempt));
        p.local.reset();
      }
    }
  }

  static double Seconds(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // The search of S operator `idx`, or nullopt when it needs none (not needed, input-free, no
  // wanted output, or every wanted output assumed).
  std::optional<OperatorSearch> BeginOperator(size_t idx) {
    const ir::NodeId id = static_cast<ir::NodeId>(idx);
    const ir::Node& node = s_graph_.node(id);
    if (!needed_[id] || node.kind != ir::NodeKind::kOperator || InputFree(s_graph_, node)) {
      return std::nullopt;
    }
    OperatorSearch s;
    s.id = id;
    bool all_assumed = true;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      TensorRef ref{id, static_cast<int32_t>(i)};
      if (!node.outputs[i].type || !wanted_.count(ref)) continue;
      s.outs.push_back(i);
      if (!known_.count(ref)) all_assumed = false;
    }
    if (s.outs.empty() || all_assumed) return std::nullopt;
    if (options_.progress) options_.progress(id);
    // Hints: when every wanted output has one, the only search is over the D operators leading
    // to the hinted tensors (Advance).
    if (options_.hints != nullptr) {
      for (size_t i : s.outs) {
        TensorRef ref{id, static_cast<int32_t>(i)};
        auto it = options_.hints->by_tensor.find(ref);
        if (it == options_.hints->by_tensor.end() || it->second.empty()) {
          s.hinted.clear();
          break;
        }
        for (const RelExpr& expr : it->second) s.hinted.emplace_back(ref, expr);
      }
    }
    s.hint_next = !s.hinted.empty();
    // Iterative deepening over the D neighbourhood: start with few computing D operators beyond
    // the related tensors and double the depth while the operator stays unrelated and the
    // neighbourhood still grows. A relation found shallow stays small; the depth limit is
    // explicit and reported when it stops the search.
    s.hops = std::max<int32_t>(options_.compute_hops, 0);
    return s;
  }

  // Takes one attempt's result and decides whether the operator needs another.
  void Advance(OperatorSearch& s, Attempt a) {
    auto count_work = [&](const NodeOutcome& o) {
      ++s.attempts;
      s.work_nodes += o.egraph_nodes;
      s.work_classes += o.egraph_classes;
      s.work_iterations += o.iterations;
    };
    s.outcome = std::move(a.outcome);
    if (s.hint_next) {
      s.hint_next = false;
      if (a.blocked) {
        // Blocked before any search: the full search would be too, and says so the same way.
        s.blocked = true;
        s.outcome.hops = options_.compute_hops;
        return FinishOperator(s);
      }
      count_work(s.outcome);
      if (s.outcome.status == NodeStatus::kInferred) {
        s.hint_use = HintUse::kRelated;
        for (const auto& [ref, expr] : s.hinted) {
          auto known = known_.find(ref);
          if (known == known_.end()) continue;
          for (const InferredRelation& r : known->second) {
            if (r.relation.expr == expr) {
              ++result_.hints_proved;
              break;
            }
          }
        }
      } else if (s.outcome.status != NodeStatus::kConflict) {
        // The numbers put the relation among the hinted tensors, so a search of everything
        // around them costs far more than it is likely to find: no full search, unless the
        // operator reads both a related tensor and one without a relation whose S definition
        // was carried in. Then the proof needs D operators that the paths to the hinted
        // tensors miss (a masked vocabulary-parallel logit reads a mask no D tensor matches),
        // and an operator left unrelated there fails its consumers and costs the whole run
        // again without hints: the full search follows. (One reading only unrelated tensors
        // sits in a chain S computes alone, where the full search finds nothing either.)
        if (a.inlined && SomeInputRelated(s.id)) {
          s.hint_failed = true;
          return;
        }
        // Left without a relation, the operator's S definition is carried into its consumers;
        // a run that does not end REFINES is searched again without hints (Verify), so the
        // verdict never depends on them.
        s.hint_use = HintUse::kLeftUnrelated;
        s.outcome.status = NodeStatus::kNoRelation;
        s.outcome.detail = "the search towards its hints found none (" + s.outcome.detail + ")";
      }
      return FinishOperator(s);
    }
    if (a.blocked) {
      s.blocked = true;
      return FinishOperator(s);
    }
    count_work(s.outcome);
    if (s.hint_failed && s.outcome.status == NodeStatus::kInferred) {
      s.hint_use = HintUse::kFullRelated;
    }
    // A node or iteration limit in a neighbourhood cut short: the saturation spread over
    // rewrites of what it held before the terms it needed were there. A deeper neighbourhood
    // holds more of D, and its search ends at the goal as soon as S meets them (the zig-zag
    // split's backward: 8 computing operators hit the node limit, 16 relate the operator), so a
    // bounded number of deeper attempts follow (a time limit ends the search: it would again).
    const bool node_or_iteration_limit =
        s.outcome.status == NodeStatus::kLimitHit &&
        (s.outcome.stop == StopReason::kNodeLimit || s.outcome.stop == StopReason::kIterationLimit);
    if (node_or_iteration_limit && a.truncated && s.hops < options_.max_compute_hops &&
        s.limit_deepenings < options_.limit_deepenings) {
      ++s.limit_deepenings;
      s.hops = std::max(1, s.hops * 2);
      return;
    }
    // Related, a limit, or a conflict; or the whole reachable neighbourhood was searched (a real
    // dead end under the catalogue).
    if (s.outcome.status != NodeStatus::kNoRelation || !a.truncated) return FinishOperator(s);
    if (s.hops >= options_.max_compute_hops) {
      s.outcome.status = NodeStatus::kLimitHit;
      s.outcome.detail += "; stopped: D neighbourhood depth limit (" +
                          std::to_string(options_.max_compute_hops) + " computing operators)";
      return FinishOperator(s);
    }
    s.hops = std::max(1, s.hops * 2);
  }

  // Whether some tensor the S operator reads has a relation.
  bool SomeInputRelated(ir::NodeId id) const {
    for (const TensorRef& ref : NodeReads(s_graph_, id, spec_)) {
      auto known = known_.find(ref);
      if (known != known_.end() && !known->second.empty()) return true;
    }
    return false;
  }

  // Records the operator's outcome.
  void FinishOperator(OperatorSearch& s) {
    s.done = true;
    NodeOutcome& outcome = s.outcome;
    if (s.blocked) {
      result_.nodes.push_back(std::move(outcome));
      return;
    }
    // A full search after a failed guided one that found nothing either.
    if (s.hint_failed && s.hint_use == HintUse::kNone) s.hint_use = HintUse::kLeftUnrelated;
    outcome.hint = s.hint_use;
    outcome.attempts = s.attempts;
    outcome.work_nodes = s.work_nodes;
    outcome.work_classes = s.work_classes;
    outcome.work_iterations = s.work_iterations;
    if (s.hint_use == HintUse::kRelated) ++result_.hints_related;
    if (s.hint_use == HintUse::kLeftUnrelated) ++result_.hints_left_unrelated;
    if (s.hint_use == HintUse::kFullRelated) ++result_.hints_full_related;
    // Without a relation its outputs can still be read through S's definition (inlined into a
    // consumer), also the outputs an inferred operator left unrelated because no needed
    // operator's term reads them (nll_loss_forward's total_weight) but a consumer's inputs do.
    bool unrelated_output = outcome.status == NodeStatus::kNoRelation;
    for (size_t o = 0; o < s_graph_.node(s.id).outputs.size() && !unrelated_output; ++o) {
      auto known = known_.find(TensorRef{s.id, static_cast<int32_t>(o)});
      unrelated_output = outcome.status == NodeStatus::kInferred &&
                         (known == known_.end() || known->second.empty());
    }
    if (unrelated_output) inlinable_.insert(s.id);
    outcome.seconds = s.seconds;
    result_.max_egraph_nodes = std::max(result_.max_egraph_nodes, outcome.egraph_nodes);
    result_.total_egraph_nodes += outcome.egraph_nodes;
    result_.nodes.push_back(std::move(outcome));
  }

  // Builds the next attempt's local e-graph. With hints (the hint expressions of the wanted
  // outputs) the D neighbourhood is narrowed to the D operators between the related D tensors
  // and the hinted ones, with no depth limit; otherwise it is every D
  // operator within `hops` computing operators of the related tensors. Either way the relation
  // kept is the one the e-graph proves: a hint is only where the search looks.
  Prepared Prepare(const OperatorSearch& s) {
    const ir::NodeId id = s.id;
    const ir::Node& node = s_graph_.node(id);
    const std::vector<std::pair<TensorRef, RelExpr>>* hinted = s.hint_next ? &s.hinted : nullptr;
    Prepared p;
    p.hinted = hinted != nullptr;
    NodeOutcome& outcome = p.attempt.outcome;
    p.options = std::make_unique<InferenceOptions>(options_);
    p.options->compute_hops = hinted ? options_.max_compute_hops : s.hops;
    outcome.s_node = id;
    outcome.hops = p.options->compute_hops;
    p.local = std::make_unique<LocalGraph>(s_graph_, d_program_, d_index_, *p.options);
    LocalGraph& local = *p.local;
    local.SetConstants(&spec_.constants);
    local.SetRngPositional(rng_positional_);
    std::vector<TensorRef> missing;
    // The S operator itself (S collectives run on one rank: identity or a size-1 reduction).
    inlined_now_ = &p.inlined_here;
    LoweredNode self = LowerS(local, id, &missing);
    inlined_now_ = nullptr;
    p.opaque = self.opaque;
    if (!missing.empty()) {
      outcome.status = NodeStatus::kBlocked;
      outcome.detail = "input " + s_graph_.ValueName(missing.front()) + " has no relation";
      for (TensorRef m : missing) {
        auto cut = unrelated_cuts_.find(m);
        if (cut == unrelated_cuts_.end()) continue;
        outcome.detail =
            "input " + s_graph_.ValueName(m) + " is cut without a relation (" + cut->second + ")";
        blocked_by_cut_.emplace(id, m);
        break;
      }
      p.attempt.blocked = true;
      return p;
    }
    ReasonId s_reason = local.egraph().InternReason("S:" + node.name);
    for (size_t i : s.outs) {
      if (self.outputs[i]) {
        local.egraph().Union(local.SLeaf(TensorRef{id, static_cast<int32_t>(i)}), *self.outputs[i],
                             s_reason);
      }
    }
    // The search is narrowed to the paths to the hinted D tensors. A small hint expression is
    // also added, as the goal: a clean member found at once (an S view of a related tensor is
    // one: the view over the input's relation) is a long term that every consumer must push
    // through the concats again, in one ever deeper search; the hinted form (the view's D
    // counterparts) keeps each consumer's search shallow. A large one (a concat of hundreds of
    // one-row slices costs more to saturate than the whole search without hints) stays a
    // target only. Adding a term asserts nothing: the goal is met only where the e-graph proves
    // the S output equal to it.
    if (hinted) {
      local.RestrictToPathsTo(*hinted);
      for (const auto& [ref, expr] : *hinted) {
        if (!IsFlatHint(expr)) continue;
        p.hint_targets[static_cast<size_t>(ref.output)].push_back(local.AddRelExpr(expr));
      }
    }
    // An expected output's relation is a candidate term of its operator's e-graph (added after
    // the hints' paths are drawn, which start from D tensors not yet in the e-graph): a form the
    // lemmas reach from it, not from S (a mean of micro-batch means scale(1/m, sum(...)) meets
    // S's mean x / n only as x_k / (n / m) * (1 / m)). Adding a term asserts nothing.
    for (const Relation& expected : spec_.expected_outputs) {
      if (expected.s_tensor.node != id) continue;
      if (std::find(s.outs.begin(), s.outs.end(), static_cast<size_t>(expected.s_tensor.output)) ==
          s.outs.end()) {
        continue;
      }
      local.AddRelExpr(expected.expr);
    }
    local.ExpandD();
    local.egraph().Rebuild();
    outcome.candidates = local.Candidates();
    p.goal_reached = GoalReached(local, s, p.hint_targets);
    // The key: everything the saturation and extraction can observe (memo.h). The operator of
    // InferenceOptions::dump_egraph is always saturated, so that its e-graph can be printed.
    p.dumping = !options_.dump_egraph.empty() && node.name == options_.dump_egraph;
    p.memoize = options_.memoize && !p.dumping;
    const std::vector<int64_t>* trace = options_.memoize ? &local.EndTrace() : nullptr;
    if (p.memoize) {
      LocalProblemKey& key = p.key;
      key.Add(hinted ? 1 : 0);
      key.AddAll(*trace);
      key.Add(static_cast<int64_t>(local.egraph().NumReasons()));
      key.AddLeaves(local.leaves());
      for (size_t i : s.outs) {
        TensorRef ref{id, static_cast<int32_t>(i)};
        key.Add(static_cast<int64_t>(i));
        key.Add(local.SLeafNodeIdIfAny(ref));
        key.AddType(*node.outputs[i].type);
      }
      p.cached = memo_cache_.Find(key);
    }
    return p;
  }

  // Whether every wanted output's S leaf is clean (has a member over D only).
  // With hint targets, an output that has some must be equal to one of them.
  static bool GoalReached(LocalGraph& local, const OperatorSearch& s,
                          const std::map<size_t, std::vector<ClassId>>& hint_targets) {
    for (size_t i : s.outs) {
      const ClassId leaf = local.SLeaf(TensorRef{s.id, static_cast<int32_t>(i)});
      if (!local.analysis()[leaf].clean) return false;
      auto targets = hint_targets.find(i);
      if (targets == hint_targets.end()) continue;
      const EGraph& egraph = local.egraph();
      if (std::none_of(targets->second.begin(), targets->second.end(),
                       [&](ClassId t) { return egraph.Find(t) == egraph.Find(leaf); })) {
        return false;
      }
    }
    return true;
  }

  // The attempt's outcome from its problem's solution: its own (saturated in the parallel phase),
  // an identical earlier one's from the memo, or one saturated here (an identical problem of the
  // same round whose solution the memo could not keep). Its terms, read against this e-graph's
  // leaves, name this problem's D tensors, its proofs this e-graph's reasons.
  Attempt Finish(Prepared& p, const OperatorSearch& s) {
    const ir::NodeId id = s.id;
    const ir::Node& node = s_graph_.node(id);
    const std::vector<size_t>& outs = s.outs;
    LocalGraph& local = *p.local;
    if (p.cached == nullptr && !p.solve && p.memoize) p.cached = memo_cache_.Find(p.key);
    const LocalSolution* solution = p.cached;
    if (solution != nullptr) {
      ++result_.local_reused;
    } else {
      ++result_.local_solved;
      if (!p.solve) p.solved = Solve(p, s);
      if (p.memoize && p.cacheable) {
        solution = &memo_cache_.Insert(p.key, std::move(p.solved));
      } else {
        solution = &p.solved;
      }
    }
    Attempt a;
    NodeOutcome& outcome = a.outcome;
    outcome = std::move(p.attempt.outcome);
    const std::vector<bool>& opaque = p.opaque;
    outcome.stop = solution->stop;
    outcome.iterations = solution->iterations;
    outcome.egraph_nodes = solution->egraph_nodes;
    outcome.egraph_classes = solution->egraph_classes;
    bool all_found = true;
    std::string missing_detail;
    for (size_t k = 0; k < solution->outputs.size(); ++k) {
      const LocalSolution::Output& out = solution->outputs[k];
      TensorRef ref{id, static_cast<int32_t>(outs[k])};
      if (out.conflict) {
        outcome.status = NodeStatus::kConflict;
        outcome.detail = s_graph_.ValueName(ref) + ": " + *out.conflict;
        all_found = false;
        break;
      }
      if (!out.found) {
        all_found = false;
        missing_detail = "no clean expression over D for " + s_graph_.ValueName(ref);
        if (opaque[outs[k]]) {
          missing_detail +=
              " (operator " + node.op.ToString() + " has no lowering into the tensor language)";
        }
        continue;
      }
      for (size_t t = 0; t < out.terms.size(); ++t) {
        bool flattened = false;
        std::optional<RelExpr> rel =
            ToRelExpr(out.terms[t], out.terms[t].root(), local.leaves(), &flattened);
        std::vector<std::string> proof = InstantiateProof(out.proofs[t], local.egraph(), *solution);
        if (flattened) proof.push_back("concat-flatten");
        Remember(Relation{ref, *rel, "inferred"}, std::move(proof));
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
        if (no_semantics && info != nullptr && info->traits.random && !rng_positional_) {
          outcome.detail = "random operator " + node.op.ToString() +
                           ": the spec states no RNG model, so its draws in S and in D are "
                           "unrelated and nothing is proved through it; if every random "
                           "operator of S and D draws the same value for the same element of "
                           "the same logical tensor (a counter-based generator with offsets), "
                           "state `rng positional` in the spec (docs/relations.md)";
        }
        if (limit) {
          outcome.detail += local.d_limit_hit()
                                ? "; stopped: D operator limit"
                                : "; stopped: " + std::string(StopReasonName(report.stop));
        }
      }
    }
    if (outcome.status == NodeStatus::kInferred) {
      covered_.insert(p.inlined_here.begin(), p.inlined_here.end());
    }
    a.truncated = local.truncated();
    a.inlined = !p.inlined_here.empty();
    return a;
  }

  // Saturates a local problem (unless its goal holds already) and extracts each wanted output's
  // relations with their proofs. *cacheable: whether the solution is a function of the problem's
  // memo key (not when the clock stopped the search, or a term reads a leaf added after the key).
  LocalSolution Solve(Prepared& p, const OperatorSearch& s) {
    LocalGraph& local = *p.local;
    const ir::NodeId id = s.id;
    const std::vector<size_t>& outs = s.outs;
    bool* cacheable = &p.cacheable;
    LocalSolution solved;
    const size_t leaves_at_key = local.leaves().size();
    solved.first_late_reason = static_cast<ReasonId>(local.egraph().NumReasons());
    RunReport report;
    if (!p.goal_reached) {
      Runner runner(local.egraph(), rules_, options_.per_node);
      runner.WithGoal([&](const EGraph&) { return GoalReached(local, s, p.hint_targets); });
      std::vector<ClassId> goal_classes;
      for (size_t i : outs)
        goal_classes.push_back(local.SLeaf(TensorRef{id, static_cast<int32_t>(i)}));
      runner.WithGoalClasses(std::move(goal_classes));
      report = runner.Run();
    } else {
      report.stop = StopReason::kGoalReached;
    }
    solved.stop = report.stop;
    // Debugging aid for lemma authors (InferenceOptions::dump_egraph): that operator's
    // saturated local e-graph, every search of it, to stderr, after the search's stop and
    // per-rule work (matches, applications, e-nodes added).
    if (p.dumping) {
      std::fprintf(stderr, "%s%s\n", report.WorkText().c_str(), local.egraph().Dump().c_str());
    }
    solved.iterations = report.iterations;
    solved.egraph_nodes = local.egraph().NumNodes();
    solved.egraph_classes = local.egraph().NumClasses();

    Extractor extractor(local.egraph(), AdditiveCost([&](const ENode& n) {
                          return CleanNodeCost(local.leaves(), n);
                        }));
    // Where the clock stopped the search is not a function of the key.
    *cacheable = report.stop != StopReason::kTimeLimit;
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
            *cacheable = false;  // a leaf the key does not describe
          }
        }
        out.terms.push_back(term);
        term_nodes.push_back(local.egraph().AddExprUncanonical(term));
      };
      record(best->expr);
      // The extracted term on every other rank that holds replicas of its D tensors (a pipeline
      // stage's tensor-parallel ranks, each holding the same micro-batch pieces): each D tensor
      // replaced by one of its class on that rank. Their D tensors then reach the local
      // e-graphs that read this S tensor, as replicas of the plain D tensors below do.
      {
        const TensorLanguage& lang = TensorLanguage::Get();
        std::vector<std::map<int32_t, ENode>> by_rank(best->expr.nodes.size());
        std::set<int32_t> ranks;
        for (size_t k = 0; k < best->expr.nodes.size(); ++k) {
          const ENode& n = best->expr.nodes[k];
          if (n.op != lang.tensor || local.leaves().at(n.payload).side != TensorLeaf::Side::kDist) {
            continue;
          }
          std::optional<ClassId> c = local.egraph().Lookup(n);
          if (!c) continue;
          for (const ENode& m : local.egraph().Nodes(*c)) {
            if (m.op != lang.tensor) continue;
            const TensorLeaf& leaf = local.leaves().at(m.payload);
            if (leaf.side != TensorLeaf::Side::kDist) continue;
            by_rank[k].emplace(leaf.rank, m);
            ranks.insert(leaf.rank);
          }
        }
        for (int32_t rank : ranks) {
          RecExpr variant = best->expr;
          bool changed = false;
          for (size_t k = 0; k < variant.nodes.size(); ++k) {
            auto it = by_rank[k].find(rank);
            if (it == by_rank[k].end() || it->second == variant.nodes[k]) continue;
            variant.nodes[k] = it->second;
            changed = true;
          }
          if (changed) record(variant);
        }
        // A composite term over one rank's D tensors (a sum of scaled micro-batch gradients)
        // whose replicas on other ranks are not in the same classes (each rank computed its own
        // copy): the cheapest term over each other rank's D tensors alone, when the class has
        // one. The relations of every TP rank of a pipeline stage then reach the outputs' checks.
        std::set<int32_t> best_ranks;
        bool composite = false;
        for (const ENode& n : best->expr.nodes) {
          if (n.op == lang.tensor) {
            best_ranks.insert(local.leaves().at(n.payload).rank);
          } else if (n.op != lang.num && n.op != lang.flt && n.op != lang.concat) {
            composite = true;
          }
        }
        if (composite && best_ranks.size() > 1) {
          // The same for a composite term over several ranks (a sum over the data-parallel
          // replicas of one TP rank's micro-batch gradients, a concat of one TP rank's zig-zag
          // pieces from two CP ranks): the cheapest term over ranks that no term recorded so far
          // reads, again while the class has one (the same term on each other TP rank). Then the
          // outputs' checks and the consumers see every TP rank's form, not the first one's.
          std::set<int32_t> used = best_ranks;
          for (;;) {
            Extractor elsewhere(
                local.egraph(), AdditiveCost([&](const ENode& n) {
                  if (n.op == lang.tensor && used.count(local.leaves().at(n.payload).rank)) {
                    return kInfiniteCost;
                  }
                  return CleanNodeCost(local.leaves(), n);
                }));
            auto there = elsewhere.Extract(cls);
            if (!there) break;
            std::set<int32_t> ranks;
            for (const ENode& n : there->expr.nodes) {
              if (n.op == lang.tensor) ranks.insert(local.leaves().at(n.payload).rank);
            }
            if (ranks.empty()) break;
            record(there->expr);
            used.insert(ranks.begin(), ranks.end());
          }
        }
        if (composite && best_ranks.size() == 1) {
          std::set<int32_t> others;
          for (size_t leaf = 0; leaf < local.leaves().size(); ++leaf) {
            const TensorLeaf& l = local.leaves().at(static_cast<int64_t>(leaf));
            if (l.side == TensorLeaf::Side::kDist && !best_ranks.count(l.rank)) {
              others.insert(l.rank);
            }
          }
          for (int32_t rank : others) {
            Extractor on_rank(
                local.egraph(), AdditiveCost([&](const ENode& n) {
                  if (n.op == lang.tensor && local.leaves().at(n.payload).rank != rank) {
                    return kInfiniteCost;
                  }
                  return CleanNodeCost(local.leaves(), n);
                }));
            if (auto there = on_rank.Extract(cls)) record(there->expr);
          }
        }
      }
      // Every D tensor in the class is a relation too (replicas on other ranks), and so is every
      // concat of D tensors (the shards of another data-parallel replica on a 2-D mesh: their
      // pieces become replicas of the extracted one's, DIndex::AddPieceReplica).
      const TensorLanguage& lang = TensorLanguage::Get();
      auto is_d_tensor = [&](const ENode& n) {
        return n.op == lang.tensor && local.leaves().at(n.payload).side == TensorLeaf::Side::kDist;
      };
      // A piece's D tensor on `rank` (its first one when it has none there).
      auto d_tensor_node = [&](ClassId c, std::optional<int32_t> rank) -> std::optional<ENode> {
        std::optional<ENode> first;
        for (const ENode& n : local.egraph().Nodes(c)) {
          if (!is_d_tensor(n)) continue;
          if (!rank || local.leaves().at(n.payload).rank == *rank) return n;
          if (!first) first = n;
        }
        return first;
      };
      // Recorded after the walk: recording a concat may add its node, moving the class's nodes.
      // A piece's class may hold the same piece on several ranks (the tensor-parallel replicas
      // of a pipeline stage's micro-batch): one concat per rank of the first piece, each piece
      // taken on that rank where it has one, so every replica's pieces are recorded.
      std::vector<RecExpr> concats;
      for (const ENode& n : local.egraph().Nodes(cls)) {
        if (is_d_tensor(n)) {
          RecExpr single;
          single.Add(n);
          record(single);
        } else if (n.op == lang.concat && n.children.size() >= 3) {
          std::set<int32_t> ranks;
          for (const ENode& k : local.egraph().Nodes(n.children[1])) {
            if (is_d_tensor(k)) ranks.insert(local.leaves().at(k.payload).rank);
          }
          for (int32_t rank : ranks) {
            RecExpr cat;
            ENode root{lang.concat, 0, {}};
            for (size_t c = 0; c < n.children.size(); ++c) {
              std::optional<ENode> child;
              if (c == 0) {
                for (const ENode& k : local.egraph().Nodes(n.children[0])) {
                  if (k.op == lang.num) child = k;
                }
              } else {
                child = d_tensor_node(n.children[c], rank);
              }
              if (!child) break;
              root.children.push_back(cat.Add(*child));
            }
            if (root.children.size() != n.children.size()) break;
            cat.Add(root);
            concats.push_back(std::move(cat));
          }
        }
      }
      for (const RecExpr& cat : concats) record(cat);
      for (auto& runs : local.egraph().ExplainRuns(leaf_node, term_nodes)) {
        out.proofs.push_back(runs ? std::move(*runs) : std::vector<ProofRun>{});
      }
    }
    for (size_t r = solved.first_late_reason; r < local.egraph().NumReasons(); ++r) {
      solved.late_reasons.push_back(local.egraph().ReasonName(static_cast<ReasonId>(r)));
    }
    return solved;
  }

  // How far back the output check's second try follows D's producers (a wait, a collective, the
  // product it reduces, a reshape or two).
  static constexpr int kOutputCheckProducerDepth = 6;
  // How far back its third try follows the expected D tensors' producers alone: an expected
  // tensor cut out of a flat collective buffer (FSDP2 reduce-scatters every gradient of a module
  // group packed by chunk_cat and cuts each out of the rank's row: views, a slice, the wait, the
  // collective, the packing and the views it packs) is that far from the gradients the inferred
  // relation names. The inferred side's producers are left out there: with them the e-graph
  // fills with the backward around the gradients before the unpacking meets them.
  static constexpr int kOutputCheckUnpackDepth = 8;

  // The output check's third try (kOutputCheckUnpackDepth), in an e-graph of its own: the
  // inferred relations, the expected one and the expected D tensors' producers.
  bool CheckUnpacked(const Relation& expected, const std::vector<InferredRelation>& inferred,
                     const InferenceOptions& check_options) {
    LocalGraph local(s_graph_, d_program_, d_index_, check_options);
    const ClassId leaf = local.SLeaf(expected.s_tensor);
    for (const InferredRelation& rel : inferred) {
      local.egraph().Union(leaf, local.AddRelExpr(rel.relation.expr),
                           local.egraph().InternReason("inferred relation"));
    }
    const ClassId target = local.AddRelExpr(expected.expr);
    local.SetConstants(&spec_.constants);
    local.SetRngPositional(rng_positional_);
    std::set<std::pair<int32_t, TensorRef>> leaves;
    CollectDLeaves(expected.expr, &leaves);
    std::vector<DKey> keys;
    for (const auto& [rank, tensor] : leaves) keys.push_back(DKey{rank, tensor});
    local.ExpandProducers(keys, kOutputCheckUnpackDepth);
    local.ExpandD();
    local.egraph().Rebuild();
    auto same = [&](const EGraph& g) { return g.Find(leaf) == g.Find(target); };
    if (!same(local.egraph())) {
      Runner runner(local.egraph(), rules_, options_.per_node);
      runner.WithGoal(same);
      runner.Run();
    }
    return same(local.egraph());
  }

  // Expected output relations: each must be in the class of its S tensor.
  void CheckOutputs() {
    std::optional<std::set<std::pair<int32_t, TensorRef>>> related_d;  // built on the first failure
    PlainRelations plain;
    for (const Relation& expected : spec_.expected_outputs) {
      OutputCheck check;
      check.expected = expected;
      auto it = known_.find(expected.s_tensor);
      if (it == known_.end() || it->second.empty()) {
        check.detail = "no relation was inferred for " + s_graph_.ValueName(expected.s_tensor);
        result_.outputs.push_back(std::move(check));
        continue;
      }
      InferenceOptions check_options = options_;
      check_options.memoize = false;
      LocalGraph local(s_graph_, d_program_, d_index_, check_options);
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
        local.SetConstants(&spec_.constants);
        local.SetRngPositional(rng_positional_);
        local.ExpandD();
        local.egraph().Rebuild();
        auto same = [&](const EGraph& g) { return g.Find(leaf) == g.Find(target); };
        RunReport report;
        auto saturate = [&] {
          if (!same(local.egraph())) {
            Runner runner(local.egraph(), rules_, options_.per_node);
            runner.WithGoal(same);
            report = runner.Run();
          }
          return same(local.egraph());
        };
        check.implied = saturate();
        if (!check.implied && report.stop == StopReason::kSaturated) {
          // Second try: what computes the D tensors of both sides, a few operators back.
          std::set<std::pair<int32_t, TensorRef>> leaves;
          CollectDLeaves(expected.expr, &leaves);
          for (const InferredRelation& rel : it->second) CollectDLeaves(rel.relation.expr, &leaves);
          std::vector<DKey> keys;
          for (const auto& [rank, tensor] : leaves) keys.push_back(DKey{rank, tensor});
          local.ExpandProducers(keys, kOutputCheckProducerDepth);
          local.ExpandD();
          local.egraph().Rebuild();
          check.implied = saturate();
          if (!check.implied) check.implied = CheckUnpacked(expected, it->second, check_options);
        }
        if (!check.implied) {
          check.detail = "inferred " + RelationToString(it->second.front().relation, s_graph_) +
                         ", which the lemmas do not show equal to the expectation (" +
                         std::string(StopReasonName(report.stop)) + ")";
          if (report.stop != StopReason::kSaturated) check.detail += " [limit]";
          // An expected D tensor no relation names: say where its rank left S's computation.
          if (!related_d) {
            related_d.emplace();
            for (const auto& [ref, rels] : known_) {
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
            if (related_d->count({rank, d_index_.Canonical(rank, tensor)})) continue;
            std::string departure = DDeparture(s_graph_, d_program_.rank(rank), rank, tensor,
                                               *related_d, plain, d_index_);
            if (departure.empty()) continue;
            check.detail += "; " + departure;
            break;
          }
        }
      }
      result_.outputs.push_back(std::move(check));
    }
  }

  // The verdict: the first failing S operator (topological order) decides; then the outputs.
  void Decide() {
    // Verdict: the first failing S operator (topological order) decides; then the outputs.
    // Only failures something reads count: an unspecified buffer a kernel overwrites (vLLM's
    // `output` arguments) is never read, so nothing is owed for it.
    for (size_t i = 0; i < result_.nodes.size() && !result_.first_failure; ++i) {
      const NodeOutcome& n = result_.nodes[i];
      if (n.status == NodeStatus::kInferred) continue;
      // Blocked operators are downstream of a failure reported at its own operator, except those
      // that read a cut without a relation: the region's checked tensors need the cut there.
      if (n.status == NodeStatus::kBlocked && !blocked_by_cut_.count(n.s_node)) continue;
      if (covered_.count(n.s_node)) continue;  // carried into a consumer that D does compute
      for (size_t o = 0; o < s_graph_.node(n.s_node).outputs.size(); ++o) {
        const TensorRef ref{n.s_node, static_cast<int32_t>(o)};
        if (!used_.count(ref)) continue;
        // An output the search did relate owes nothing: an operator with several outputs fails on
        // one that is not (nll_loss_forward's total_weight, which a sum reduction's backward does
        // not read) while its related outputs are read (the loss). A conflict fails whole.
        auto known = known_.find(ref);
        if (n.status != NodeStatus::kConflict && n.status != NodeStatus::kBlocked &&
            known != known_.end() && !known->second.empty()) {
          continue;
        }
        result_.first_failure = i;
        break;
      }
    }
    if (result_.first_failure) {
      const NodeOutcome& f = result_.nodes[*result_.first_failure];
      const ir::Node& n = s_graph_.node(f.s_node);
      std::string where = n.name + " (" + n.op.ToString() + ")";
      if (!n.source.empty()) where += " at " + n.source.ToString();
      result_.verdict = Verdict::kUnknown;
      if (f.status == NodeStatus::kBlocked) {
        const TensorRef cut = blocked_by_cut_.at(f.s_node);
        result_.unknown_cause = UnknownCause::kNoRelation;
        result_.summary = "S operator " + where + " reads " + s_graph_.ValueName(cut) +
                          ", which the spec cuts without a relation (" + unrelated_cuts_.at(cut) +
                          "): the checked tensors depend on it; state its relation (cut " +
                          s_graph_.ValueName(cut) +
                          " = RULE) or check a region that does not read it";
      } else if (f.status == NodeStatus::kLimitHit && n.kind == ir::NodeKind::kOperator &&
                 InfoOf(n) == nullptr) {
        result_.unknown_cause = UnknownCause::kOpaque;
        result_.summary =
            "S operator " + where +
            " is unknown to GraphGuard (loaded opaque from its annotation): " + f.detail +
            "; it is equal only by congruence (the same operator and arguments on "
            "equal inputs); add it to the registry and the lowering to prove through it";
      } else if (f.status == NodeStatus::kLimitHit) {
        result_.unknown_cause = UnknownCause::kLimit;
        result_.summary = "could not relate " + where + ": " + f.detail;
      } else if (f.status == NodeStatus::kConflict) {
        result_.unknown_cause = UnknownCause::kConflict;
        result_.summary = "S operator " + where + ": " + f.detail;
      } else {
        result_.unknown_cause = UnknownCause::kNoRelation;
        result_.summary = "the lemmas relate no D expression to S operator " + where + ": " +
                          f.detail + " (S and D differ there, or a lemma is missing)";
      }
    } else {
      result_.verdict = Verdict::kRefines;
      for (const OutputCheck& c : result_.outputs) {
        if (c.implied) continue;
        bool limit = c.detail.find("[limit]") != std::string::npos;
        result_.verdict = Verdict::kUnknown;
        result_.unknown_cause = limit ? UnknownCause::kLimit : UnknownCause::kNoRelation;
        result_.summary = "expected " + RelationToString(c.expected, s_graph_) + " but " + c.detail;
        break;
      }
      if (result_.verdict == Verdict::kRefines) {
        result_.summary = "every expected output relation holds (" +
                          std::to_string(result_.outputs.size()) + " checked, " +
                          std::to_string(result_.nodes.size()) + " S operators related)";
      }
    }
  }

  const ir::Graph& s_graph_;
  const ir::Program& d_program_;
  const SpecResult& spec_;
  const std::vector<Rewrite>& rules_;
  const InferenceOptions& options_;
  VerifyResult result_;
  DIndex d_index_;
  const bool rng_positional_;
  std::map<TensorRef, std::vector<InferredRelation>> known_;
  // The expressions of each `known_` list, for constant-time duplicate checks (a list can hold
  // one relation per layer and rank).
  std::map<TensorRef, std::unordered_set<RelExpr, RelExprHash>> known_exprs_;
  std::vector<bool> needed_;
  std::map<TensorRef, std::string> unrelated_cuts_;
  std::map<ir::NodeId, TensorRef> blocked_by_cut_;  // S operator -> the unrelated cut it reads
  std::set<TensorRef> wanted_;
  std::set<TensorRef> used_;
  // S operators that saturated without a relation of their own although every input they read
  // was related: their lowered term is carried into their consumers' e-graphs (S's own
  // computation, composed; sound), so only the first tensor of a chain that D really computes
  // needs an equal. Such a failure is `covered` once a consumer that inlined it is related.
  std::set<ir::NodeId> inlinable_;
  std::set<ir::NodeId> covered_;
  std::set<ir::NodeId>* inlined_now_ = nullptr;
  int32_t inline_depth_ = 0;
  bool defining_related_ = false;  // lowering a related input's own S definition
  LocalProblemCache memo_cache_;
  WorkerPool pool_;  // saturates a level's local problems side by side
};

}  // namespace

VerifyResult Verify(const ir::Graph& s_graph, const ir::Program& d_program, const SpecResult& spec,
                    const std::vector<Rewrite>& rules, const InferenceOptions& options) {
  VerifyResult guided = Verifier(s_graph, d_program, spec, rules, options).Run();
  if (options.hints == nullptr || guided.verdict == Verdict::kRefines) return guided;
  // Hints only choose where to look: a guided search that does not prove refinement says
  // nothing, so the verdict is that of the search without them.
  InferenceOptions plain = options;
  plain.hints = nullptr;
  VerifyResult result = Verifier(s_graph, d_program, spec, rules, plain).Run();
  result.hints_given = guided.hints_given;
  result.hints_related = guided.hints_related;
  result.hints_left_unrelated = guided.hints_left_unrelated;
  result.hints_full_related = guided.hints_full_related;
  result.hints_proved = guided.hints_proved;
  result.hints_rerun = true;
  result.hints_guided_stop = guided.summary;
  for (const NodeOutcome& n : guided.nodes) result.hints_guided_nodes += n.work_nodes;
  result.seconds += guided.seconds;
  return result;
}

}  // namespace gg::symbolic
