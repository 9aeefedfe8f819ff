// Lemma proposals (runtime/lemma_proposal.h): with one catalogue lemma taken out, the proof of a
// small tensor-parallel program stops UNKNOWN; the numeric evidence must propose a lemma that
// passes its self-test and, used as a rule, makes the proof go through again. A candidate the
// numbers refute is never proposed.
#include "runtime/lemma_proposal.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "runtime/lemma_selftest.h"
#include "runtime/verify_evidence.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {
namespace {

struct Case {
  ir::Graph s;
  ir::Program d;
  symbolic::SpecResult spec;
};

Case Load(const std::string& dir, const std::string& spec_file) {
  const std::string root = std::string(GG_SOURCE_DIR) + "/tests/data/" + dir;
  Case c{frontend::LoadGraph(root + "/seq.py"), frontend::LoadProgram({root + "/dist"}), {}};
  c.spec = symbolic::EvaluateSpec(symbolic::RelationSpec::Load(root + "/" + spec_file), c.s, c.d);
  return c;
}

// The catalogue's rules without lemma `id` (and its reverse), plus `extra`.
std::vector<symbolic::Rewrite> RulesWithout(const std::string& id,
                                            const std::vector<symbolic::Rewrite>& extra = {}) {
  std::vector<symbolic::Rewrite> rules;
  for (const symbolic::Rewrite& r : symbolic::LemmaCatalogue::Default().Rules()) {
    if (r.id != id && r.id != id + "-rev") rules.push_back(r);
  }
  rules.insert(rules.end(), extra.begin(), extra.end());
  return rules;
}

bool UsesLemma(const symbolic::VerifyResult& result, const std::string& id) {
  for (const auto& [name, rels] : result.relations) {
    for (const symbolic::InferredRelation& rel : rels) {
      for (const std::string& step : rel.proof) {
        if (step.rfind(id, 0) == 0) return true;
      }
    }
  }
  return false;
}

struct Sample {
  std::string dir, spec, lemma;
};

// Delete one lemma at a time: UNKNOWN, a proposal, and with it REFINES again.
TEST(LemmaProposal, RecoversEachDeletedLemma) {
  const std::vector<Sample> samples = {
      {"goals/matmul_rowpar", "spec.rel", "mm-concat-inner"},
      {"goals/matmul_colpar", "spec.rel", "mm-concat-cols"},
      {"regions/mlp", "whole.rel", "mm-concat-inner"},
  };
  for (const Sample& sample : samples) {
    SCOPED_TRACE(sample.dir + " without " + sample.lemma);
    Case c = Load(sample.dir, sample.spec);
    symbolic::VerifyResult full =
        symbolic::Verify(c.s, c.d, c.spec, symbolic::LemmaCatalogue::Default().Rules(), {});
    ASSERT_EQ(full.verdict, symbolic::Verdict::kRefines);
    ASSERT_TRUE(UsesLemma(full, sample.lemma));

    symbolic::VerifyResult without =
        symbolic::Verify(c.s, c.d, c.spec, RulesWithout(sample.lemma), {});
    ASSERT_EQ(without.verdict, symbolic::Verdict::kUnknown);
    symbolic::NumericEvidence evidence = GatherVerifyEvidence(c.s, c.d, c.spec, without, 0);
    ASSERT_TRUE(evidence.counterexamples.empty());
    ASSERT_FALSE(evidence.proposals.empty()) << evidence.error;

    std::string text;
    for (const std::string& p : evidence.proposals) text += p;
    symbolic::LemmaCatalogue proposed = symbolic::LemmaCatalogue::Load({{"proposed.rules", text}});
    ASSERT_EQ(proposed.lemmas().size(), evidence.proposals.size());
    for (const symbolic::Lemma& lemma : proposed.lemmas()) {
      EXPECT_EQ(lemma.rule.id.rfind("proposed-", 0), 0u) << lemma.rule.id;
      ASSERT_FALSE(lemma.tests.empty());
      symbolic::LemmaSelfTestReport report = SelfTestLemma(lemma);
      EXPECT_TRUE(report.failures.empty()) << lemma.rule.id << ": " << report.failures.front();
      EXPECT_GT(report.compared, 0u);
    }
    symbolic::VerifyResult again =
        symbolic::Verify(c.s, c.d, c.spec, RulesWithout(sample.lemma, proposed.Rules()), {});
    EXPECT_EQ(again.verdict, symbolic::Verdict::kRefines) << text;
    EXPECT_TRUE(UsesLemma(again, "proposed-")) << text;
  }
}

// The row-parallel proposal is a list form: a rule over any world size (its self-test draws W
// from 1 to 8), not one of the run's arity. (Over S's t = transpose(w) inference relates t as
// transpose(concat(1, w@0, w@1)), so the rule reads through that transpose: equivalent to the
// deleted mm-concat-inner for the proof, not textually the same rule.)
TEST(LemmaProposal, RowParallelProposalIsAListForm) {
  Case c = Load("goals/matmul_rowpar", "spec.rel");
  symbolic::VerifyResult without =
      symbolic::Verify(c.s, c.d, c.spec, RulesWithout("mm-concat-inner"), {});
  symbolic::NumericEvidence evidence = GatherVerifyEvidence(c.s, c.d, c.spec, without, 0);
  ASSERT_EQ(evidence.proposals.size(), 1u);
  const std::string& p = evidence.proposals[0];
  EXPECT_NE(p.find("proposed-mm-y: (mm (concat 1 ?xs...) "), std::string::npos) << p;
  EXPECT_NE(p.find("=> (sumr (mm ?xs "), std::string::npos) << p;
  EXPECT_NE(p.find("#   test ?xs: [a, k*]; "), std::string::npos) << p;
}

// A D expression the numbers do not support gives no proposal: its candidate fails the
// self-test (here: the row-parallel product claimed equal to rank 0's partial product).
TEST(LemmaProposal, AFalseCandidateIsNeverProposed) {
  Case c = Load("goals/matmul_rowpar", "spec.rel");
  symbolic::VerifyResult without =
      symbolic::Verify(c.s, c.d, c.spec, RulesWithout("mm-concat-inner"), {});
  ASSERT_EQ(without.verdict, symbolic::Verdict::kUnknown);
  ASSERT_TRUE(without.first_failure);
  ir::NodeId stuck = without.nodes.at(*without.first_failure).s_node;
  ir::TensorRef y{stuck, 0};
  // y@0 on D is the partial product mm(x@0, t@0) before the all-reduce.
  const ir::Graph& r0 = c.d.rank(0);
  std::optional<ir::TensorRef> partial;
  for (size_t id = 0; id < r0.nodes.size(); ++id) {
    if (r0.nodes[id].kind == ir::NodeKind::kOperator && r0.nodes[id].name == "partial") {
      partial = ir::TensorRef{static_cast<ir::NodeId>(id), 0};
    }
  }
  ASSERT_TRUE(partial);
  symbolic::RelExpr wrong = symbolic::RelExpr::Tensor(0, *partial, r0.ValueName(*partial));
  EXPECT_TRUE(ProposeLemmas(c.s, c.d, c.spec, without, stuck, {{y, wrong}}).empty());
  // The right one is proposed from the same inputs.
  std::vector<symbolic::RelExpr> ranks;
  for (int32_t r = 0; r < c.d.world_size(); ++r) {
    ranks.push_back(symbolic::RelExpr::Tensor(r, *partial, c.d.rank(r).ValueName(*partial)));
  }
  EXPECT_FALSE(ProposeLemmas(c.s, c.d, c.spec, without, stuck, {{y, symbolic::RelExpr::Sum(ranks)}})
                   .empty());
}

}  // namespace
}  // namespace gg::runtime
