#include "runtime/infer_relations.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "runtime/executor.h"
#include "runtime/input_synthesis.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

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

// Candidate patterns of S input `index`, most likely first.
std::vector<InputPattern> CandidatePatterns(const ir::Graph& s_graph, const ir::Program& d,
                                            size_t index) {
  const ir::Node& input = s_graph.node(s_graph.inputs[index]);
  std::vector<int64_t> s_shape = StaticShape(input.type());
  std::vector<std::vector<int64_t>> d_shapes;
  for (int32_t r = 0; r < d.world_size(); ++r) {
    std::optional<ir::TensorRef> ref = d.rank(r).Find(input.name);
    if (!ref || d.rank(r).node(ref->node).kind != ir::NodeKind::kInput) {
      throw InputError(s_graph.file, input.def_line,
                       "S input '" + input.name + "' has no D input of the same name on rank " +
                           std::to_string(r) + "; write its relation by hand");
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
    throw InputError(s_graph.file, input.def_line,
                     "no candidate relation for S input '" + input.name + "' " +
                         input.type().ToString() +
                         ": its D inputs are neither equal to it nor a split of one dimension; "
                         "write its relation by hand");
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

// Executions of S (once) and D (per trial), scored by fingerprint matches.
class Trials {
 public:
  Trials(const ir::Graph& s, const ir::Program& d, const InferOptions& options)
      : s_(s), d_(d), options_(options) {}

  // Runs D (and S the first time) with the given input relations; returns the number of S
  // tensors (not inputs) matched. Keeps the last run's tables.
  int Run(const symbolic::SpecResult& relations) {
    ProgramInputs inputs = SynthesizeInputs(s_, d_, relations, options_.seed);
    ExecutionOptions exec;
    exec.dropout_off = true;
    exec.seed = options_.seed;
    if (s_table_.ranks.empty()) {
      exec.observe = FingerprintObserver(&s_table_, {&s_}, options_.fingerprint);
      Execute(s_, inputs.s, exec);
    }
    d_table_ = FingerprintTable{};
    std::vector<const ir::Graph*> graphs;
    for (const ir::Graph& g : d_.ranks) graphs.push_back(&g);
    exec.observe = FingerprintObserver(&d_table_, graphs, options_.fingerprint);
    ExecuteProgram(d_, inputs.d, exec);
    ++executions_;
    FingerprintMatcher matcher(d_table_, options_.match);
    std::set<ir::NodeId> inputs_of_s(s_.inputs.begin(), s_.inputs.end());
    int matched = 0;
    observed_ = 0;
    matched_nodes_.clear();
    for (const auto& [ref, fp] : s_table_.ranks[0]) {
      if (inputs_of_s.count(ref.node)) continue;
      ++observed_;
      std::vector<Candidate> c = matcher.CandidatesFor(fp);
      if (!c.empty() && c.front().holds()) {
        ++matched;
        matched_nodes_.insert(ref);
      }
    }
    return matched;
  }

  // S tensors the last run matched.
  const std::set<ir::TensorRef>& matched_nodes() const { return matched_nodes_; }

  const FingerprintTable& s_table() const { return s_table_; }
  const FingerprintTable& d_table() const { return d_table_; }
  int executions() const { return executions_; }
  int observed() const { return observed_; }

 private:
  const ir::Graph& s_;
  const ir::Program& d_;
  const InferOptions& options_;
  FingerprintTable s_table_, d_table_;
  int executions_ = 0;
  int observed_ = 0;
  std::set<ir::TensorRef> matched_nodes_;
};

// Operator nodes within `depth` uses of `start`'s outputs (start included).
std::set<ir::NodeId> Downstream(const ir::Graph& graph, ir::NodeId start, int depth) {
  std::set<ir::NodeId> reached = {start};
  std::set<ir::NodeId> frontier = {start};
  for (int step = 0; step < depth && !frontier.empty(); ++step) {
    std::set<ir::NodeId> next;
    for (size_t id = static_cast<size_t>(start) + 1; id < graph.nodes.size(); ++id) {
      for (ir::TensorRef in : graph.nodes[id].TensorInputs()) {
        if (frontier.count(in.node) && !reached.count(static_cast<ir::NodeId>(id))) {
          next.insert(static_cast<ir::NodeId>(id));
        }
      }
    }
    reached.insert(next.begin(), next.end());
    frontier = std::move(next);
  }
  return reached;
}

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

}  // namespace

InferResult InferRelations(const ir::Graph& s_graph, const ir::Program& d_program,
                           const ir::Graph& run_s, const ir::Program& run_d,
                           const InferOptions& options) {
  InferResult result;
  const size_t n_inputs = s_graph.inputs.size();
  std::vector<std::vector<InputPattern>> candidates(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) candidates[i] = CandidatePatterns(s_graph, d_program, i);
  std::vector<size_t> choice(n_inputs, 0);

  // Constants the capture omits: 0 (the executor's default), stated in the spec.
  std::set<std::string> constant_names;
  auto collect_constants = [&](const ir::Graph& g) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind == ir::NodeKind::kConstant) constant_names.insert(node.name);
    }
  };
  collect_constants(s_graph);
  for (const ir::Graph& g : d_program.ranks) collect_constants(g);

  auto relations_for = [&](const std::vector<size_t>& pick) {
    symbolic::SpecResult spec;
    for (size_t i = 0; i < n_inputs; ++i) {
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
  std::map<ir::NodeId, std::vector<size_t>> groups;
  for (size_t i = 0; i < n_inputs; ++i) {
    if (candidates[i].size() < 2) continue;
    groups[ComputingConsumer(s_graph, ir::TensorRef{s_graph.inputs[i], 0})].push_back(i);
  }
  Trials trials(run_s, run_d, options);
  int best_score = trials.Run(relations_for(choice));
  std::set<ir::TensorRef> best_matched = trials.matched_nodes();
  for (const auto& [consumer, members] : groups) {
    // A choice is only questioned where it leaves S tensors near its consumer unmatched (a wrong
    // layout shows within a few operators, where the blocks are split apart).
    if (consumer >= 0) {
      std::set<ir::NodeId> near = Downstream(run_s, consumer, 4);
      bool all_matched = true;
      for (ir::NodeId id : near) {
        for (size_t o = 0; o < run_s.node(id).outputs.size(); ++o) {
          ir::TensorRef ref{id, static_cast<int32_t>(o)};
          bool observed = trials.s_table().Find(0, ref) != nullptr;
          all_matched &= !observed || best_matched.count(ref) != 0;
        }
      }
      if (all_matched) {
        std::string names;
        for (size_t m : members) {
          names += (names.empty() ? "" : ", ") + s_graph.node(s_graph.inputs[m]).name;
        }
        result.notes.push_back(names + ": " + candidates[members[0]][choice[members[0]]].Key() +
                               " (every S tensor within 4 operators of " +
                               s_graph.node(consumer).name + " matched)");
        continue;
      }
    }
    // Patterns every member has, by key.
    std::vector<std::string> keys;
    for (const InputPattern& p : candidates[members[0]]) keys.push_back(p.Key());
    std::vector<std::string> common;
    for (const std::string& key : keys) {
      bool everywhere = true;
      for (size_t m : members) {
        everywhere &= std::any_of(candidates[m].begin(), candidates[m].end(),
                                  [&](const InputPattern& p) { return p.Key() == key; });
      }
      if (everywhere) common.push_back(key);
    }
    std::vector<size_t> best = choice;
    std::string best_key = candidates[members[0]][choice[members[0]]].Key();
    for (const std::string& key : common) {
      std::vector<size_t> trial = choice;
      for (size_t m : members) {
        for (size_t k = 0; k < candidates[m].size(); ++k) {
          if (candidates[m][k].Key() == key) trial[m] = k;
        }
      }
      if (trial == choice) continue;
      int score = trials.Run(relations_for(trial));
      if (score > best_score) {
        best_score = score;
        best = trial;
        best_key = key;
        best_matched = trials.matched_nodes();
      }
    }
    choice = best;
    std::string names;
    for (size_t m : members) {
      names += (names.empty() ? "" : ", ") + s_graph.node(s_graph.inputs[m]).name;
    }
    result.notes.push_back(names + ": " + best_key + " (of " + std::to_string(common.size()) +
                           " candidates)");
  }
  // The final run under the chosen relations (the last trial may have been another choice).
  result.matched = trials.Run(relations_for(choice));
  result.executions = trials.executions();
  result.s_tensors = trials.observed();

  // The spec text.
  std::ostringstream out;
  out << "// Relation spec written by graphguard infer-relations";
  if (!options.s_origin.empty()) out << " for " << options.s_origin;
  out << " (" << d_program.world_size() << " ranks).\n"
      << "// Review it before use. Input relations were chosen by executing S and D on random\n"
      << "// inputs (seed " << options.seed << ", dropout off"
      << (options.resize_text.empty() ? "" : ", resized " + options.resize_text)
      << ") and matching fingerprints:\n"
      << "// " << result.matched << " of " << result.s_tensors
      << " S tensors matched an expression over D tensors.\n";
  for (const std::string& note : result.notes) out << "// chosen: " << note << "\n";
  out << "\n";
  for (size_t i = 0; i < n_inputs; ++i) {
    Instance inst = Instantiate(candidates[i][choice[i]], s_graph, d_program, i);
    out << "input " << s_graph.node(s_graph.inputs[i]).name << " = " << inst.rule << "\n";
  }
  // Outputs.
  FingerprintMatcher matcher(trials.d_table(), options.match);
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
    std::vector<Candidate> found = fp ? matcher.CandidatesFor(*fp) : std::vector<Candidate>{};
    std::string comment;
    std::string rule = OutputRule(found, run_d, static_cast<size_t>(position), &comment);
    if (rule.empty()) {
      out << "// output #" << position << " (" << name << "): no D expression matched"
          << (found.empty() ? "" : "; closest: " + found.front().ToString()) << "\n";
      continue;
    }
    bool shorthand = rule == "replicate" || rule == "partial" || rule.rfind("shard(", 0) == 0;
    out << "output #" << position << " = " << (shorthand ? rule : SpecExpression(rule)) << "  // "
        << name << (comment.empty() ? "" : ": " + comment)
        << (!shorthand && !options.resize_text.empty() ? " (sizes of the resized run)" : "")
        << "\n";
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

}  // namespace gg::runtime
