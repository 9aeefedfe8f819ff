// Seeded bugs: the real corpus programs with one bug planted in D's IR in memory. Each must be a
// VIOLATION localized to the S operator that first depends on the change, never REFINES; the
// unmutated pairs show the same machinery relates those operators when nothing is wrong.
//
// How "first depends" is worked out: a relation is an expression over D tensors in the relation
// vocabulary (concat, slice, sum/max over ranks, scale, reshape, transpose, permute), so an S
// operator that is itself a view or layout change can still be related through D tensors upstream
// of the bug. The first S operator that fails is the first *computing* S operator whose only
// possible equal in D is a computing D operator downstream of the planted change.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "symbolic/hints.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"
#include "symbolic/seeded_bugs_testutil.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

using namespace seeded;  // NOLINT: the shared fixtures of this test

VerifyResult VerifyPair(const Pair& p) {
  SpecResult relations = EvaluateSpec(p.spec, p.s, p.d);
  InferenceOptions options;  // defaults, as the CLI uses them
  return Verify(p.s, p.d, relations, LemmaCatalogue::Default().Rules(), options);
}

// The verdict line and the first failing S operator, for failure messages.
std::string Describe(const VerifyResult& result, const ir::Graph& s_graph) {
  std::string out = std::string(VerdictName(result.verdict)) + ": " + result.summary;
  if (result.first_failure) {
    const NodeOutcome& n = result.nodes[*result.first_failure];
    out += "\n  first failure " + s_graph.node(n.s_node).name + " [" +
           std::string(NodeStatusName(n.status)) + "]: " + n.detail;
  }
  return out;
}

std::string FirstFailure(const VerifyResult& result, const ir::Graph& s_graph) {
  if (!result.first_failure) return "(none)";
  return s_graph.node(result.nodes[*result.first_failure].s_node).name;
}

// The outcome of S operator `name`, or nullptr when inference never reached it.
const NodeOutcome* OutcomeOf(const VerifyResult& result, const ir::Graph& s_graph,
                             const std::string& name) {
  for (const NodeOutcome& n : result.nodes) {
    if (s_graph.node(n.s_node).name == name) return &n;
  }
  return nullptr;
}

// The symbolic engine alone: never REFINES, UNKNOWN because a search ended without a relation
// (never VIOLATION: that takes numeric evidence, runtime/check_test.cc), stopping at `s_operator`.
void ExpectViolationAt(const VerifyResult& result, const ir::Graph& s,
                       const std::string& s_operator) {
  EXPECT_NE(result.verdict, Verdict::kRefines) << Describe(result, s);
  EXPECT_EQ(result.verdict, Verdict::kUnknown) << Describe(result, s);
  EXPECT_EQ(result.unknown_cause, UnknownCause::kNoRelation) << Describe(result, s);
  ASSERT_TRUE(result.first_failure.has_value()) << Describe(result, s);
  EXPECT_EQ(FirstFailure(result, s), s_operator) << Describe(result, s);
  // Every S operator before the localized one was related: the bug is not blamed too early.
  for (size_t i = 0; i < *result.first_failure; ++i) {
    const NodeOutcome& n = result.nodes[i];
    EXPECT_TRUE(n.status == NodeStatus::kInferred || n.status == NodeStatus::kBlocked)
        << s.node(n.s_node).name << ": " << n.detail;
  }
}

// ---- The controls: without a planted bug ---------------------------------------------------------

TEST(SeededBugsTest, UnmutatedQwen2Tp2Refines) {
  Pair p = LoadQwen2Tp2();
  ExpectWellTyped(p.d);
  VerifyResult result = VerifyPair(p);
  EXPECT_EQ(result.verdict, Verdict::kRefines) << Describe(result, p.s);
  EXPECT_FALSE(result.first_failure.has_value()) << Describe(result, p.s);
}

// GPT does not verify end to end yet (the attention is still being related), so its control is
// that the S operators the GPT bugs below are localized to *are* related when D is unmutated.
TEST(SeededBugsTest, UnmutatedGptTp2RelatesTheOperatorsTheBugsBlame) {
  Pair p = LoadGptTp2();
  VerifyResult result = VerifyPair(p);
  for (const char* name : {"add", "mm"}) {
    const NodeOutcome* n = OutcomeOf(result, p.s, name);
    ASSERT_NE(n, nullptr) << name << " was never reached: " << Describe(result, p.s);
    EXPECT_EQ(n->status, NodeStatus::kInferred) << name << ": " << n->detail;
  }
}

// ---- (a) a deleted all_reduce -----------------------------------------------------------------

// vLLM's o_proj is row-parallel: each rank's `mm` is a partial sum and `all_reduce_1` adds them.
// Deleted on every rank, the fused_add_rms_norm reads the partial sum. S's `mm` still has a
// relation (sum of the ranks' mm, which needs no all_reduce); the first S operator reading it
// through a computing operator is the fused_add_rms_norm `auto_functionalized_3`, whose D
// counterparts now read mm@r instead of sum(mm@0, mm@1).
TEST(SeededBugsTest, Qwen2DeletedOprojAllReduceIsLocalizedToTheResidualNorm) {
  Pair p = LoadQwen2Tp2();
  DeleteAllReduce(&p, "all_reduce_1");
  ExpectWellTyped(p.d);
  ExpectViolationAt(VerifyPair(p), p.s, "auto_functionalized_3");
}

// The same for down_proj's `all_reduce_2`: the final fused_add_rms_norm `auto_functionalized_5`
// is the first S operator that reads S's `mm_2` (= sum of the ranks' mm_2).
TEST(SeededBugsTest, Qwen2DeletedDownProjAllReduceIsLocalizedToTheFinalNorm) {
  Pair p = LoadQwen2Tp2();
  DeleteAllReduce(&p, "all_reduce_2");
  ExpectWellTyped(p.d);
  ExpectViolationAt(VerifyPair(p), p.s, "auto_functionalized_5");
}

// ---- (b) a shifted slice offset -------------------------------------------------------------------

// After the rotary embedding, each rank writes the rotated key back into its QKV row block with
// `slice_scatter_1(slice_scatter, getitem_7, 1, 768, 896)`. Shifted by one column (769..897, same
// shape), key column 0 stays unrotated and value column 0 is overwritten. Every S operator up to
// the attention is a view or layout change of S's QKV that is related through D's addmm and rotary
// outputs (upstream of the shift), so the first S operator that needs D's scattered tensor is the
// attention `auto_functionalized_2` (its key and value come from the split of slice_scatter_1).
TEST(SeededBugsTest, Qwen2ShiftedRotaryScatterIsLocalizedToTheAttention) {
  Pair p = LoadQwen2Tp2();
  ShiftRotaryScatter(&p);
  ExpectWellTyped(p.d);
  VerifyResult result = VerifyPair(p);
  ExpectViolationAt(result, p.s, "auto_functionalized_2");
}

// ---- (c) a reduction changed from sum to max --------------------------------------------------------

// vLLM's all_reduce takes no reduce op, so this is GPT's `_c10d_functional.all_reduce(x, 'sum',
// group)` of the vocabulary-parallel embedding, made 'max' on every rank. S's `index` is related
// to sum(index_put_1@r) without the all_reduce, and S's `view` of it is a reshape of that; the
// first computing S operator reading it is the position-embedding `add`, whose D counterparts read
// max(...) instead of sum(...).
TEST(SeededBugsTest, GptEmbeddingAllReduceWithMaxIsLocalizedToThePositionAdd) {
  Pair p = LoadGptTp2();
  EmbeddingAllReduceWithMax(&p);
  ExpectWellTyped(p.d);
  ExpectViolationAt(VerifyPair(p), p.s, "add");
}

// ---- (d) a dropped scale factor -----------------------------------------------------------------

// vLLM's vocabulary-parallel embedding shifts token ids into the rank's shard by
// `valid_offset = org_vocab_start_index * org_vocab_mask + ...`: in the capture
// `mul = mul(bitwise_and, start)` with start 0 on rank 0 and 75968 on rank 1. Dropping the scale
// (the factor becomes 1, so the offset is the mask itself) makes every rank look up the wrong rows.
// The explicit scales of Qwen2's graph are these mask multipliers (the added-vocabulary one,
// `mul_1`, multiplies an always-false mask, so dropping it is no bug); the attention scale is
// inside vLLM's attention op, and GPT's explicit baddbmm alpha lies in the attention, which is
// not related yet. The first S operator is S's `embedding` itself: it is related to the sum over
// ranks of the masked local lookups, which now read wrong ids.
TEST(SeededBugsTest, Qwen2DroppedVocabOffsetScaleIsLocalizedToTheEmbedding) {
  Pair p = LoadQwen2Tp2();
  DropVocabOffsetScale(&p);
  ExpectWellTyped(p.d);
  ExpectViolationAt(VerifyPair(p), p.s, "embedding");
}

// ---- (e) an all_gather along the wrong dimension ------------------------------------------------

// Megatron's sequence parallelism gathers the LayerNorm output (`getitem_2`, [s/tp, b, h]) along
// dim 0, the sequence. The bug gathers along dim 1, the batch, instead:
//   bug_t0 = transpose(getitem_2, 0, 1)              [b, s/tp, h]
//   all_gather_into_tensor(bug_t0, tp, group)        [tp*b, s/tp, h]   (concat of ranks on dim 0)
//   bug_t1 = transpose(wait_tensor_1, 0, 1)          [s/tp, tp*b, h]   (ranks side by side, dim 1)
//   bug_c = clone(bug_t1), bug_v = view(bug_c, [s, b, h])
// and every reader of wait_tensor_1 reads bug_v (shape [s, b, h] as before): row 2i+r of the
// result is row i of rank r instead of row i + r*s/tp. S's LayerNorm output and its views are
// related through D's LayerNorm outputs (upstream of the gather); the first computing S operator
// reading them is the QKV matmul `mm`, whose D counterparts read the interleaved rows.
TEST(SeededBugsTest, GptAllGatherAlongTheBatchIsLocalizedToTheQkvMatmul) {
  Pair p = LoadGptTp2();
  GatherAlongBatch(&p);
  ExpectWellTyped(p.d);
  ExpectViolationAt(VerifyPair(p), p.s, "mm");
}

// ---- Hints from the correct program do not hide a bug -------------------------------------------

// Hints (hints.h) as the fingerprints of a correct program would give them: every relation the
// unmutated pair infers, re-read against the mutated program (lines naming a deleted tensor are
// left out). They are right for the unmutated D and wrong where the bug changed it; inference
// proves before it keeps, so each bug is still the same VIOLATION at the same operator.
Hints HintsOfUnmutated(const Pair& unmutated, const Pair& mutated) {
  VerifyResult result = VerifyPair(unmutated);
  Hints hints;
  for (const auto& [name, rels] : result.relations) {
    std::optional<ir::TensorRef> ref = unmutated.s.Find(name);
    if (!ref || unmutated.s.node(ref->node).kind != ir::NodeKind::kOperator) continue;
    for (const InferredRelation& r : rels) {
      try {
        Hints one = ParseHints(name + " == " + r.relation.expr.ToString(), "unmutated.hints",
                               mutated.s, mutated.d);
        for (const auto& [s_ref, exprs] : one.by_tensor) hints.Add(s_ref, exprs.front());
      } catch (const InputError&) {
        // names a tensor the bug removed
      }
    }
  }
  return hints;
}

TEST(SeededBugsTest, HintsFromTheCorrectProgramKeepEveryViolation) {
  struct Bug {
    const char* name;
    bool gpt;
    void (*plant)(Pair*);
    const char* s_operator;
  };
  const Bug bugs[] = {
      {"deleted o_proj all_reduce", false, [](Pair* p) { DeleteAllReduce(p, "all_reduce_1"); },
       "auto_functionalized_3"},
      {"shifted rotary scatter", false, ShiftRotaryScatter, "auto_functionalized_2"},
      {"embedding all_reduce max", true, EmbeddingAllReduceWithMax, "add"},
      {"dropped vocab offset scale", false, DropVocabOffsetScale, "embedding"},
      {"all_gather along the batch", true, GatherAlongBatch, "mm"},
  };
  for (const Bug& bug : bugs) {
    SCOPED_TRACE(bug.name);
    Pair unmutated = bug.gpt ? LoadGptTp2() : LoadQwen2Tp2();
    Pair mutated = bug.gpt ? LoadGptTp2() : LoadQwen2Tp2();
    bug.plant(&mutated);
    Hints hints = HintsOfUnmutated(unmutated, mutated);
    ASSERT_GT(hints.count(), 0u);
    SpecResult relations = EvaluateSpec(mutated.spec, mutated.s, mutated.d);
    InferenceOptions options;
    options.hints = &hints;
    VerifyResult result =
        Verify(mutated.s, mutated.d, relations, LemmaCatalogue::Default().Rules(), options);
    EXPECT_GT(result.hints_related, 0u);  // hints upstream of the bug are right, and used
    ExpectViolationAt(result, mutated.s, bug.s_operator);
  }
}

}  // namespace
}  // namespace gg::symbolic
