#include "runtime/lemma_proposal.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "runtime/lemma_selftest.h"
#include "symbolic/egraph.h"
#include "symbolic/extract.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/local_graph.h"
#include "symbolic/lowering.h"
#include "symbolic/tensor_lang.h"

namespace gg::runtime {
namespace {

using symbolic::ClassId;
using symbolic::ENode;
using symbolic::OpId;
using symbolic::RecExpr;
using symbolic::RelExpr;
using symbolic::TensorLanguage;
using symbolic::TensorLeaf;

using DKey = std::pair<int32_t, ir::TensorRef>;

// A term as a tree (an extracted RecExpr, which shares subterms).
struct Term {
  OpId op = 0;
  int64_t payload = 0;
  std::vector<Term> kids;
};

Term ToTree(const RecExpr& expr, uint32_t at) {
  const ENode& node = expr.nodes.at(at);
  Term term{node.op, node.payload, {}};
  for (ClassId child : node.children) term.kids.push_back(ToTree(expr, child));
  return term;
}

// One scratch e-graph holding the stuck S operator over its inputs' relation forms and the D
// expressions, unfolded. Nothing is rewritten: classes hold what lowering put there.
class Builder {
 public:
  Builder(const ir::Program& d_program, const symbolic::DIndex& index,
          const symbolic::SpecResult& spec, std::set<DKey> stops, int32_t depth)
      : lang_(TensorLanguage::Get()),
        egraph_(lang_.ops()),
        d_program_(d_program),
        index_(index),
        spec_(spec),
        stops_(std::move(stops)),
        depth_(depth) {
    analysis_ = &egraph_.AddAnalysis(std::make_unique<symbolic::TensorAnalysis>(leaves_));
    analysis_->set_world_size(d_program.world_size());
  }

  symbolic::EGraph& egraph() { return egraph_; }
  const symbolic::TensorAnalysis& analysis() const { return *analysis_; }
  const symbolic::LeafTable& leaves() const { return leaves_; }

  ClassId DLeaf(int32_t rank, ir::TensorRef ref) {
    const ir::Graph& g = d_program_.rank(rank);
    TensorLeaf leaf{TensorLeaf::Side::kDist, rank, ref, g.type(ref), g.ValueName(ref)};
    return egraph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
  }

  // The class of a relation expression; D tensors are unfolded when `unfold`.
  ClassId AddRel(const RelExpr& expr, bool unfold) {
    return symbolic::AddRelExprTo(egraph_, *analysis_, expr, [&](const symbolic::DTensor& d) {
      return unfold ? Unfold(d.rank, d.tensor, depth_) : DLeaf(d.rank, d.tensor);
    });
  }

  // D tensor `ref` of `rank` through its own definition, down to the D tensors the inputs'
  // relations mention (or `depth` definitions, or what cannot be lowered: a leaf then).
  ClassId Unfold(int32_t rank, ir::TensorRef ref, int32_t depth) {
    DKey key{rank, ref};
    if (stops_.count(key) || depth <= 0) return DLeaf(rank, ref);
    if (auto it = unfolded_.find(key); it != unfolded_.end()) return egraph_.Find(it->second);
    ClassId result = UnfoldProducer(rank, ref, depth);
    unfolded_[key] = result;
    return result;
  }

 private:
  ClassId UnfoldProducer(int32_t rank, ir::TensorRef ref, int32_t depth) {
    const ir::Graph& g = d_program_.rank(rank);
    const ir::Node& node = g.node(ref.node);
    if (node.kind != ir::NodeKind::kOperator) return DLeaf(rank, ref);
    ir::CollectiveKind kind = index_.Collective(rank, ref.node);
    if (kind == ir::CollectiveKind::kWait) {
      const auto& ins = index_.TensorInputs(rank, ref.node);
      return ins.empty() ? DLeaf(rank, ref) : Unfold(rank, ins[0], depth);
    }
    if (kind != ir::CollectiveKind::kNone) {
      const auto* peers = index_.Peers(rank, ref.node);
      if (!peers || ref.output != 0 || !node.outputs[0].type) return DLeaf(rank, ref);
      std::vector<ClassId> member_inputs;
      std::vector<const ir::Node*> member_nodes;
      size_t position = 0;
      for (size_t k = 0; k < peers->size(); ++k) {
        const auto& [pg, pid] = (*peers)[k];
        if (pg == rank) position = k;
        const auto& ins = index_.TensorInputs(pg, pid);
        if (ins.empty()) return DLeaf(rank, ref);
        member_inputs.push_back(Unfold(pg, ins[0], depth - 1));
        member_nodes.push_back(&d_program_.rank(pg).node(pid));
      }
      std::optional<ClassId> out = symbolic::LowerCollective(egraph_, node, member_inputs, position,
                                                             *node.outputs[0].type, member_nodes);
      return out ? egraph_.Find(*out) : DLeaf(rank, ref);
    }
    std::map<ir::TensorRef, ClassId> inputs;
    for (ir::TensorRef in : index_.TensorInputs(rank, ref.node)) {
      inputs[in] = Unfold(rank, in, depth - 1);
    }
    symbolic::LoweredNode lowered = symbolic::LowerNode(
        egraph_, *analysis_, g, ref.node,
        [&](ir::TensorRef in) {
          auto it = inputs.find(in);
          return it != inputs.end() ? egraph_.Find(it->second) : DLeaf(rank, in);
        },
        "D" + std::to_string(rank) + ":" + std::to_string(ref.node), &spec_.constants,
        spec_.rng_model == "positional");
    size_t out = static_cast<size_t>(ref.output);
    if (out >= lowered.outputs.size() || !lowered.outputs[out] ||
        (out < lowered.opaque.size() && lowered.opaque[out])) {
      return DLeaf(rank, ref);
    }
    return egraph_.Find(*lowered.outputs[out]);
  }

  const TensorLanguage& lang_;
  symbolic::LeafTable leaves_;
  symbolic::EGraph egraph_;
  symbolic::TensorAnalysis* analysis_ = nullptr;
  const ir::Program& d_program_;
  const symbolic::DIndex& index_;
  const symbolic::SpecResult& spec_;
  std::set<DKey> stops_;
  int32_t depth_;
  std::map<DKey, ClassId> unfolded_;
};

// Writes the LHS and RHS terms as patterns: D leaves become variables (list variables for the
// per-rank values of one D tensor under a concat or a reduction over ranks, in list mode).
class Generalizer {
 public:
  Generalizer(const symbolic::LeafTable& leaves, const std::map<DKey, size_t>& replica_of,
              int32_t world, bool lists)
      : lang_(TensorLanguage::Get()),
        leaves_(leaves),
        replica_of_(replica_of),
        world_(world),
        lists_(lists) {}

  std::optional<std::string> Lhs(const Term& t) { return Print(t, /*lhs=*/true, -1); }
  std::optional<std::string> Rhs(const Term& t) { return Print(t, /*lhs=*/false, -1); }

  // The self-test signature for the variables the LHS bound; nullopt for a leaf whose dtype the
  // harness cannot draw (integers) or with a dynamic shape.
  std::optional<std::string> Signature() {
    std::string out;
    for (const std::string& name : order_) {
      const Var& v = vars_.at(name);
      const ir::TensorType& type = leaves_.at(v.leaf).type;
      if (!ir::IsStatic(type.shape)) return std::nullopt;
      std::string dims;
      for (size_t i = 0; i < type.shape.size(); ++i) {
        int64_t size = type.shape[i].value();
        if (!dims.empty()) dims += ", ";
        if (size == 1) {
          dims += "1";
        } else if (v.list && static_cast<int64_t>(i) == v.concat_dim) {
          dims += Symbol(&star_, size, "klmnopqrst") + "*";
        } else {
          dims += Symbol(&plain_, size, "abcdefghij");
        }
      }
      std::string kind;
      if (type.dtype == ir::DType::kBool) {
        kind = "bool";
      } else if (!ir::IsFloatingPoint(type.dtype)) {
        return std::nullopt;
      }
      if (!out.empty()) out += "; ";
      out += "?" + name + ": " + kind + "[" + dims + "]";
    }
    return out;
  }

 private:
  struct Var {
    int64_t leaf = 0;  // a representative leaf (element 0 of a list)
    bool list = false;
    int64_t concat_dim = -1;  // lists under a concat: the dimension drawn per element
  };

  static std::string Symbol(std::map<int64_t, std::string>* table, int64_t size,
                            const std::string& letters) {
    auto it = table->find(size);
    if (it != table->end()) return it->second;
    size_t n = table->size();
    std::string name(1, letters[n % letters.size()]);
    if (n >= letters.size()) name += std::to_string(n / letters.size());
    (*table)[size] = name;
    return name;
  }

  // The variadic children of op (concat after its dim; reductions over ranks: all).
  bool Variadic(const Term& t, size_t* first) const {
    if (t.op == lang_.concat) {
      *first = 1;
      return t.kids.size() >= 2 && t.kids[0].op == lang_.num;
    }
    *first = 0;
    return t.op == lang_.sumr || t.op == lang_.maxr || t.op == lang_.minr;
  }

  const TensorLeaf& LeafOf(const Term& t) const { return leaves_.at(t.payload); }

  std::string NewName(bool list) {
    std::string base = list ? std::string(1, "xyzwvu"[num_lists_ % 6]) + "s"
                            : std::string(1, "xyzwvutqrp"[num_vars_ % 10]);
    size_t n = list ? num_lists_++ : num_vars_++;
    if (n >= (list ? 6u : 10u)) base += std::to_string(n / (list ? 6 : 10));
    return base;
  }

  // An LHS list: every variadic child a leaf of the same D tensor name, the i-th on rank i.
  std::optional<std::string> LhsList(const Term& t, size_t first) {
    size_t count = t.kids.size() - first;
    if (!lists_ || count != static_cast<size_t>(world_) || count < 2) return std::nullopt;
    std::string name;
    for (size_t i = 0; i < count; ++i) {
      const Term& kid = t.kids[first + i];
      if (kid.op != lang_.tensor) return std::nullopt;
      const TensorLeaf& leaf = LeafOf(kid);
      if (leaf.rank != static_cast<int32_t>(i)) return std::nullopt;
      if (i == 0) name = leaf.name;
      if (leaf.name != name || list_of_.count(kid.payload) || fixed_.count(kid.payload)) {
        return std::nullopt;
      }
    }
    std::string var = NewName(true);
    Var v{t.kids[first].payload, true, -1};
    if (t.op == lang_.concat) {
      int64_t d = t.kids[0].payload;
      int64_t rank = static_cast<int64_t>(LeafOf(t.kids[first]).type.shape.size());
      v.concat_dim = d < 0 ? d + rank : d;
    }
    vars_[var] = v;
    order_.push_back(var);
    for (size_t i = 0; i < count; ++i) list_of_[t.kids[first + i].payload] = {var, i};
    return var;
  }

  std::optional<std::string> Leaf(const Term& t, bool lhs, int64_t element) {
    if (auto it = list_of_.find(t.payload); it != list_of_.end()) {
      // A list's element only inside an RHS repetition, at its own position.
      if (lhs || element != static_cast<int64_t>(it->second.second)) return std::nullopt;
      used_list_ = true;
      return "?" + it->second.first;
    }
    const TensorLeaf& leaf = LeafOf(t);
    // Replicas of one S input are one variable.
    int64_t key = t.payload;
    if (auto r = replica_of_.find({leaf.rank, leaf.ref}); r != replica_of_.end()) {
      key = -1 - static_cast<int64_t>(r->second);
    }
    if (auto it = fixed_.find(key); it != fixed_.end()) return "?" + it->second;
    if (!lhs) return std::nullopt;  // the RHS uses what the LHS binds
    std::string var = NewName(false);
    fixed_[key] = var;
    fixed_[t.payload] = var;
    vars_[var] = Var{t.payload, false, -1};
    order_.push_back(var);
    return "?" + var;
  }

  std::optional<std::string> Print(const Term& t, bool lhs, int64_t element) {
    const auto& info = lang_.ops().Info(t.op);
    if (t.op == lang_.num) return std::to_string(t.payload);
    if (t.op == lang_.tensor) return Leaf(t, lhs, element);
    if (t.op == lang_.opaque) return std::nullopt;
    std::string name(lang_.ops().Name(t.op));
    if (t.kids.empty()) {
      return info.payload_leaf ? "(" + name + " " + std::to_string(t.payload) + ")" : name;
    }
    size_t first = 0;
    if (lists_ && element < 0 && Variadic(t, &first)) {
      std::string head = "(" + name;
      for (size_t i = 0; i < first; ++i) head += " " + std::to_string(t.kids[i].payload);
      if (lhs) {
        if (auto list = LhsList(t, first)) return head + " ?" + *list + "...)";
      } else if (t.kids.size() - first == static_cast<size_t>(world_) && world_ >= 2) {
        // A child repeated per rank: the same template at every position.
        std::optional<std::string> templ;
        bool same = true;
        for (size_t i = 0; same && i < t.kids.size() - first; ++i) {
          bool saved = used_list_;
          used_list_ = false;
          std::optional<std::string> s = Print(t.kids[first + i], false, static_cast<int64_t>(i));
          bool mentions = used_list_;
          used_list_ = saved;
          if (!s || !mentions || (templ && *templ != *s)) {
            same = false;
          } else {
            templ = s;
          }
        }
        if (same && templ) return head + " " + *templ + "...)";
      }
    }
    std::string out = "(" + name;
    for (const Term& kid : t.kids) {
      std::optional<std::string> s = Print(kid, lhs, element);
      if (!s) return std::nullopt;
      out += " " + *s;
    }
    return out + ")";
  }

  const TensorLanguage& lang_;
  const symbolic::LeafTable& leaves_;
  const std::map<DKey, size_t>& replica_of_;
  int32_t world_;
  bool lists_;
  std::map<int64_t, std::string> fixed_;  // leaf id (or -1 - input index) -> variable
  std::map<int64_t, std::pair<std::string, size_t>> list_of_;  // leaf id -> (list, position)
  std::map<std::string, Var> vars_;
  std::vector<std::string> order_;
  std::map<int64_t, std::string> plain_, star_;
  size_t num_vars_ = 0, num_lists_ = 0;
  bool used_list_ = false;
};

// The relation forms of one S input worth trying: structured ones (a concat, a sum) first, then
// one plain D tensor.
std::vector<RelExpr> FormsOf(const std::vector<symbolic::InferredRelation>& rels) {
  std::vector<RelExpr> structured, plain;
  for (const symbolic::InferredRelation& r : rels) {
    auto& list =
        std::holds_alternative<symbolic::DTensor>(r.relation.expr.node().kind) ? plain : structured;
    bool seen = false;
    for (const RelExpr& e : list) seen = seen || e == r.relation.expr;
    if (!seen) list.push_back(r.relation.expr);
  }
  // The smallest first: a piece-wise form over the input's own D tensors (concat(0, t@0, t@1))
  // makes the more general lemma than one over what D computed them from.
  std::stable_sort(structured.begin(), structured.end(), [](const RelExpr& a, const RelExpr& b) {
    return a.ToString().size() < b.ToString().size();
  });
  if (structured.size() > 2) structured.resize(2);
  if (!plain.empty()) structured.push_back(plain.front());
  return structured;
}

std::string Kebab(std::string name) {
  for (char& c : name) {
    if (c == '_' || c == '.') c = '-';
  }
  return name;
}

}  // namespace

std::string LemmaProposal::Text() const {
  return "# " + math + "\n# " + checked + "\n" + rule + "\n#   test " + test + "\n";
}

std::vector<LemmaProposal> ProposeLemmas(
    const ir::Graph& s_graph, const ir::Program& d_program, const symbolic::SpecResult& spec,
    const symbolic::VerifyResult& verify, ir::NodeId s_node,
    const std::vector<std::pair<ir::TensorRef, RelExpr>>& numeric, const ProposalOptions& options) {
  std::vector<LemmaProposal> proposals;
  const ir::Node& node = s_graph.node(s_node);
  if (node.kind != ir::NodeKind::kOperator || numeric.empty()) return proposals;
  const TensorLanguage& lang = TensorLanguage::Get();
  std::vector<ir::TensorRef> inputs = symbolic::ReadInputs(s_graph, s_node, &spec.constants);

  // Per input: the forms to try, its replicas (plain D tensors it equals), and every D tensor its
  // relations mention (where unfolding the RHS stops).
  std::vector<std::vector<RelExpr>> forms;
  std::map<DKey, size_t> replica_of;
  std::set<DKey> stops;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto it = verify.relations.find(s_graph.ValueName(inputs[i]));
    if (it == verify.relations.end() || it->second.empty()) return proposals;
    forms.push_back(FormsOf(it->second));
    for (const symbolic::InferredRelation& r : it->second) {
      const RelExpr& e = r.relation.expr;
      if (const auto* d = std::get_if<symbolic::DTensor>(&e.node().kind)) {
        replica_of.emplace(DKey{d->rank, d->tensor}, i);
      }
      symbolic::ForEachDLeaf(e, [&](const symbolic::DTensor& d) {
        stops.insert({d.rank, d.tensor});
      });
    }
  }
  // Combinations of forms, the first choice of each input first.
  std::vector<std::vector<size_t>> choices{std::vector<size_t>(inputs.size(), 0)};
  for (size_t i = 0; i < inputs.size() && choices.size() < options.max_input_choices; ++i) {
    for (size_t k = 1; k < forms[i].size() && choices.size() < options.max_input_choices; ++k) {
      std::vector<size_t> c(inputs.size(), 0);
      c[i] = k;
      choices.push_back(c);
    }
  }

  const symbolic::DIndex index(d_program);
  std::set<std::string> seen;
  const std::string where = node.source.empty() ? "" : " (" + node.source.ToString() + ")";
  for (const auto& [s_tensor, expr] : numeric) {
    for (const std::vector<size_t>& choice : choices) {
      Builder builder(d_program, index, spec, stops, options.max_unfold_depth);
      std::map<ir::TensorRef, ClassId> input_class;
      for (size_t i = 0; i < inputs.size(); ++i) {
        input_class[inputs[i]] = builder.AddRel(forms[i][choice[i]], /*unfold=*/false);
      }
      symbolic::LoweredNode lowered;
      ClassId rhs_class = symbolic::kNoClass;
      try {
        lowered = symbolic::LowerNode(
            builder.egraph(), builder.analysis(), s_graph, s_node,
            [&](ir::TensorRef in) { return builder.egraph().Find(input_class.at(in)); }, "S",
            &spec.constants, spec.rng_model == "positional");
        rhs_class = builder.AddRel(expr, /*unfold=*/true);
      } catch (const std::exception&) {
        continue;
      }
      size_t out = static_cast<size_t>(s_tensor.output);
      if (out >= lowered.outputs.size() || !lowered.outputs[out] ||
          (out < lowered.opaque.size() && lowered.opaque[out])) {
        continue;
      }
      builder.egraph().Rebuild();
      symbolic::Extractor extractor(builder.egraph(), symbolic::AstSize());
      auto lhs_term = extractor.Extract(builder.egraph().Find(*lowered.outputs[out]));
      auto rhs_term = extractor.Extract(builder.egraph().Find(rhs_class));
      if (!lhs_term || !rhs_term) continue;
      Term lhs = ToTree(lhs_term->expr, lhs_term->expr.root());
      Term rhs = ToTree(rhs_term->expr, rhs_term->expr.root());
      if (lhs.op == lang.tensor || lang.is_relation(lhs.op)) continue;
      for (bool lists : {true, false}) {
        Generalizer gen(builder.leaves(), replica_of, d_program.world_size(), lists);
        std::optional<std::string> l = gen.Lhs(lhs), r = gen.Rhs(rhs), sig = gen.Signature();
        if (!l || !r || !sig || *l == *r) continue;
        if (!seen.insert(*l + " => " + *r).second) break;
        LemmaProposal p;
        p.id = "proposed-" + Kebab(std::string(lang.ops().Name(lhs.op))) + "-" +
               Kebab(s_graph.ValueName(s_tensor));
        for (const LemmaProposal& q : proposals) {
          if (q.id == p.id) p.id += "-" + std::to_string(proposals.size() + 1);
        }
        p.math = "proposed from the numeric run: S " + s_graph.ValueName(s_tensor) + where +
                 " == " + expr.ToString();
        p.rule = p.id + ": " + *l + " => " + *r;
        p.test = *sig;
        symbolic::LemmaSelfTestReport report;
        try {
          symbolic::LemmaCatalogue one =
              symbolic::LemmaCatalogue::Load({{"proposed.rules", p.Text()}});
          if (one.lemmas().size() != 1) continue;
          report = SelfTestLemma(one.lemmas().front(), options.seeds);
        } catch (const std::exception&) {
          continue;  // not a rule the catalogue can read, or a signature it cannot draw
        }
        if (!report.failures.empty() || report.draws == 0) continue;
        p.checked = "self-tested: " + std::to_string(report.draws) + " draws, " +
                    std::to_string(report.compared) + " e-nodes compared";
        proposals.push_back(std::move(p));
        if (proposals.size() >= options.max_proposals) return proposals;
        break;  // the list form holds: the fixed-arity one adds nothing
      }
    }
  }
  return proposals;
}

}  // namespace gg::runtime
