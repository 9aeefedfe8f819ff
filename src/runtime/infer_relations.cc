#include "runtime/infer_relations.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>
#include <set>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>

#include "runtime/executor.h"
#include "runtime/op_kernels.h"
#include "runtime/input_synthesis.h"
#include "runtime/tolerance.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

constexpr double kNotComparable = 1e300;
// A candidate matches an S tensor when its error is within kNoiseFactor times the tensor's
// rounding noise (the distance between S and a perturbed run of S, tolerance.h's model), and
// never beyond kLooseTolerance: bf16 values a dozen operators deep differ by 5-10 % per slice
// between S and a correct D, more than fingerprint_match.h's fixed 0.05, while a wrong layout is
// off by 0.5 or more.
constexpr double kNoiseFactor = 3.0;
constexpr double kLooseTolerance = 0.25;

using symbolic::RelExpr;

// How an S input relates to its same-named D inputs (a pattern: sizes come from the program it
// is instantiated on, so one pattern serves the resized run and the written spec).
struct InputPattern {
  enum class Kind { kReplicate, kShard, kBlocks };
  Kind kind = Kind::kReplicate;
  int64_t dim = 0;
  std::string split_node;    // kBlocks: a split_with_sizes node of D's rank 0 giving the blocks
  int64_t equal_blocks = 0;  // kBlocks without a split node: this many equal blocks
  std::string Key() const {
    switch (kind) {
      case Kind::kReplicate:
        return "replicate";
      case Kind::kShard:
        return "shard(" + std::to_string(dim) + ")";
      case Kind::kBlocks:
        return "blocks(" + std::to_string(dim) + ", " +
               (split_node.empty() ? std::to_string(equal_blocks) + " equal" : split_node) + ")";
    }
    return "";
  }
};

std::vector<int64_t> StaticShape(const ir::TensorType& type) {
  std::vector<int64_t> out;
  for (const ir::Dim& d : type.shape) out.push_back(d.is_static() ? d.value() : -1);
  return out;
}

bool IsSplit(const ir::Node& node) {
  return node.kind == ir::NodeKind::kOperator && node.op.ns == "aten" &&
         node.op.name == "split_with_sizes" && node.args.size() >= 2 && node.args[1].is_int_list();
}

// The split_with_sizes size lists of a graph, by node name (deterministic order).
std::map<std::string, std::vector<int64_t>> SplitSizes(const ir::Graph& graph) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const ir::Node& node : graph.nodes) {
    if (IsSplit(node)) out[node.name] = node.args[1].as_int_list();
  }
  return out;
}

// One block of a fused layout: S's extent, D's extent per rank, and which ranks contribute.
struct Block {
  int64_t s_size = 0;
  int64_t d_size = 0;
  int64_t rep = 1;  // ranks r with r % rep == 0 contribute
};

// The blocks of `pattern` for S extent s_extent and D extent d_extent over `world` ranks, or
// empty when the pattern does not fit these sizes.
std::vector<Block> Blocks(const InputPattern& pattern, const ir::Graph& s_graph,
                          const ir::Program& d, int64_t s_extent, int64_t d_extent) {
  int64_t world = d.world_size();
  std::vector<int64_t> d_sizes;
  if (!pattern.split_node.empty()) {
    auto splits = SplitSizes(d.rank(0));
    auto it = splits.find(pattern.split_node);
    if (it == splits.end()) return {};
    d_sizes = it->second;
  } else {
    if (pattern.equal_blocks < 2 || d_extent % pattern.equal_blocks != 0) return {};
    d_sizes.assign(static_cast<size_t>(pattern.equal_blocks), d_extent / pattern.equal_blocks);
  }
  int64_t d_total = 0;
  for (int64_t s : d_sizes) d_total += s;
  if (d_total != d_extent) return {};
  // S's block sizes: a split of S's with as many blocks that fits, else the ranks' sizes times
  // the world size (equal blocks: S's extent divided evenly).
  std::vector<int64_t> s_sizes;
  if (!pattern.split_node.empty()) {
    for (const auto& [name, sizes] : SplitSizes(s_graph)) {
      int64_t total = 0;
      bool fits = sizes.size() == d_sizes.size();
      for (size_t i = 0; fits && i < sizes.size(); ++i) {
        total += sizes[i];
        fits = sizes[i] >= d_sizes[i] && sizes[i] <= d_sizes[i] * world;
      }
      if (fits && total == s_extent) {
        s_sizes = sizes;
        break;
      }
    }
  }
  if (s_sizes.empty()) {
    for (int64_t size : d_sizes) s_sizes.push_back(size * world);
  }
  std::vector<Block> blocks;
  int64_t s_total = 0;
  for (size_t i = 0; i < d_sizes.size(); ++i) {
    Block b{s_sizes[i], d_sizes[i], 1};
    if (b.s_size == 0 || (world * b.d_size) % b.s_size != 0) return {};
    b.rep = world * b.d_size / b.s_size;
    if (b.rep < 1 || world % b.rep != 0) return {};
    s_total += b.s_size;
    blocks.push_back(b);
  }
  if (s_total != s_extent) return {};
  return blocks;
}

// The relation expressions of `pattern` for S input `index` (one per relation), and the rule as
// spec text; empty exprs when it does not fit.
struct Instance {
  std::vector<RelExpr> exprs;
  std::string rule;
};

Instance Instantiate(const InputPattern& pattern, const ir::Graph& s_graph, const ir::Program& d,
                     size_t index) {
  Instance out;
  const ir::Node& input = s_graph.node(s_graph.inputs[index]);
  std::vector<RelExpr> leaves;
  for (int32_t r = 0; r < d.world_size(); ++r) leaves.push_back(RelExpr::Tensor(d, r, input.name));
  switch (pattern.kind) {
    case InputPattern::Kind::kReplicate:
      out.exprs = leaves;
      out.rule = "replicate";
      return out;
    case InputPattern::Kind::kShard:
      out.exprs = {RelExpr::Concat(pattern.dim, leaves)};
      out.rule = "shard(" + std::to_string(pattern.dim) + ")";
      return out;
    case InputPattern::Kind::kBlocks:
      break;
  }
  int64_t s_extent = StaticShape(input.type()).at(static_cast<size_t>(pattern.dim));
  ir::TensorRef d0 = *d.rank(0).Find(input.name);
  int64_t d_extent = StaticShape(d.rank(0).type(d0)).at(static_cast<size_t>(pattern.dim));
  std::vector<Block> blocks = Blocks(pattern, s_graph, d, s_extent, d_extent);
  if (blocks.empty()) return out;
  std::vector<RelExpr> pieces;
  std::string d_text = std::to_string(pattern.dim);
  std::string rule = "concat(" + d_text;
  int64_t offset = 0;
  for (const Block& b : blocks) {
    for (int32_t r = 0; r < d.world_size(); ++r) {
      if (r % b.rep != 0) continue;
      pieces.push_back(
          RelExpr::Slice(leaves[static_cast<size_t>(r)], pattern.dim, offset, offset + b.d_size));
      rule += ", slice(D@" + std::to_string(r) + ", " + d_text + ", " + std::to_string(offset) +
              ", " + std::to_string(offset + b.d_size) + ")";
    }
    offset += b.d_size;
  }
  out.exprs = {RelExpr::Concat(pattern.dim, pieces)};
  out.rule = rule + ")";
  return out;
}

// Candidate patterns of S input `index`, most likely first; none (and *why says why) when it has
// no D input of the same name or its D inputs are no split of it.
std::vector<InputPattern> CandidatePatterns(const ir::Graph& s_graph, const ir::Program& d,
                                            size_t index, std::string* why) {
  const ir::Node& input = s_graph.node(s_graph.inputs[index]);
  std::vector<int64_t> s_shape = StaticShape(input.type());
  std::vector<std::vector<int64_t>> d_shapes;
  for (int32_t r = 0; r < d.world_size(); ++r) {
    std::optional<ir::TensorRef> ref = d.rank(r).Find(input.name);
    if (!ref || d.rank(r).node(ref->node).kind != ir::NodeKind::kInput) {
      *why = "no D input of the same name on rank " + std::to_string(r);
      return {};
    }
    d_shapes.push_back(StaticShape(d.rank(r).type(*ref)));
  }
  std::vector<InputPattern> out;
  bool all_equal = std::all_of(d_shapes.begin(), d_shapes.end(),
                               [&](const std::vector<int64_t>& s) { return s == s_shape; });
  if (all_equal) {
    out.push_back(InputPattern{InputPattern::Kind::kReplicate});
    return out;
  }
  for (size_t dim = 0; dim < s_shape.size(); ++dim) {
    int64_t total = 0;
    bool others_equal = true;
    for (const auto& shape : d_shapes) {
      if (shape.size() != s_shape.size()) {
        others_equal = false;
        break;
      }
      total += shape[dim];
      for (size_t k = 0; k < shape.size(); ++k) others_equal &= k == dim || shape[k] == s_shape[k];
    }
    if (!others_equal || total != s_shape[dim]) continue;
    auto dim64 = static_cast<int64_t>(dim);
    out.push_back(InputPattern{InputPattern::Kind::kShard, dim64});
    bool even = std::all_of(d_shapes.begin(), d_shapes.end(),
                            [&](const auto& s) { return s == d_shapes[0]; });
    if (!even || d.world_size() < 2) continue;
    // Fused layouts: blocks from D's splits, then equal blocks.
    for (const auto& [name, sizes] : SplitSizes(d.rank(0))) {
      if (sizes.size() < 2) continue;
      InputPattern p{InputPattern::Kind::kBlocks, dim64, name};
      if (!Blocks(p, s_graph, d, s_shape[dim], d_shapes[0][dim]).empty()) {
        // The same block structure from another split node adds nothing.
        bool duplicate = false;
        for (const InputPattern& q : out) {
          duplicate |= q.kind == InputPattern::Kind::kBlocks && !q.split_node.empty() &&
                       SplitSizes(d.rank(0))[q.split_node] == sizes;
        }
        if (!duplicate) out.push_back(p);
      }
    }
    for (int64_t b : {2, 3}) {
      InputPattern p{InputPattern::Kind::kBlocks, dim64, "", b};
      if (!Blocks(p, s_graph, d, s_shape[dim], d_shapes[0][dim]).empty()) out.push_back(p);
    }
  }
  if (out.empty()) {
    *why = "its D inputs are neither equal to it (" + input.type().ToString() +
           ") nor a split of one of its dimensions";
  }
  return out;
}

// The first operator that computes with `value`, following view-like operators (a weight's
// matmul, not its transpose); -1 when none.
ir::NodeId ComputingConsumer(const ir::Graph& graph, ir::TensorRef value) {
  static const std::set<std::string> kViews = {
      "t",      "view",      "reshape", "_unsafe_view", "permute", "transpose", "detach",
      "expand", "unsqueeze", "squeeze", "clone",        "alias",   "_to_copy",  "contiguous"};
  std::vector<ir::TensorRef> frontier = {value};
  for (size_t step = 0; step < 8 && !frontier.empty(); ++step) {
    std::vector<ir::TensorRef> next;
    for (const ir::Node& node : graph.nodes) {
      if (node.kind != ir::NodeKind::kOperator) continue;
      std::vector<ir::TensorRef> ins = node.TensorInputs();
      bool uses = std::any_of(ins.begin(), ins.end(), [&](ir::TensorRef r) {
        return std::find(frontier.begin(), frontier.end(), r) != frontier.end();
      });
      if (!uses) continue;
      if (node.op.ns == "aten" && kViews.count(node.op.name)) {
        next.push_back(ir::TensorRef{static_cast<ir::NodeId>(&node - graph.nodes.data()), 0});
      } else {
        return static_cast<ir::NodeId>(&node - graph.nodes.data());
      }
    }
    frontier = std::move(next);
  }
  return -1;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An observer that fingerprints the values the graphs compute, not their inputs or constants:
// S tensors are matched against computed D values, and an input's fingerprint (the vocabulary
// embedding's: 151936 x 1536 at full size) would cost a pass per dimension on every trial for
// nothing. Values above `max_elements` (attention scores, [heads, tokens, tokens]) are skipped
// too unless the graph returns them: the tensors around them decide the same layouts at a
// fraction of the cost.
std::function<void(int32_t, ir::TensorRef, const at::Tensor&)> ComputedValueObserver(
    FingerprintTable* table, const std::vector<const ir::Graph*>& graphs,
    const FingerprintOptions& options, int64_t max_elements) {
  auto observe = FingerprintObserver(table, graphs, options);
  std::vector<std::set<ir::TensorRef>> returned(graphs.size());
  for (size_t r = 0; r < graphs.size(); ++r) {
    for (const ir::Value& v : graphs[r]->outputs) {
      if (v.is_tensor()) returned[r].insert(v.as_tensor());
    }
  }
  return [observe, graphs, returned, max_elements](int32_t rank, ir::TensorRef ref,
                                                   const at::Tensor& value) {
    if (rank < 0 || static_cast<size_t>(rank) >= graphs.size()) return;
    ir::NodeKind kind = graphs[static_cast<size_t>(rank)]->node(ref.node).kind;
    if (kind == ir::NodeKind::kInput || kind == ir::NodeKind::kConstant) return;
    if (value.numel() > max_elements && !returned[static_cast<size_t>(rank)].count(ref)) return;
    observe(rank, ref, value);
  };
}

// The normwise relative distance of two fingerprints of the same tensor (fingerprint_match.h's
// error of an identical candidate): the largest projection difference over the whole tensor and
// every slice, each divided by the slice's norm (floored at 1e-4 of the mean slice's).
double FingerprintDistance(const TensorFingerprint& a, const TensorFingerprint& b) {
  if (a.shape != b.shape || a.projections != b.projections) return kNotComparable;
  auto distance = [&](const SliceProjections& x, const SliceProjections& y) {
    if (x.count != y.count || x.count == 0) return 0.0;
    double mean = 0.0;
    for (double v : x.sum_squares) mean += v;
    double floor = 1e-4 * mean / static_cast<double>(x.count);
    double worst = 0.0;
    for (int64_t j = 0; j < x.count; ++j) {
      double diff = 0.0;
      for (int k = 0; k < a.projections; ++k) {
        diff = std::max(diff, std::fabs(x.projection(j, k, a.projections) -
                                        y.projection(j, k, a.projections)));
      }
      double scale = std::max({x.sum_squares[static_cast<size_t>(j)],
                               y.sum_squares[static_cast<size_t>(j)], floor});
      if (diff > 0.0) {
        worst = std::max(worst, scale > 0.0 ? diff / std::sqrt(scale) : kNotComparable);
      }
    }
    return worst;
  };
  double worst = distance(a.whole, b.whole);
  for (size_t d = 0; d < a.dims.size() && d < b.dims.size(); ++d) {
    worst = std::max(worst, distance(a.dims[d], b.dims[d]));
  }
  return worst;
}

// S runs once on inputs drawn once; each trial derives only D's inputs from those values through
// the trial's relations, runs D and counts the S tensors some D expression matches.
class Trials {
 public:
  Trials(const ir::Graph& s, const ir::Program& d, const InferOptions& options,
         const symbolic::SpecResult& first_relations, InferResult* result)
      : s_(s), d_(d), options_(options), result_(result) {
    auto start = std::chrono::steady_clock::now();
    ProgramInputs inputs = SynthesizeInputs(s_, d_, first_relations, options_.seed);
    s_inputs_ = inputs.s.inputs;
    s_constants_ = inputs.s.constants;
    first_d_ = std::move(inputs.d);
    result_->seconds_inputs += SecondsSince(start);
    start = std::chrono::steady_clock::now();
    ExecutionOptions exec = Exec();
    exec.observe = ComputedValueObserver(&s_table_, {&s_}, options_.fingerprint,
                                         options_.max_fingerprint_elements);
    GraphInputs s_values{s_inputs_, s_constants_};
    Execute(s_, s_values, exec);
    // S once more with every computing operator's outputs perturbed by one rounding: how far a
    // correct D may be from S at each tensor. Needed for 16-bit types; float32 and float64
    // graphs skip the run (it costs as much as S) and use kLooseFloatFloor instead.
    bool low_precision = false;
    for (const ir::Node& node : s_.nodes) {
      for (const ir::NodeOutput& o : node.outputs) {
        low_precision |= o.type && (o.type->dtype == ir::DType::kBFloat16 ||
                                    o.type->dtype == ir::DType::kFloat16);
      }
    }
    FingerprintTable perturbed;
    at::Generator noise = at::detail::createCPUGenerator(options_.seed + 0x9e37);
    exec.observe = ComputedValueObserver(&perturbed, {&s_}, options_.fingerprint,
                                         options_.max_fingerprint_elements);
    exec.transform_outputs = [&](int32_t, const ir::Node& node, std::vector<at::Tensor>& outputs) {
      for (at::Tensor& t : outputs) {
        if (!t.defined() || !at::isFloatingType(t.scalar_type())) continue;
        t = Perturb(t, PerturbationAmplitude(s_, node, FromAten(t.scalar_type())), noise);
      }
    };
    if (low_precision) Execute(s_, s_values, exec);
    result_->seconds_s = SecondsSince(start);
    for (const auto& [ref, fp] : s_table_.ranks[0]) {
      observed_.push_back(ref);
      MatchOptions floored = options_.match;
      floored.float_floor = kLooseFloatFloor;
      double threshold = Tolerance(floored, UnitRoundoff(fp.dtype));
      if (const TensorFingerprint* p = perturbed.Find(0, ref)) {
        threshold = std::max(threshold, kNoiseFactor * FingerprintDistance(fp, *p));
      }
      thresholds_[ref] = std::min(threshold, kLooseTolerance);
    }
  }

  // The candidates for S tensor `ref` among `matcher`'s D values, judged against the tensor's own
  // threshold: holding ones first (by kind, then error), then the others by error.
  std::vector<Candidate> Judge(const FingerprintMatcher& matcher, ir::TensorRef ref) const {
    std::vector<Candidate> found = matcher.CandidatesFor(*s_table_.Find(0, ref));
    double threshold = thresholds_.at(ref);
    for (Candidate& c : found) c.tolerance = threshold;
    std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      if (a.holds() != b.holds()) return a.holds();
      if (a.holds() && a.kind != b.kind) return a.kind < b.kind;
      return a.error < b.error;
    });
    return found;
  }

  // Matching options for the matcher: loose enough that runs of slices are found at bf16 depth;
  // Judge then applies each tensor's threshold.
  MatchOptions LooseMatch() const {
    MatchOptions loose = options_.match;
    loose.max_tolerance = std::max(loose.max_tolerance, kLooseTolerance);
    return loose;
  }

  // Runs D with the given input relations; returns the S tensors matched.
  std::set<ir::TensorRef> Run(const symbolic::SpecResult& relations) {
    auto start = std::chrono::steady_clock::now();
    std::vector<GraphInputs> d_inputs;
    if (!first_d_.empty()) {
      d_inputs = std::move(first_d_);  // the first trial's D inputs came with S's
      first_d_.clear();
    } else {
      d_inputs = SynthesizeInputs(s_, d_, relations, options_.seed, &s_inputs_).d;
    }
    result_->seconds_inputs += SecondsSince(start);
    start = std::chrono::steady_clock::now();
    d_table_ = FingerprintTable{};
    std::vector<const ir::Graph*> graphs;
    for (const ir::Graph& g : d_.ranks) graphs.push_back(&g);
    ExecutionOptions exec = Exec();
    exec.observe = ComputedValueObserver(&d_table_, graphs, options_.fingerprint,
                                         options_.max_fingerprint_elements);
    ExecuteProgram(d_, d_inputs, exec);
    ++result_->executions;
    result_->seconds_d += SecondsSince(start);
    start = std::chrono::steady_clock::now();
    FingerprintMatcher matcher(d_table_, LooseMatch());
    std::set<ir::TensorRef> matched;
    for (ir::TensorRef ref : observed_) {
      std::vector<Candidate> c = Judge(matcher, ref);
      if (!c.empty() && c.front().holds()) matched.insert(ref);
    }
    result_->seconds_match += SecondsSince(start);
    return matched;
  }

  const FingerprintTable& s_table() const { return s_table_; }
  // The last run's D fingerprints; TakeDTable moves them out (to keep the best trial's).
  FingerprintTable TakeDTable() { return std::move(d_table_); }
  int observed() const { return static_cast<int>(observed_.size()); }
  const std::vector<ir::TensorRef>& observed_refs() const { return observed_; }

 private:
  ExecutionOptions Exec() const {
    ExecutionOptions exec;
    exec.dropout_off = true;
    exec.seed = options_.seed;
    return exec;
  }

  const ir::Graph& s_;
  const ir::Program& d_;
  const InferOptions& options_;
  InferResult* result_;
  std::vector<at::Tensor> s_inputs_;
  std::map<std::string, at::Tensor> s_constants_;
  std::vector<GraphInputs> first_d_;
  FingerprintTable s_table_, d_table_;
  std::vector<ir::TensorRef> observed_;  // S tensors with a fingerprint (computed values)
  std::map<ir::TensorRef, double> thresholds_;  // each one's matching threshold
};

bool IsLeafOf(const RelExpr& e, int32_t rank, ir::TensorRef ref) {
  const auto* leaf = std::get_if<symbolic::DTensor>(&e.node().kind);
  return leaf && leaf->rank == rank && leaf->tensor == ref;
}

// The output rule for S output `position` from its best candidate: a shorthand over the
// same-position D outputs when it is one, else the explicit expression ("" when none holds).
std::string OutputRule(const std::vector<Candidate>& candidates, const ir::Program& d,
                       size_t position, std::string* comment) {
  std::vector<std::optional<ir::TensorRef>> same;  // rank r's output at `position`
  for (const ir::Graph& g : d.ranks) {
    if (position < g.outputs.size() && g.outputs[position].is_tensor()) {
      same.push_back(g.outputs[position].as_tensor());
    } else {
      same.push_back(std::nullopt);
    }
  }
  auto same_leaves = [&](const std::vector<RelExpr>& leaves) {
    if (leaves.size() != same.size()) return false;
    for (size_t r = 0; r < leaves.size(); ++r) {
      if (!same[r] || !IsLeafOf(leaves[r], static_cast<int32_t>(r), *same[r])) return false;
    }
    return true;
  };
  for (const Candidate& c : candidates) {
    if (!c.holds()) break;
    const auto& kind = c.exprs[0].node().kind;
    if (c.kind == Candidate::Kind::kReplicated && same_leaves(c.exprs)) return "replicate";
    if (c.kind == Candidate::Kind::kConcat &&
        same_leaves(std::get<symbolic::Concat>(kind).children)) {
      return "shard(" + std::to_string(std::get<symbolic::Concat>(kind).dim) + ")";
    }
    if (c.kind == Candidate::Kind::kSum && same_leaves(std::get<symbolic::Sum>(kind).children)) {
      return "partial";
    }
  }
  if (candidates.empty() || !candidates.front().holds()) return "";
  const Candidate& best = candidates.front();
  *comment = std::string(KindName(best.kind)) + " of D tensors that are not this output";
  if (best.exprs.size() == 1) return best.exprs[0].ToString();
  // Replicated over other tensors: one relation per rank is not one rule; state the first.
  *comment += "; also equal on the other ranks";
  return best.exprs[0].ToString();
}

// Renames the leaves of an expression written with `name@r` into the spec's `D.name@r`.
std::string SpecExpression(const std::string& rel_text) {
  // A leaf is NAME@R; prefix each with "D.".
  std::string out;
  size_t i = 0;
  while (i < rel_text.size()) {
    size_t at = rel_text.find('@', i);
    if (at == std::string::npos) {
      out += rel_text.substr(i);
      break;
    }
    size_t start = at;
    while (start > i && (std::isalnum(static_cast<unsigned char>(rel_text[start - 1])) ||
                         rel_text[start - 1] == '_')) {
      --start;
    }
    out += rel_text.substr(i, start - i) + "D." + rel_text.substr(start, at - start + 1);
    i = at + 1;
  }
  return out;
}

// What fingerprinting a graph's computed values costs (ComputedValueObserver's selection).
struct FingerprintCost {
  uint64_t table = 0;         // bytes of the fingerprints kept
  uint64_t largest_copy = 0;  // the float64 copy of the largest value fingerprinted
};

FingerprintCost FingerprintCostOf(const ir::Graph& graph, const InferOptions& options) {
  std::set<ir::TensorRef> returned;
  for (const ir::Value& v : graph.outputs) {
    if (v.is_tensor()) returned.insert(v.as_tensor());
  }
  FingerprintCost cost;
  const uint64_t per_slice = static_cast<uint64_t>(options.fingerprint.projections + 1) *
                             sizeof(double);  // projections and the sum of squares
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const ir::Node& node = graph.nodes[id];
    if (node.kind != ir::NodeKind::kOperator) continue;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (!node.outputs[k].type) continue;
      uint64_t elements = 1, slices = 1;  // the whole tensor is one slice
      for (const ir::Dim& d : node.outputs[k].type->shape) {
        int64_t extent = d.is_static() ? d.value() : 1;
        elements *= static_cast<uint64_t>(std::max<int64_t>(extent, 0));
        if (extent != 1) slices += static_cast<uint64_t>(std::max<int64_t>(extent, 0));
      }
      ir::TensorRef ref{static_cast<ir::NodeId>(id), static_cast<int32_t>(k)};
      if (elements > static_cast<uint64_t>(options.max_fingerprint_elements) &&
          !returned.count(ref)) {
        continue;
      }
      cost.table += slices * per_slice;
      cost.largest_copy = std::max(cost.largest_copy, elements * sizeof(double));
    }
  }
  return cost;
}

}  // namespace

InferResult InferRelations(const ir::Graph& s_graph, const ir::Program& d_program,
                           const ir::Graph& run_s, const ir::Program& run_d,
                           const InferOptions& options) {
  InferResult result;
  const size_t n_inputs = s_graph.inputs.size();
  std::vector<std::vector<InputPattern>> candidates(n_inputs);
  std::vector<std::string> unresolved_why(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    candidates[i] = CandidatePatterns(s_graph, d_program, i, &unresolved_why[i]);
    if (candidates[i].empty()) result.unresolved.push_back(s_graph.node(s_graph.inputs[i]).name);
  }
  std::vector<size_t> choice(n_inputs, 0);
  auto names_of = [&](const std::vector<size_t>& members) {
    std::string names;
    for (size_t m : members) {
      names += (names.empty() ? "" : ", ") + s_graph.node(s_graph.inputs[m]).name;
    }
    return names;
  };

  // Constants the capture omits: 0 (the executor's default), stated in the spec.
  std::set<std::string> constant_names;
  auto collect_constants = [&](const ir::Graph& g) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind == ir::NodeKind::kConstant) constant_names.insert(node.name);
    }
  };
  collect_constants(s_graph);
  for (const ir::Graph& g : d_program.ranks) collect_constants(g);

  // Inputs without a candidate get no relation: their D inputs stay random in the runs.
  auto relations_for = [&](const std::vector<size_t>& pick) {
    symbolic::SpecResult spec;
    for (size_t i = 0; i < n_inputs; ++i) {
      if (candidates[i].empty()) continue;
      Instance inst = Instantiate(candidates[i][pick[i]], run_s, run_d, i);
      for (const RelExpr& e : inst.exprs) {
        spec.inputs.push_back(symbolic::Relation{ir::TensorRef{run_s.inputs[i], 0}, e, "inferred"});
      }
    }
    for (const std::string& name : constant_names) spec.constants[name] = 0.0;
    return spec;
  };

  // Ambiguous inputs, grouped by the operator they feed (a weight with its bias), in order of
  // that operator.
  std::map<ir::NodeId, std::vector<size_t>> by_consumer;
  for (size_t i = 0; i < n_inputs; ++i) {
    if (candidates[i].size() < 2) continue;
    by_consumer[ComputingConsumer(s_graph, ir::TensorRef{s_graph.inputs[i], 0})].push_back(i);
  }
  std::vector<std::vector<size_t>> groups;
  for (auto& [consumer, members] : by_consumer) groups.push_back(std::move(members));
  // Which groups each S node depends on (nodes are in topological order).
  std::vector<std::set<size_t>> depends(run_s.nodes.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t m : groups[g]) depends[static_cast<size_t>(run_s.inputs[m])].insert(g);
  }
  for (size_t id = 0; id < run_s.nodes.size(); ++id) {
    for (ir::TensorRef in : run_s.nodes[id].TensorInputs()) {
      const std::set<size_t>& from = depends[static_cast<size_t>(in.node)];
      depends[id].insert(from.begin(), from.end());
    }
  }
  // The patterns every member of a group has, by key (members change together).
  auto common_keys = [&](const std::vector<size_t>& members) {
    std::vector<std::string> common;
    for (const InputPattern& p : candidates[members[0]]) {
      bool everywhere = true;
      for (size_t m : members) {
        everywhere &= std::any_of(candidates[m].begin(), candidates[m].end(),
                                  [&](const InputPattern& q) { return q.Key() == p.Key(); });
      }
      if (everywhere) common.push_back(p.Key());
    }
    return common;
  };
  auto with_key = [&](std::vector<size_t> pick, const std::vector<size_t>& members,
                      const std::string& key) {
    for (size_t m : members) {
      for (size_t k = 0; k < candidates[m].size(); ++k) {
        if (candidates[m][k].Key() == key) pick[m] = k;
      }
    }
    return pick;
  };

  Trials trials(run_s, run_d, options, relations_for(choice), &result);
  std::set<ir::TensorRef> best_matched = trials.Run(relations_for(choice));
  FingerprintTable best_table = trials.TakeDTable();
  result.trials.push_back("first candidate of every input: " +
                          std::to_string(best_matched.size()) + " of " +
                          std::to_string(trials.observed()) + " S tensors matched");

  // Groups are decided in order. The evidence for group g (with the groups merged into it) is
  // the S tensors that depend on it and on no later group: a later group's choice is not made
  // yet, so tensors depending on it say nothing about g. A group without such tensors (its
  // inputs meet a later group's at once) is decided jointly with the next group it meets. The
  // first candidates are kept when they match the whole region (no run at all); otherwise every
  // combination is run, and the one matching most of the region wins (a tie keeps the earlier,
  // simpler choice: a consistent permutation of hidden units is as good as none).
  for (size_t g = 0; g < groups.size();) {
    std::set<size_t> unit = {g};
    std::vector<ir::TensorRef> region;
    auto collect_region = [&] {
      region.clear();
      size_t last = *unit.rbegin();
      for (ir::TensorRef ref : trials.observed_refs()) {
        // Integer and boolean tensors are no evidence: vocabulary-parallel code computes masks
        // and indices in each rank's local coordinates (Megatron's cross entropy: the argmax of
        // the local logits), which match S under no layout.
        if (!at::isFloatingType(ToAten(trials.s_table().Find(0, ref)->dtype))) continue;
        const std::set<size_t>& deps = depends[static_cast<size_t>(ref.node)];
        bool touches = std::any_of(unit.begin(), unit.end(),
                                   [&](size_t u) { return deps.count(u) != 0; });
        if (touches && *deps.rbegin() <= last) region.push_back(ref);
      }
    };
    collect_region();
    while (region.empty() && *unit.rbegin() + 1 < groups.size()) {
      unit.insert(*unit.rbegin() + 1);
      collect_region();
    }
    std::vector<size_t> members;
    std::string names;
    for (size_t u : unit) {
      members.insert(members.end(), groups[u].begin(), groups[u].end());
      names += (names.empty() ? "" : "; ") + names_of(groups[u]);
    }
    auto region_matched = [&](const std::set<ir::TensorRef>& matched) {
      return static_cast<size_t>(std::count_if(region.begin(), region.end(), [&](ir::TensorRef r) {
        return matched.count(r) != 0;
      }));
    };
    auto keys_of = [&](const std::vector<size_t>& pick) {
      std::string keys;
      for (size_t u : unit) {
        keys += (keys.empty() ? "" : "; ") + candidates[groups[u][0]][pick[groups[u][0]]].Key();
      }
      return keys;
    };
    size_t best = region_matched(best_matched);
    std::string evidence = std::to_string(region.size()) + " S tensors depending on it";
    if (best == region.size()) {
      result.notes.push_back(names + ": " + keys_of(choice) + " (every one of the " + evidence +
                             " matched)");
      g = *unit.rbegin() + 1;
      continue;
    }
    // Every combination of the unit's groups' patterns, the current one first.
    std::vector<std::vector<size_t>> picks = {choice};
    for (size_t u : unit) {
      std::vector<std::vector<size_t>> next;
      for (const std::vector<size_t>& pick : picks) {
        for (const std::string& key : common_keys(groups[u])) {
          std::vector<size_t> p = with_key(pick, groups[u], key);
          if (std::find(next.begin(), next.end(), p) == next.end()) next.push_back(p);
        }
      }
      picks = std::move(next);
    }
    std::vector<size_t> best_pick = choice;
    for (const std::vector<size_t>& pick : picks) {
      if (pick == choice) continue;
      std::set<ir::TensorRef> matched = trials.Run(relations_for(pick));
      size_t score = region_matched(matched);
      result.trials.push_back(names + " = " + keys_of(pick) + ": " + std::to_string(score) +
                              " of " + std::to_string(region.size()) + " matched");
      if (score > best) {
        best = score;
        best_matched = std::move(matched);
        best_table = trials.TakeDTable();
        best_pick = pick;
      }
      if (best == region.size()) break;
    }
    choice = best_pick;
    result.notes.push_back(names + ": " + keys_of(choice) + " (" + std::to_string(best) +
                           " of the " + evidence + " matched; " + std::to_string(picks.size()) +
                           " combinations)");
    g = *unit.rbegin() + 1;
  }
  result.matched = static_cast<int>(best_matched.size());
  {
    FingerprintMatcher matcher(best_table, trials.LooseMatch());
    for (ir::TensorRef ref : trials.observed_refs()) {
      if (best_matched.count(ref)) continue;
      std::vector<Candidate> found = trials.Judge(matcher, ref);
      std::string closest = found.empty() ? "" : " (closest: " + found.front().ToString() + ")";
      result.unmatched.push_back(run_s.ValueName(ref) + closest);
    }
  }
  result.s_tensors = trials.observed();
  if (options.hints) {
    FingerprintMatcher matcher(best_table, trials.LooseMatch());
    for (ir::TensorRef ref : trials.observed_refs()) {
      for (const Candidate& c : trials.Judge(matcher, ref)) {
        if (!c.holds()) break;
        for (const RelExpr& expr : c.exprs) {
          std::string why;
          std::optional<ir::TensorType> type = symbolic::InferRelType(expr, d_program, &why);
          if (type && type->shape == s_graph.type(ref).shape) {
            result.hints.Add(ref, expr);
          } else {
            ++result.hints_dropped;
          }
        }
      }
    }
  }

  // The spec text.
  std::ostringstream out;
  out << "// Relation spec INFERRED by graphguard infer-relations";
  if (!options.s_origin.empty()) out << " for " << options.s_origin;
  out << " (" << d_program.world_size() << " ranks): review it before use.\n"
      << "// How: every S input is paired with the D input of the same name; its candidates come\n"
      << "// from the shapes (replicate, shard(d), fused block layouts). Ambiguous inputs were\n"
      << "// decided by executing S and D on random inputs (seed " << options.seed
      << (options.resize_text.empty() ? "" : ", resized " + options.resize_text)
      << ") and counting\n"
      << "// the S tensors whose fingerprints some D expression matches; outputs are the matches\n"
      << "// of the best run. " << result.matched << " of " << result.s_tensors
      << " S tensors matched in that run.\n"
      << "// Assumed: dropout is off (masks are not related); graph constants the capture omits\n"
      << "// are 0 (the `constant` line below); a match on one random draw is evidence, not\n"
      << "// proof: `graphguard verify` proves the spec, `graphguard check` re-tests it.\n";
  if (!options.memory_note.empty()) {
    out << "// Memory: " << options.memory_note << " (--memory-budget).\n";
  }
  for (const std::string& note : result.notes) out << "// chosen: " << note << "\n";
  out << "\n";
  for (size_t i = 0; i < n_inputs; ++i) {
    const std::string& name = s_graph.node(s_graph.inputs[i]).name;
    if (candidates[i].empty()) {
      out << "// input " << name << ": NO RELATION FOUND (" << unresolved_why[i]
          << "); write its rule by hand\n";
      continue;
    }
    Instance inst = Instantiate(candidates[i][choice[i]], s_graph, d_program, i);
    out << "input " << name << " = " << inst.rule << "\n";
  }
  // Outputs.
  FingerprintMatcher matcher(best_table, trials.LooseMatch());
  std::set<ir::NodeId> inputs_of_s(s_graph.inputs.begin(), s_graph.inputs.end());
  std::set<ir::TensorRef> written;
  std::vector<int64_t> positions = options.outputs;
  if (positions.empty()) {
    for (size_t p = 0; p < run_s.outputs.size(); ++p) positions.push_back(static_cast<int64_t>(p));
  }
  out << "\n";
  for (int64_t position : positions) {
    if (position < 0 || static_cast<size_t>(position) >= run_s.outputs.size()) {
      throw InputError(s_graph.file, s_graph.return_line,
                       "S has no output #" + std::to_string(position));
    }
    const ir::Value& value = run_s.outputs[static_cast<size_t>(position)];
    if (!value.is_tensor()) continue;
    ir::TensorRef ref = value.as_tensor();
    bool explicitly = !options.outputs.empty();
    if (!explicitly && (inputs_of_s.count(ref.node) || written.count(ref))) continue;
    written.insert(ref);
    const TensorFingerprint* fp = trials.s_table().Find(0, ref);
    std::string name = s_graph.ValueName(ref);
    std::vector<Candidate> found = fp ? trials.Judge(matcher, ref) : std::vector<Candidate>{};
    std::string comment;
    std::string rule = OutputRule(found, run_d, static_cast<size_t>(position), &comment);
    if (rule.empty()) {
      out << "// output #" << position << " (" << name << "): no D expression matched"
          << (found.empty() ? "" : "; closest: " + found.front().ToString()) << "\n";
      continue;
    }
    bool shorthand = rule == "replicate" || rule == "partial" || rule.rfind("shard(", 0) == 0;
    if (!shorthand) {
      // An expression over other D tensors (slices of an arange, ...) is a finding to review,
      // not a rule to check blindly; written with the resized run's sizes when resized.
      out << "// output #" << position << " = " << SpecExpression(rule) << "  // " << name
          << ": " << comment
          << (options.resize_text.empty() ? "" : " (sizes of the resized run)") << "\n";
      continue;
    }
    out << "output #" << position << " = " << rule << "  // " << name
        << (comment.empty() ? "" : ": " + comment) << "\n";
  }
  if (!constant_names.empty()) {
    out << "\n// Graph constants whose values the capture omits: assumed 0 (the runs used 0).\n"
        << "constant ";
    bool first = true;
    for (const std::string& name : constant_names) {
      out << (first ? "" : ", ") << name;
      first = false;
    }
    out << " = 0\n";
  }
  result.spec_text = out.str();
  return result;
}

frontend::MemoryEstimate EstimateInferMemory(const ir::Graph& run_s, const ir::Program& run_d,
                                             const InferOptions& options) {
  // No comparison and no kept D tensor: matching reads fingerprints only.
  frontend::MemoryEstimate estimate = frontend::EstimateCheckMemory(run_s, run_d, {});
  FingerprintCost s = FingerprintCostOf(run_s, options), d;
  for (const ir::Graph& rank : run_d.ranks) {
    FingerprintCost r = FingerprintCostOf(rank, options);
    d.table += r.table;
    d.largest_copy = std::max(d.largest_copy, r.largest_copy);
  }
  estimate.s_run += 2 * s.table + s.largest_copy;
  estimate.d_run += s.table + 2 * d.table + d.largest_copy;
  estimate.peak = estimate.inputs + std::max(estimate.s_run, estimate.d_run);
  return estimate;
}

void CheckResizedLayouts(const ir::Graph& s_graph, const ir::Program& d_program,
                         const ir::Graph& run_s, const ir::Program& run_d) {
  for (size_t i = 0; i < s_graph.inputs.size() && i < run_s.inputs.size(); ++i) {
    const ir::Node& input = run_s.node(run_s.inputs[i]);
    std::string unused;
    for (const InputPattern& pattern : CandidatePatterns(s_graph, d_program, i, &unused)) {
      auto refuse = [&](const std::string& why) {
        throw InputError(s_graph.file, s_graph.node(s_graph.inputs[i]).def_line,
                         "input " + input.name + "'s candidate layout " + pattern.Key() +
                             " does not fit the resized sizes (" + why + ")");
      };
      Instance instance = Instantiate(pattern, run_s, run_d, i);
      if (instance.exprs.empty()) refuse("its blocks no longer divide");
      for (const RelExpr& expr : instance.exprs) {
        std::string why;
        std::optional<ir::TensorType> type = symbolic::InferRelType(expr, run_d, &why);
        if (!type) refuse(why);
        if (type->shape != input.type().shape) {
          refuse(expr.ToString() + " is " + type->ToString() + ", the input " +
                 input.type().ToString());
        }
      }
    }
  }
}

}  // namespace gg::runtime
