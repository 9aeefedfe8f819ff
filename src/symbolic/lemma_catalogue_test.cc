// Core tests of the lemma catalogue: every file loads, ids are unique kebab-case, every lemma has a
// math comment and a self-test signature whose draws instantiate, satisfy the condition, apply
// and stay well-typed; plus goal tests (after saturation two terms share a class).
#include "symbolic/lemma_catalogue.h"

#include <gtest/gtest.h>

#include <limits>
#include <regex>
#include <set>

#include "symbolic/lemma_conditions.h"
#include "symbolic/pattern.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

const LemmaCatalogue& Catalogue() { return LemmaCatalogue::Default(); }

TEST(LemmaCatalogueTest, EveryFileLoadsAndIsEmbedded) {
  std::set<std::string> families;
  for (const LemmaFile& f : EmbeddedLemmaFiles()) families.insert(f.name);
  for (const char* name : {"elementwise.rules", "linalg.rules", "shape.rules",
                           "slice_concat.rules", "reduction.rules", "indexing.rules",
                           "collectives.rules", "custom.rules"}) {
    EXPECT_TRUE(families.count(name)) << name;
  }
  EXPECT_GT(Catalogue().lemmas().size(), 100u);
}

TEST(LemmaCatalogueTest, IdsAreUniqueKebabCaseWithMathAndSignature) {
  const std::regex kebab("[a-z0-9]+(-[a-z0-9]+)*");
  std::set<std::string> ids;
  for (const Lemma& lemma : Catalogue().lemmas()) {
    const std::string& id = lemma.rule.id;
    EXPECT_TRUE(ids.insert(id).second) << "duplicate " << id;
    EXPECT_TRUE(std::regex_match(id, kebab)) << id;
    EXPECT_FALSE(lemma.math.empty()) << id << " has no math comment";
    EXPECT_FALSE(lemma.tests.empty()) << id << " has no self-test signature";
  }
}

TEST(LemmaCatalogueTest, IdsRepeatedAcrossFilesAreRejected) {
  std::vector<LemmaFile> files = {{"a.rules", "# x\nsame: (neg ?x) => ?x\n"},
                                  {"b.rules", "# x\nsame: (exp ?x) => ?x\n"}};
  EXPECT_THROW(LemmaCatalogue::Load(files), InputError);
}

// A `{f}` rule line is one rule per pointwise op of the language (traits::Pointwise entries of
// the registry and the language's own pointwise ops), each with the line's math, signatures and
// file line; a malformed family line is reported at its line of the file.
TEST(LemmaCatalogueTest, FamilyLinesExpandOverThePointwiseOps) {
  const char* text =
      "# f(cat(d, xs)) = cat(d, f(x)...)\n"
      "{f}-of-concat: ({f} (concat ?d ?xs...)) => (concat ?d ({f} ?xs)...)\n"
      "#   test ?d = 0; ?xs: [n*, m]\n";
  LemmaCatalogue c = LemmaCatalogue::Load({{"family.rules", text}});
  std::set<std::string> ids;
  for (const Lemma& l : c.lemmas()) {
    ids.insert(l.rule.id);
    EXPECT_EQ(l.rule.line, 2);
    EXPECT_EQ(l.math, "f(cat(d, xs)) = cat(d, f(x)...)");
    ASSERT_EQ(l.tests.size(), 1u);
  }
  for (const char* id : {"sin-of-concat", "exp-of-concat", "gelu-grad-of-concat"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  EXPECT_FALSE(ids.count("add-of-concat"));  // binary: not a member
  try {
    LemmaCatalogue::Load({{"bad.rules", "# ok\n\n{f}-bad: ({f} ?x => ?x\n"}});
    ADD_FAILURE() << "malformed family line accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.file(), "bad.rules");
  }
}

TEST(LemmaCatalogueTest, MathAndSignaturesAreAttachedToTheirRule) {
  auto c = LemmaCatalogue::Load({{"t.rules",
                                  "# header\n\n# a = b\n# second line\n"
                                  "r1: (neg (neg ?x)) => ?x\n#   test ?x: [a]\n#   test ?x: [b, c]\n"
                                  "r2: (exp ?x) <=> (exp ?x)\n"}});
  ASSERT_EQ(c.lemmas().size(), 3u);
  EXPECT_EQ(c.lemmas()[0].math, "a = b\nsecond line");
  EXPECT_EQ(c.lemmas()[0].tests.size(), 2u);
  EXPECT_EQ(c.lemmas()[0].tests[1], "?x: [b, c]");
  EXPECT_TRUE(c.lemmas()[1].math.empty());
  EXPECT_EQ(c.lemmas()[2].rule.id, "r2-rev");
}

TEST(LemmaCatalogueTest, BadSignatureNamesTheRule) {
  auto c = LemmaCatalogue::Load({{"t.rules", "# m\nr1: (neg ?x) => (neg ?x)\n#   test ?y: [a]\n"}});
  try {
    RunLemmaSelfTest(c.lemmas()[0], 0, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.problem().find("does not bind ?x"), std::string::npos) << e.problem();
  }
}

// `index(lo..hi)` draws ids from [lo, hi): an op defined past [0, n) is tested there too.
TEST(LemmaCatalogueTest, IndexSignaturesMayReachNegativeIds) {
  auto c = LemmaCatalogue::Load(
      {{"t.rules", "# m\nr1: (embedding_bwd ?g ?i ?n) => (embedding_bwd ?g ?i ?n)\n"
                   "#   test ?g: [a, m]; ?i: index(-v..v+2)[a]; ?n = v\n"}});
  SelfTestCase t = RunLemmaSelfTest(c.lemmas()[0], 0, 0);
  bool found = false;
  for (const SelfTestLeaf& leaf : t.leaf_specs) {
    if (leaf.kind != SelfTestLeaf::Kind::kIndex) continue;
    found = true;
    EXPECT_LT(leaf.index_low, 0) << leaf.name;
    EXPECT_EQ(leaf.index_bound, -leaf.index_low + 2) << leaf.name;
  }
  EXPECT_TRUE(found);
  auto empty = LemmaCatalogue::Load(
      {{"t.rules", "# m\nr1: (embedding_bwd ?g ?i ?n) => (embedding_bwd ?g ?i ?n)\n"
                   "#   test ?g: [a, m]; ?i: index(3..3)[a]; ?n = 3\n"}});
  EXPECT_THROW(RunLemmaSelfTest(empty.lemmas()[0], 0, 0), InputError);
}

// Shape-level self-test (no LibTorch needed): every signature, several draws.
TEST(LemmaCatalogueTest, EverySignatureInstantiatesAppliesAndStaysWellTyped) {
  for (const Lemma& lemma : Catalogue().lemmas()) {
    for (size_t t = 0; t < lemma.tests.size(); ++t) {
      for (uint64_t seed = 0; seed < 4; ++seed) {
        SCOPED_TRACE(lemma.rule.id + " test " + std::to_string(t) + " seed " +
                     std::to_string(seed));
        SelfTestCase c;
        try {
          c = RunLemmaSelfTest(lemma, t, seed);
        } catch (const InputError& e) {
          ADD_FAILURE() << e.what();
          continue;
        }
        EXPECT_TRUE(c.condition_held) << c.draw;
        EXPECT_TRUE(c.changed) << c.draw;
        for (const std::string& conflict : c.conflicts) ADD_FAILURE() << c.draw << ": " << conflict;
      }
    }
  }
}

// Goal tests: saturating with the whole catalogue puts S-side terms and D-side terms together.
class LemmaGoalTest : public ::testing::Test {
 protected:
  LemmaGoalTest() : graph_(lang_.ops()) {
    analysis_ = &graph_.AddAnalysis(std::make_unique<TensorAnalysis>(leaves_));
  }
  ClassId Leaf(const std::string& name, ir::Shape shape, ir::DType dtype = ir::DType::kFloat32) {
    int32_t id = static_cast<int32_t>(leaves_.size());
    TensorLeaf leaf{
        TensorLeaf::Side::kDist, 0, ir::TensorRef{id, 0}, {dtype, std::move(shape)}, name};
    ClassId c = graph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
    names_[name] = c;
    return c;
  }
  // Adds a term written with leaf names as bare symbols replaced by (tensor id) first.
  ClassId Term(const std::string& text) {
    std::string t = text;
    for (const auto& [name, cls] : names_) {
      const ENode& node = graph_.Nodes(cls)[0];
      std::string leaf = "(tensor " + std::to_string(node.payload) + ")";
      for (size_t at = t.find("$" + name); at != std::string::npos; at = t.find("$" + name)) {
        t.replace(at, name.size() + 1, leaf);
      }
    }
    return graph_.AddExpr(ParseTerm(t, lang_.ops()));
  }
  void Saturate() {
    rules_ = Catalogue().Rules();
    RunnerLimits limits;
    limits.iterations = 12;
    limits.nodes = 20000;
    Runner(graph_, rules_, limits).Run();
  }
  bool Same(ClassId a, ClassId b) { return graph_.Find(a) == graph_.Find(b); }

  const TensorLanguage& lang_ = TensorLanguage::Get();
  LeafTable leaves_;
  EGraph graph_;
  TensorAnalysis* analysis_ = nullptr;
  std::map<std::string, ClassId> names_;
  std::vector<Rewrite> rules_;
};

TEST_F(LemmaGoalTest, ColumnThenRowParallelMlpIsASumOverRanks) {
  // S: mm(gelu(mm(x, [w1a | w1b])), [w2a; w2b]) = sum_r mm(gelu(mm(x, w1_r)), w2_r)
  Leaf("x", {4, 6});
  Leaf("w1a", {6, 3});
  Leaf("w1b", {6, 5});
  Leaf("w2a", {3, 2});
  Leaf("w2b", {5, 2});
  ClassId s = Term("(mm (gelu (mm $x (concat 1 $w1a $w1b))) (concat 0 $w2a $w2b))");
  ClassId d = Term("(sumr (mm (gelu (mm $x $w1a)) $w2a) (mm (gelu (mm $x $w1b)) $w2b))");
  Saturate();
  EXPECT_TRUE(Same(s, d));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

TEST_F(LemmaGoalTest, ExpertIdsRecombineWhateverTheExpertsPerRank) {
  // An MoE router's slot key rank * local + slot, rank = e // local, slot = e % local: S with
  // local = 4 over all tokens' expert ids, each of two EP ranks with local = 2 over its own.
  // Both keys are the ids themselves, so S's is the concat of the ranks'.
  auto op = [&](const char* name, std::vector<ClassId> children) {
    return graph_.Add(ENode{*lang_.ops().Find(name), 0, std::move(children)});
  };
  auto key = [&](ClassId e, double local, bool interleaved = false) {
    ClassId n = graph_.Add(lang_.Flt(local));
    ClassId rank = op(interleaved ? "remainder" : "floor_div", {e, n});
    ClassId slot = op(interleaved ? "floor_div" : "remainder", {e, n});
    return op("add", {op("mul", {rank, n}), slot});
  };
  ClassId e0 = Leaf("e0", {16}, ir::DType::kInt64);
  ClassId e1 = Leaf("e1", {16}, ir::DType::kInt64);
  ClassId all = op("concat", {graph_.Add(lang_.Num(0)), e0, e1});
  ClassId s = key(all, 4);
  ClassId d = op("concat", {graph_.Add(lang_.Num(0)), key(e0, 2), key(e1, 2)});
  // round-robin placement (ep_moe.py's interleaved_placement bug): rank e % n, slot e // n
  ClassId round_robin = key(all, 2, /*interleaved=*/true);
  // floats: (x // n) * n + x % n rounds, the lemma is for integers only
  ClassId x = Leaf("x", {16});
  ClassId float_key = key(x, 4);
  Saturate();
  EXPECT_TRUE(Same(s, d));
  EXPECT_TRUE(Same(s, all));
  EXPECT_FALSE(Same(round_robin, all));
  EXPECT_FALSE(Same(float_key, x));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

TEST_F(LemmaGoalTest, SliceOfAGatheredTensorIsTheRankPiece) {
  Leaf("a", {3, 4});
  Leaf("b", {5, 4});
  ClassId s = Term("(slice (exp (concat 0 $a $b)) 0 3 8)");
  ClassId d = Term("(exp $b)");
  Saturate();
  EXPECT_TRUE(Same(s, d));
}

TEST_F(LemmaGoalTest, FalseEqualitiesAreNotDerived) {
  Leaf("a", {3, 4});
  Leaf("b", {5, 4});
  ClassId s = Term("(exp (concat 0 $a $b))");
  ClassId swapped = Term("(concat 0 (exp $b) (exp $a))");
  ClassId summed = Term("(sumr (exp (slice (concat 0 $a $b) 0 0 3)) (exp (slice (concat 0 $a $b) 0 2 5)))");
  Saturate();
  EXPECT_FALSE(Same(s, swapped));
  EXPECT_FALSE(Same(s, summed));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

TEST_F(LemmaGoalTest, SlicesThatTileATensorRebuildIt) {
  Leaf("x", {6, 2});
  ClassId x = names_["x"];
  ClassId cat = Term("(concat 0 (slice $x 0 0 2) (slice $x 0 2 6))");
  Saturate();
  EXPECT_TRUE(Same(x, cat));
}

TEST_F(LemmaGoalTest, HeadSplitSurvivesReshapeAndSoftmax) {
  // [s, (h0+h1)*e] -> [s, h0+h1, e], softmax over e: a concat of the ranks' results on dim 1.
  Leaf("q0", {4, 2 * 3});
  Leaf("q1", {4, 1 * 3});
  ClassId s = Term("(softmax (reshape (concat 1 $q0 $q1) 4 3 3) -1)");
  ClassId d = Term("(concat 1 (softmax (reshape $q0 4 2 3) -1) (softmax (reshape $q1 4 1 3) -1))");
  Saturate();
  EXPECT_TRUE(Same(s, d));
}

// Ring attention's merge of two key blocks (torch's _SDPAMerger) is attention over both blocks
// when the masks are finite additive masks (masked_fill of zeros by a bool mask); with a D tensor
// as a mask (it may hold -inf: a fully masked row's log-sum-exp is 0 and the merge would weigh
// its output in) or a fill that overflows its dtype (-1e9 in f16 is -inf) nothing is merged; a
// D tensor marked finite (TensorLeaf::finite: LocalGraph found it to be such a fill) is merged.
TEST_F(LemmaGoalTest, RingMergeOfTwoKeyBlocksNeedsFiniteMasks) {
  Leaf("q", {1, 2, 3, 4});
  Leaf("k1", {1, 2, 2, 4});
  Leaf("v1", {1, 2, 2, 4});
  Leaf("k2", {1, 2, 3, 4});
  Leaf("v2", {1, 2, 3, 4});
  for (const char* name : {"a1", "b1"}) Leaf(name, {3, 2});
  for (const char* name : {"a2", "b2", "m", "marked"}) Leaf(name, {3, 3});
  leaves_.MarkFinite(graph_.Nodes(names_["marked"])[0].payload);
  EXPECT_TRUE(FiniteValued(graph_, names_["marked"]));
  EXPECT_FALSE(FiniteValued(graph_, names_["m"]));
  EXPECT_TRUE(FitsFinite(-10000.0, ir::DType::kFloat16));
  EXPECT_FALSE(FitsFinite(-1e9, ir::DType::kFloat16));
  EXPECT_FALSE(FitsFinite(-std::numeric_limits<double>::infinity(), ir::DType::kFloat32));
  EXPECT_FALSE(FitsFinite(0.0, ir::DType::kInt64));
  auto op = [&](const char* name, std::vector<ClassId> children) {
    return graph_.Add(ENode{*lang_.ops().Find(name), 0, std::move(children)});
  };
  auto num = [&](int64_t v) { return graph_.Add(lang_.Num(v)); };
  auto flt = [&](double v) { return graph_.Add(lang_.Flt(v)); };
  auto fill = [&](const char* a, const char* b, int64_t cols, ir::DType dtype, double value) {
    ClassId zeros = op("full", {flt(0.0), num(static_cast<int64_t>(dtype)), num(3), num(cols)});
    return op("masked_fill", {zeros, op("lt", {names_[a], names_[b]}), flt(value)});
  };
  ClassId q = names_["q"], sc = flt(0.5);
  auto block = [&](const char* kind, const char* k, const char* v, ClassId m) {
    return op(kind, {q, names_[k], names_[v], m, sc});
  };
  // (D's merge, S's attention over the joined blocks)
  auto merge = [&](ClassId m1, ClassId m2) {
    ClassId o1 = block("sdpa_mask", "k1", "v1", m1), o2 = block("sdpa_mask", "k2", "v2", m2);
    auto lse = [&](const char* k, const char* v, ClassId m) {
      return op("reshape", {block("sdpa_lse_mask", k, v, m), num(1), num(2), num(3), num(1)});
    };
    ClassId weight = op("sigmoid", {op("sub", {lse("k2", "v2", m2), lse("k1", "v1", m1)})});
    ClassId d = op("sub", {o1, op("mul", {weight, op("sub", {o1, o2})})});
    ClassId s = op("sdpa_mask", {q, op("concat", {num(2), names_["k1"], names_["k2"]}),
                                 op("concat", {num(2), names_["v1"], names_["v2"]}),
                                 op("concat", {num(1), m1, m2}), sc});
    return std::make_pair(d, s);
  };
  const auto f32 = ir::DType::kFloat32, f16 = ir::DType::kFloat16;
  auto [d, s] = merge(fill("a1", "b1", 2, f32, -10000.0), fill("a2", "b2", 3, f32, -10000.0));
  auto [d_leaf, s_leaf] = merge(fill("a1", "b1", 2, f32, -10000.0), names_["m"]);
  auto [d_f16, s_f16] = merge(fill("a1", "b1", 2, f16, -1e9), fill("a2", "b2", 3, f16, -1e9));
  auto [d_marked, s_marked] = merge(fill("a1", "b1", 2, f32, -10000.0), names_["marked"]);
  Saturate();
  EXPECT_TRUE(Same(d, s));
  EXPECT_FALSE(Same(d_leaf, s_leaf));
  EXPECT_TRUE(Same(d_marked, s_marked));
  EXPECT_FALSE(Same(d_f16, s_f16));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

TEST_F(LemmaGoalTest, RotateHalfOfHeadShardsIsEachRanksRotateHalf) {
  // Llama's rotate_half on queries [b, heads, s, d] sharded by heads: S's
  // cat(-1, -x[..., 2:], x[..., :2]) of the concat of the ranks' heads is the concat of each
  // rank's own rotate_half (needs concat-of-concats once neg and slice went inside).
  Leaf("q0", {1, 2, 3, 4});
  Leaf("q1", {1, 1, 3, 4});
  ClassId s = Term(
      "(concat -1 (neg (slice (concat 1 $q0 $q1) -1 2 4)) (slice (concat 1 $q0 $q1) -1 0 2))");
  ClassId d = Term(
      "(concat 1 (concat -1 (neg (slice $q0 -1 2 4)) (slice $q0 -1 0 2))"
      " (concat -1 (neg (slice $q1 -1 2 4)) (slice $q1 -1 0 2)))");
  ClassId swapped = Term(
      "(concat 1 (concat -1 (slice $q0 -1 0 2) (neg (slice $q0 -1 2 4)))"
      " (concat -1 (slice $q1 -1 0 2) (neg (slice $q1 -1 2 4))))");
  Saturate();
  EXPECT_TRUE(Same(s, d));
  EXPECT_FALSE(Same(s, swapped));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

TEST_F(LemmaGoalTest, MoeGateUpInputGradientIsASumOverRanks) {
  // Mixtral's fused gate_up experts [E, 2n, k] sharded per rank as [gate_r | up_r]: S's per-token
  // gather e (the ranks' gathers e_r, sliced into gate and up halves and concatenated) feeds the
  // input gradient bmm(e^T, [g_gate | g_up]); each rank computes it with its own halves.
  Leaf("e0", {2, 4, 3});
  Leaf("e1", {2, 4, 3});
  for (const char* g : {"g0", "g1", "u0", "u1"}) Leaf(g, {2, 2});
  ClassId s = Term(
      "(bmm (transpose (concat 1 (slice $e0 1 0 2) (slice $e1 1 0 2) (slice $e0 1 2 4)"
      " (slice $e1 1 2 4)) 1 2) (reshape (concat 1 $g0 $g1 $u0 $u1) 2 8 1))");
  ClassId d = Term(
      "(sumr (bmm (transpose $e0 1 2) (reshape (concat 1 $g0 $u0) 2 4 1))"
      " (bmm (transpose $e1 1 2) (reshape (concat 1 $g1 $u1) 2 4 1)))");
  Saturate();
  EXPECT_TRUE(Same(s, d));
  EXPECT_FALSE((*analysis_)[s].conflict);
}

}  // namespace
}  // namespace gg::symbolic

#ifndef GG_NUMERIC_SELFTESTS
namespace gg::symbolic {
namespace {

// Laptop mode: every lemma's numeric self-test (both sides on random float64 tensors) lives in
// gg_runtime_tests, which needs LibTorch. Say so instead of passing silently.
TEST(LemmaSelfTestAvailability, NumericSelfTestsNeedLibTorch) {
  GTEST_SKIP() << "numeric lemma self-tests are not built: this build has no LibTorch "
                  "(run scripts/setup.sh without GG_SKIP_TORCH, or set GG_TORCH_DIR)";
}

}  // namespace
}  // namespace gg::symbolic
#endif
