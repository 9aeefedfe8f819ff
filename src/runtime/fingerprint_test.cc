#include "runtime/fingerprint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/kernel_defs.h"
#include "runtime/fingerprint_match.h"

namespace gg::runtime {
namespace {

using symbolic::RelExpr;

// Projection k of slice j along `dim`, straight from the definition in kernel_defs.h.
double DirectProjection(const at::Tensor& x, int64_t dim, int64_t j, int k, uint64_t seed) {
  at::Tensor slice = x.to(at::kDouble).select(dim, j).contiguous().reshape({-1});
  auto values = slice.accessor<double, 1>();
  // The slice's positions p = o * inner + i are its flat positions once `dim` is removed.
  double total = 0.0;
  for (int64_t p = 0; p < slice.numel(); ++p) {
    total += values[p] *
             kernels::ProjectionSign(seed, static_cast<uint64_t>(p), k);
  }
  return total;
}

TEST(Fingerprint, FollowsTheKernelDefinition) {
  at::manual_seed(1);
  at::Tensor x = at::randn({3, 5, 7});
  FingerprintOptions options;
  TensorFingerprint fp = Fingerprint(x, options, "x");
  EXPECT_EQ(fp.name, "x");
  ASSERT_EQ(fp.dims.size(), 3u);
  for (int64_t dim = 0; dim < 3; ++dim) {
    ASSERT_EQ(fp.dims[static_cast<size_t>(dim)].count, x.size(dim));
    for (int64_t j = 0; j < x.size(dim); ++j) {
      for (int k = 0; k < options.projections; ++k) {
        EXPECT_NEAR(fp.dims[static_cast<size_t>(dim)].projection(j, k, options.projections),
                    DirectProjection(x, dim, j, k, options.seed), 1e-9);
      }
    }
  }
  // The whole tensor is the layout [1, 1, numel]: a reshape keeps it.
  TensorFingerprint flat = Fingerprint(x.reshape({105}), options);
  for (int k = 0; k < options.projections; ++k) {
    EXPECT_NEAR(fp.whole.values[static_cast<size_t>(k)], flat.whole.values[static_cast<size_t>(k)],
                1e-9);
  }
  EXPECT_NEAR(fp.sum_squares(), x.to(at::kDouble).square().sum().item<double>(), 1e-9);
}

// Large tensors are projected by tensor operations, small ones by a loop: both follow the
// definition (a tensor just above the loop's size, checked on a few slices of each dimension).
TEST(Fingerprint, LargeTensorsFollowTheKernelDefinitionToo) {
  at::manual_seed(3);
  at::Tensor x = at::randn({16, 65, 64}, at::kDouble);  // 66,560 elements
  FingerprintOptions options;
  TensorFingerprint fp = Fingerprint(x, options);
  for (int64_t dim = 0; dim < 3; ++dim) {
    for (int64_t j : {int64_t{0}, x.size(dim) - 1}) {
      for (int k = 0; k < options.projections; ++k) {
        EXPECT_NEAR(fp.dims[static_cast<size_t>(dim)].projection(j, k, options.projections),
                    DirectProjection(x, dim, j, k, options.seed), 1e-9);
      }
    }
  }
  EXPECT_NEAR(fp.sum_squares(), x.square().sum().item<double>(), 1e-6);
}

TEST(Fingerprint, SlicesOfAConcatAreThePiecesSlices) {
  at::manual_seed(2);
  at::Tensor a = at::randn({4, 3, 6}), b = at::randn({4, 5, 6});
  TensorFingerprint full = Fingerprint(at::cat({a, b}, 1));
  TensorFingerprint fa = Fingerprint(a), fb = Fingerprint(b);
  int k_count = full.projections;
  for (int k = 0; k < k_count; ++k) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(full.dims[1].projection(j, k, k_count), fa.dims[1].projection(j, k, k_count),
                  1e-9);
    }
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_NEAR(full.dims[1].projection(3 + j, k, k_count), fb.dims[1].projection(j, k, k_count),
                  1e-9);
    }
  }
  // An extent-1 dimension's slice is the whole tensor.
  TensorFingerprint one = Fingerprint(at::randn({1, 9}));
  EXPECT_EQ(&one.along(0), &one.whole);
}

TEST(Fingerprint, RejectsBadProjectionCounts) {
  FingerprintOptions options;
  options.projections = 9;
  EXPECT_THROW(Fingerprint(at::ones({2}), options), std::invalid_argument) << "9 is not allowed";
  options.projections = 0;
  EXPECT_THROW(Fingerprint(at::ones({2}), options), std::invalid_argument);
}

// A table of named tensors per rank (refs numbered in order).
struct Tables {
  FingerprintTable s, d;
  explicit Tables(int world) {
    s.ranks.resize(1);
    d.ranks.resize(static_cast<size_t>(world));
    s.projections = d.projections = FingerprintOptions{}.projections;
  }
  ir::TensorRef S(const std::string& name, const at::Tensor& value) {
    ir::TensorRef ref{static_cast<ir::NodeId>(s.ranks[0].size()), 0};
    s.ranks[0][ref] = Fingerprint(value, {}, name);
    return ref;
  }
  void D(int32_t rank, const std::string& name, const at::Tensor& value) {
    auto& m = d.ranks[static_cast<size_t>(rank)];
    ir::TensorRef ref{static_cast<ir::NodeId>(m.size()), 0};
    m[ref] = Fingerprint(value, {}, name);
  }
};

// "kind: expr, expr" of the best candidate when it holds, else "none".
std::string Best(const std::vector<Candidate>& c) {
  if (c.empty() || !c.front().holds()) return "none";
  std::string out = std::string(KindName(c.front().kind)) + ": ";
  for (size_t i = 0; i < c.front().exprs.size(); ++i) {
    out += (i ? ", " : "") + c.front().exprs[i].ToString();
  }
  return out;
}

TEST(FingerprintMatch, FindsReplicatedConcatSumAndSlices) {
  at::manual_seed(3);
  Tables t(2);
  at::Tensor w = at::randn({8, 6});
  ir::TensorRef rep = t.S("rep", w);
  t.D(0, "w", w);
  t.D(1, "w", w);
  at::Tensor x = at::randn({10, 6});
  ir::TensorRef cat = t.S("cat", x);
  t.D(0, "x", x.narrow(0, 0, 4));
  t.D(1, "x", x.narrow(0, 4, 6));  // uneven shards
  at::Tensor p0 = at::randn({3, 5}), p1 = at::randn({3, 5});
  ir::TensorRef sum = t.S("sum", p0 + p1);
  t.D(0, "p", p0);
  t.D(1, "p", p1);
  // vLLM's fused QKV: rank r holds [q_r; k_r; v_r], S holds [q_0; q_1; k_0; k_1; v_0; v_1].
  std::vector<at::Tensor> q, k, v;
  for (int r = 0; r < 2; ++r) {
    q.push_back(at::randn({4, 3}));
    k.push_back(at::randn({2, 3}));
    v.push_back(at::randn({2, 3}));
    t.D(r, "qkv", at::cat({q[r], k[r], v[r]}, 0));
  }
  ir::TensorRef qkv = t.S("qkv", at::cat({q[0], q[1], k[0], k[1], v[0], v[1]}, 0));
  ir::TensorRef rows = t.S("rows", x.narrow(0, 5, 3));  // a row range of rank 1's shard
  ir::TensorRef flat = t.S("flat", w.reshape({48}));
  ir::TensorRef other = t.S("other", at::randn({10, 6}));

  auto best = [&](ir::TensorRef ref) { return Best(CandidatesFor(t.s, t.d, ref)); };
  EXPECT_EQ(best(rep), "replicated: w@0, w@1");
  EXPECT_EQ(best(cat), "concat: concat(0, x@0, x@1)");
  EXPECT_EQ(best(sum), "sum: sum(p@0, p@1)");
  EXPECT_EQ(best(qkv),
            "slices: concat(0, slice(qkv@0, 0, 0, 4), slice(qkv@1, 0, 0, 4), slice(qkv@0, 0, 4, 6), "
            "slice(qkv@1, 0, 4, 6), slice(qkv@0, 0, 6, 8), slice(qkv@1, 0, 6, 8))");
  EXPECT_EQ(best(rows), "slices: slice(x@1, 0, 1, 4)");
  EXPECT_EQ(best(flat), "replicated: reshape(w@0, [48]), reshape(w@1, [48])");
  EXPECT_EQ(best(other), "none");
  // The failing candidates of `other` still say how far off the closest one is.
  std::vector<Candidate> c = CandidatesFor(t.s, t.d, other);
  ASSERT_FALSE(c.empty());
  EXPECT_GT(c.front().error, 0.1);
}

TEST(FingerprintMatch, ToleranceFollowsTheDType) {
  at::manual_seed(4);
  Tables t(2);
  at::Tensor a = at::randn({64, 32});
  // S in float32, D's shards rounded to bfloat16: within bf16's tolerance, not within fp32's.
  ir::TensorRef s32 = t.S("s", a);
  t.D(0, "b", a.narrow(1, 0, 16).to(at::kBFloat16));
  t.D(1, "b", a.narrow(1, 16, 16).to(at::kBFloat16));
  t.D(0, "f", a.narrow(1, 0, 16) + 1e-3 * at::randn({64, 16}));
  t.D(1, "f", a.narrow(1, 16, 16));
  std::vector<Candidate> c = CandidatesFor(t.s, t.d, s32);
  ASSERT_FALSE(c.empty());
  EXPECT_TRUE(c.front().holds());
  EXPECT_EQ(c.front().exprs[0].ToString(), "concat(1, b@0, b@1)");
  bool f_fails = false;
  for (const Candidate& x : c) {
    if (x.exprs[0].ToString() == "concat(1, f@0, f@1)") f_fails = !x.holds() && x.error > 1e-4;
  }
  EXPECT_TRUE(f_fails) << "a 1e-3 perturbation is far outside fp32's tolerance";
}

TEST(FingerprintMatch, IntegersMatchExactly) {
  Tables t(2);
  at::Tensor ids = at::arange(0, 12, at::kLong).reshape({3, 4});
  ir::TensorRef s = t.S("ids", ids);
  t.D(0, "ids", ids);
  t.D(1, "ids", ids + (at::arange(0, 12, at::kLong).reshape({3, 4}) == 7).to(at::kLong));
  std::vector<Candidate> c = CandidatesFor(t.s, t.d, s);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(Best(c), "identical: ids@0") << "one element differs on rank 1";
}

TEST(NumericClassification, MissingLemmaOrDifferent) {
  at::manual_seed(5);
  Tables t(2);
  at::Tensor a = at::randn({6, 4});
  ir::TensorRef equal = t.S("equal", a);
  ir::TensorRef different = t.S("different", a * 1.5);
  ir::TensorRef complex_only = ir::TensorRef{99, 0};
  t.D(0, "a", a.narrow(0, 0, 3));
  t.D(1, "a", a.narrow(0, 3, 3));
  NumericClassification eq = ClassifyNumerically(t.s, t.d, equal);
  EXPECT_EQ(eq.kind, NumericClassification::Kind::kMissingLemma);
  EXPECT_NE(eq.ToString().find("concat(0, a@0, a@1)"), std::string::npos) << eq.ToString();
  NumericClassification diff = ClassifyNumerically(t.s, t.d, different);
  EXPECT_EQ(diff.kind, NumericClassification::Kind::kNumericallyDifferent);
  ASSERT_TRUE(diff.closest.has_value());
  EXPECT_GT(diff.closest->error, 0.1);
  EXPECT_EQ(ClassifyNumerically(t.s, t.d, complex_only).kind,
            NumericClassification::Kind::kNotObserved);
}

// A 2-D layout over 4 ranks: sharded along rows over one mesh axis, partial over the other
// (contiguous groups {0, 1}, {2, 3} or strided {0, 2}, {1, 3}); found by the full comparison and
// by the index alike.
TEST(FingerprintMatch, FindsConcatsOfSumsOverRankGroups) {
  at::manual_seed(12);
  Tables t(4);
  at::Tensor a = at::randn({6, 5}, at::kDouble), b = at::randn({6, 5}, at::kDouble);
  std::vector<at::Tensor> p(4);
  for (int r = 0; r < 4; ++r) p[r] = at::randn({3, 5}, at::kDouble);
  // contiguous: rows 0-2 are p0 + p1, rows 3-5 p2 + p3
  ir::TensorRef contiguous = t.S("c", at::cat({p[0] + p[1], p[2] + p[3]}, 0));
  ir::TensorRef strided = t.S("s", at::cat({p[0] + p[2], p[1] + p[3]}, 0));
  ir::TensorRef unrelated = t.S("u", a + b);
  for (int r = 0; r < 4; ++r) t.D(r, "part", p[r]);
  MatchOptions options;
  options.max_candidates = 64;
  FingerprintMatcher matcher(t.d, options);
  auto best = [&](ir::TensorRef ref) {
    std::vector<Candidate> full = matcher.CandidatesFor(*t.s.Find(0, ref));
    std::vector<std::string> holding, indexed;
    for (const Candidate& c : full) {
      if (c.holds()) holding.push_back(c.ToString());
    }
    for (const Candidate& c : matcher.HoldingCandidatesFor(*t.s.Find(0, ref))) {
      indexed.push_back(c.ToString());
    }
    EXPECT_EQ(holding, indexed);
    return Best(full);
  };
  EXPECT_EQ(best(contiguous),
            "concat-of-sums: concat(0, sum(part@0, part@1), sum(part@2, part@3))");
  EXPECT_EQ(best(strided), "concat-of-sums: concat(0, sum(part@0, part@2), sum(part@1, part@3))");
  EXPECT_EQ(best(unrelated), "none");
}

// Runs of slices on a 2-D mesh (TP 2 x CP 2, zig-zag): S's rows are the CP ranks' chunks in
// zig-zag order, and each TP rank holds the same chunks, so one cover per TP rank's CP ranks is a
// candidate (a guided search then draws every group's paths), in both matching paths.
TEST(FingerprintMatch, FindsSliceRunsOnEveryReplicaGroup) {
  at::manual_seed(13);
  Tables t(4);
  at::Tensor x = at::randn({8, 5}, at::kDouble);
  // ranks 0, 1: CP rank 0 (rows 0-1 and 6-7); ranks 2, 3: CP rank 1 (rows 2-5)
  at::Tensor cp0 = at::cat({x.slice(0, 0, 2), x.slice(0, 6, 8)}, 0);
  at::Tensor cp1 = x.slice(0, 2, 6);
  ir::TensorRef s = t.S("x", x);
  t.D(0, "h", cp0);
  t.D(1, "h", cp0.clone());
  t.D(2, "h", cp1);
  t.D(3, "h", cp1.clone());
  MatchOptions options;
  options.max_candidates = 64;
  FingerprintMatcher matcher(t.d, options);
  std::vector<std::string> holding, indexed;
  for (const Candidate& c : matcher.CandidatesFor(*t.s.Find(0, s))) {
    if (c.holds()) holding.push_back(c.ToString());
  }
  for (const Candidate& c : matcher.HoldingCandidatesFor(*t.s.Find(0, s))) {
    indexed.push_back(c.ToString());
  }
  EXPECT_EQ(holding, indexed);
  auto has = [&](const std::string& expr) {
    return std::any_of(holding.begin(), holding.end(),
                       [&](const std::string& c) { return c.rfind(expr + " (error", 0) == 0; });
  };
  EXPECT_TRUE(has("slices: concat(0, slice(h@0, 0, 0, 2), h@2, slice(h@0, 0, 2, 4))"))
      << ::testing::PrintToString(holding);
  EXPECT_TRUE(has("slices: concat(0, slice(h@1, 0, 0, 2), h@3, slice(h@1, 0, 2, 4))"))
      << ::testing::PrintToString(holding);
}

// The value index finds exactly the holding candidates of the full comparison, in the same order,
// on a model-like table: many layers of same-shaped tensors (the case the index is for), with
// every candidate form, dtype roundings, scales far apart, zeros, NaN and infinity.
TEST(FingerprintMatch, IndexedMatchingKeepsEveryHoldingCandidate) {
  at::manual_seed(11);
  const int world = 2;
  Tables t(world);
  std::vector<ir::TensorRef> queries;
  auto both = [&](const std::string& name, const at::Tensor& r0, const at::Tensor& r1) {
    t.D(0, name, r0);
    t.D(1, name, r1);
  };
  for (int layer = 0; layer < 12; ++layer) {
    std::string l = "l" + std::to_string(layer) + "_";
    double scale = std::pow(10.0, layer % 5 - 2);  // 1e-2 .. 1e2
    at::Tensor x = scale * at::randn({8, 6}, at::kDouble);
    queries.push_back(t.S(l + "x", x));
    both(l + "rep", x, x);                                  // replicated
    both(l + "col", x.narrow(1, 0, 2), x.narrow(1, 2, 4));  // uneven concat along 1
    at::Tensor p = at::randn({8, 6}, at::kDouble);
    both(l + "part", p, x - p);  // sum
    both(l + "rows", x.narrow(0, 5, 3).to(at::kFloat), x.narrow(0, 0, 5).to(at::kFloat));
    t.D(0, l + "flat", x.reshape({48}));      // reshape on one rank
    t.D(1, l + "half", x.to(at::kBFloat16));  // within bf16's tolerance
    t.D(0, l + "near", x + 1e-3 * scale * at::randn({8, 6}, at::kDouble));  // just outside
    queries.push_back(t.S(l + "rows", x.narrow(0, 2, 4)));
    queries.push_back(t.S(l + "flat", x.reshape({6, 8})));
    queries.push_back(t.S(l + "y", at::randn({8, 6}, at::kDouble)));  // no match
  }
  both("zeros", at::zeros({8, 6}), at::zeros({8, 6}));
  queries.push_back(t.S("zeros", at::zeros({8, 6})));
  at::Tensor bad = at::randn({8, 6}, at::kDouble);
  bad.index_put_({0, 0}, std::numeric_limits<double>::infinity());
  bad.index_put_({3, 1}, std::numeric_limits<double>::quiet_NaN());
  both("bad", bad, bad);
  queries.push_back(t.S("bad", bad));
  queries.push_back(t.S("huge", 1e300 * at::randn({8, 6}, at::kDouble)));
  t.D(1, "huge", 1e300 * at::randn({8, 6}, at::kDouble));

  for (double floor : {0.0, kLooseFloatFloor}) {  // both tolerance models
    MatchOptions options;
    options.max_candidates = 64;
    options.float_floor = floor;
    FingerprintMatcher matcher(t.d, options);
    size_t holding = 0;
    for (ir::TensorRef ref : queries) {
      const TensorFingerprint& fp = *t.s.Find(0, ref);
      std::vector<std::string> full, indexed;
      for (const Candidate& c : matcher.CandidatesFor(fp)) {
        if (c.holds()) full.push_back(c.ToString());
      }
      for (const Candidate& c : matcher.HoldingCandidatesFor(fp)) indexed.push_back(c.ToString());
      EXPECT_EQ(full, indexed) << fp.name << " (float floor " << floor << ")";
      holding += full.size();
      for (const std::string& c : full) {
        // An overflowing sum of squares is no scale to judge against (it once matched anything).
        EXPECT_EQ(c.find("huge"), std::string::npos) << fp.name << ": " << c;
      }
    }
    EXPECT_GE(holding, 12u * 5u) << "every layer's x has replicated, concat, sum and bf16 matches";
  }
}

// The float floor (guided search): a float32 concat 1e-5 off per slice (a backward's rounding,
// beyond 64 u) holds with it and not without; an error of order one fails both ways; integers stay
// exact.
TEST(FingerprintMatch, FloatFloorAdmitsRoundingNotWrongLayouts) {
  at::manual_seed(14);
  Tables t(2);
  at::Tensor x = at::randn({8, 6}, at::kFloat);
  at::Tensor blurred = x + 1e-5 * at::randn({8, 6}, at::kFloat);
  ir::TensorRef s = t.S("x", x);
  t.D(0, "g", blurred.narrow(0, 0, 4).clone());
  t.D(1, "g", blurred.narrow(0, 4, 4).clone());
  t.D(0, "w", x.narrow(0, 0, 4).clone());        // the second half scaled twice (a wrong layout's
  t.D(1, "w", (2 * x.narrow(0, 4, 4)).clone());  // kind of error: order one)
  at::Tensor ids = at::randint(0, 100, {8, 6}, at::kLong);
  ir::TensorRef s_ids = t.S("ids", ids);
  t.D(0, "i", ids.narrow(0, 0, 4).clone());
  t.D(1, "i", (ids.narrow(0, 4, 4) + 1).clone());  // off by one: never within a tolerance
  auto holding = [&](double floor, ir::TensorRef ref) {
    MatchOptions options;
    options.float_floor = floor;
    std::vector<std::string> out;
    for (const Candidate& c :
         FingerprintMatcher(t.d, options).HoldingCandidatesFor(*t.s.Find(0, ref))) {
      out.push_back(c.ToString());
    }
    return ::testing::PrintToString(out);
  };
  EXPECT_EQ(holding(0.0, s), "{}");
  EXPECT_NE(holding(kLooseFloatFloor, s).find("concat(0, g@0, g@1)"), std::string::npos)
      << holding(kLooseFloatFloor, s);
  EXPECT_EQ(holding(kLooseFloatFloor, s).find("w@"), std::string::npos);
  EXPECT_EQ(holding(kLooseFloatFloor, s_ids), "{}");
}

// distinct_slices (guided search): an S tensor with repeated slices (a mask's few values) gets no
// runs-of-slices cover, which its values admit by coincidence; one with distinct slices does.
TEST(FingerprintMatch, DistinctSlicesRefusesCoversOfRepeatedSlices) {
  Tables t(2);
  at::Tensor mask = at::tensor({0., 1., 1., 1., 0., 0., 1., 1.}, at::kDouble).reshape({8, 1});
  ir::TensorRef s_mask = t.S("mask", mask);
  t.D(0, "m", at::tensor({0., 1., 1., 1.}, at::kDouble).reshape({4, 1}));
  t.D(1, "m", at::tensor({1., 1., 0., 1.}, at::kDouble).reshape({4, 1}));
  at::manual_seed(15);
  at::Tensor x = at::randn({8, 3}, at::kDouble);
  ir::TensorRef s_x = t.S("x", x);
  t.D(0, "h", at::cat({x.slice(0, 0, 2), x.slice(0, 6, 8)}, 0));  // zig-zag pieces
  t.D(1, "h", x.slice(0, 2, 6).clone());
  auto slices = [&](bool distinct, ir::TensorRef ref) {
    MatchOptions options;
    options.distinct_slices = distinct;
    size_t n = 0;
    for (const Candidate& c :
         FingerprintMatcher(t.d, options).HoldingCandidatesFor(*t.s.Find(0, ref))) {
      n += c.kind == Candidate::Kind::kSlices;
    }
    return n;
  };
  EXPECT_GT(slices(false, s_mask), 0u);
  EXPECT_EQ(slices(true, s_mask), 0u);
  EXPECT_GT(slices(true, s_x), 0u);
}

}  // namespace
}  // namespace gg::runtime
