// Tests of index_domain.h (the range analysis the index-like lowerings ask) and of issue 19's
// regression: aten::index wraps negative ids, so S's w[ids - 8] and x[arange, t - 6] are not the
// vocabulary-parallel masked lookups of D (which zero them), and verify must not say REFINES.
#include "symbolic/index_domain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "frontend/fx_reader.h"
#include "frontend/loader.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/lowering.h"
#include "symbolic/relation_spec.h"

namespace gg::symbolic {
namespace {

namespace fs = std::filesystem;

constexpr char kRanges[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, u: "i64[6]", r: "f32[6, 5]", x: "f32[6]"):
        a: "i64[4]" = torch.ops.aten.arange.start(2, 6)
        b: "i64[3]" = torch.ops.aten.arange.start_step(0, 7, 3)
        s: "i64[6]" = torch.ops.aten.sub.Tensor(u, 8)
        c: "i64[6]" = torch.ops.aten.clamp.default(s, 0, 3)
        lt: "b8[6]" = torch.ops.aten.lt.Scalar(u, 8)
        ge: "b8[6]" = torch.ops.aten.ge.Scalar(u, 12)
        m: "b8[6]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
        local: "i64[6]" = torch.ops.aten.masked_fill.Scalar(s, m, 0)
        shifted: "i64[6]" = torch.ops.aten.masked_fill.Scalar(s, m, -1)
        neg: "b8[6]" = torch.ops.aten.lt.Scalar(s, 0)
        up: "i64[6]" = torch.ops.aten.add.Tensor(s, 20)
        wrapped: "i64[6]" = torch.ops.aten.where.self(neg, up, s)
        max_1 = torch.ops.aten.max.dim(r, 1)
        getitem: "f32[6]" = max_1[0]
        getitem_1: "i64[6]" = max_1[1];  max_1 = None
        v: "i64[6, 1]" = torch.ops.aten.unsqueeze.default(getitem_1, 1)
        twice: "i64[6]" = torch.ops.aten.mul.Tensor(getitem_1, 2)
        f: "i64[6]" = torch.ops.aten._to_copy.default(x, dtype = torch.int64)
        return (a, b, c, local, shifted, wrapped, v, twice, f)
)";

TEST(IndexDomainTest, BoundsWhatTheGraphBounds) {
  ir::Graph g = frontend::ParseFx(kRanges, "ranges.py");
  IndexDomain d(g);
  auto range = [&](const char* name) { return d.Range(*g.Find(name)); };
  EXPECT_EQ(range("a"), (IntRange{2, 5}));
  EXPECT_EQ(range("b"), (IntRange{0, 6}));
  EXPECT_EQ(range("u"), (IntRange{0, std::nullopt}));  // an integer input: assumed >= 0
  EXPECT_EQ(range("s"), (IntRange{-8, std::nullopt}));
  EXPECT_EQ(range("c"), (IntRange{0, 3}));
  // kept where 8 <= u < 12, so s in [0, 3]; masked ones read 0 (or -1)
  EXPECT_EQ(range("local"), (IntRange{0, 3}));
  EXPECT_EQ(range("shifted"), (IntRange{-1, 3}));
  EXPECT_FALSE(d.IdsNonNegative(*g.Find("shifted")));
  // where(s < 0, s + 20, s): [12, 19] where s < 0, [0, ...) elsewhere
  EXPECT_EQ(range("wrapped"), (IntRange{0, std::nullopt}));
  EXPECT_EQ(range("v"), (IntRange{0, 4}));  // max.dim's indices along a dim of 5
  EXPECT_EQ(range("twice"), (IntRange{0, 8}));
  EXPECT_EQ(range("f"), IntRange::Any());   // a float cast to integers: no bound
  EXPECT_TRUE(d.IdsInRange(*g.Find("local"), 4));
  EXPECT_FALSE(d.IdsInRange(*g.Find("local"), 3));
  // without the inputs' premise the unguarded values are unbounded, the guarded ones not
  IndexDomain strict(g, nullptr, /*assume_inputs_nonneg=*/false);
  EXPECT_EQ(strict.Range(*g.Find("s")), IntRange::Any());
  EXPECT_EQ(strict.Range(*g.Find("local")), (IntRange{0, 3}));
  EXPECT_TRUE(strict.assumed_inputs().empty());
}

// A mask over a different tensor than the one masked bounds nothing.
TEST(IndexDomainTest, AGuardOnAnotherTensorBoundsNothing) {
  ir::Graph g = frontend::ParseFx(R"(class GraphModule(torch.nn.Module):
    def forward(self, u: "i64[4]", k: "i64[4]"):
        lt: "b8[4]" = torch.ops.aten.lt.Scalar(k, 3)
        ge: "b8[4]" = torch.ops.aten.ge.Scalar(k, 9)
        m: "b8[4]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
        s: "i64[4]" = torch.ops.aten.sub.Tensor(u, 3)
        ids: "i64[4]" = torch.ops.aten.masked_fill.Scalar(s, m, 0)
        return (ids,)
)", "other_guard.py");
  IndexDomain d(g);
  EXPECT_EQ(d.Range(*g.Find("ids")), (IntRange{-3, std::nullopt}));
}

struct Goal {
  ir::Graph s;
  ir::Program d;
  SpecResult spec;
};

Goal Load(const std::string& name) {
  fs::path dir = fs::path(GG_TEST_DATA_DIR) / "goals" / name;
  Goal g{frontend::LoadGraph((dir / "seq.py").string()),
         frontend::LoadProgram({(dir / "dist").string()}),
         {}};
  g.spec = EvaluateSpec(RelationSpec::Load((dir / "spec.rel").string()), g.s, g.d);
  return g;
}

VerifyResult VerifyGoal(const Goal& g) {
  return Verify(g.s, g.d, g.spec, LemmaCatalogue::Default().Rules(), InferenceOptions{});
}

bool HasDomainPremise(const VerifyResult& r) {
  for (const Premise& p : r.premises) {
    if (p.kind == "domain") return true;
  }
  return false;
}

// Issue 19: the shifted ids reach aten::index possibly negative, so S's lookup wraps them and the
// vocabulary-parallel lemmas (stated for ids in [0, V)) see the wrap, which D's masks do not
// match: no relation, never REFINES. Without the shift the ids are the input's, non-negative by
// the listed premise, and the same D refines.
TEST(IndexDomainRegressionTest, ShiftedIdsThroughIndexAreNotTheMaskedLookup) {
  for (const char* name : {"embedding_index_shifted_ids_vocab_parallel",
                           "pick_index_shifted_target_class_parallel"}) {
    SCOPED_TRACE(name);
    VerifyResult r = VerifyGoal(Load(name));
    EXPECT_NE(r.verdict, Verdict::kRefines) << r.summary;
    EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.summary;
    EXPECT_EQ(r.unknown_cause, UnknownCause::kNoRelation) << r.summary;
  }
  for (const char* name : {"embedding_index_vocab_parallel", "pick_index_class_parallel"}) {
    SCOPED_TRACE(name);
    VerifyResult r = VerifyGoal(Load(name));
    EXPECT_EQ(r.verdict, Verdict::kRefines) << r.summary;
    EXPECT_TRUE(HasDomainPremise(r)) << "the ids' non-negativity is a premise of the verdict";
  }
  // A D that wraps the shifted ids as S's index does refines, with no premise on the ids: S's
  // lowering writes the wrap, D's where(s < 0, s + 16, s) is the same term.
  VerifyResult wrapped = VerifyGoal(Load("embedding_index_shifted_ids_wrapped_vocab_parallel"));
  EXPECT_EQ(wrapped.verdict, Verdict::kRefines) << wrapped.summary;
  EXPECT_FALSE(HasDomainPremise(wrapped)) << wrapped.summary;
}

// The premise is listed only where a lowering relies on it: D's masked local ids are bounded by
// their guard, not by the inputs' premise.
TEST(IndexDomainRegressionTest, PremisesNameOnlyWhatALoweringAssumed) {
  Goal g = Load("pick_index_class_parallel");
  std::vector<Premise> s = IndexDomainPremises(g.s, "S", &g.spec.constants);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, "domain");
  EXPECT_NE(s[0].text.find("t"), std::string::npos) << s[0].text;
  for (int32_t r = 0; r < g.d.world_size(); ++r) {
    EXPECT_TRUE(IndexDomainPremises(g.d.rank(r), "D", &g.spec.constants).empty());
  }
}

}  // namespace
}  // namespace gg::symbolic
