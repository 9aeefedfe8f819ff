#include "reference/kernels_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace gg::kernels {
namespace {

TEST(KernelDefs, HalfAndBFloat16DecodeKnownValues) {
  EXPECT_EQ(Float16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(Float16ToFloat(0xC000), -2.0f);
  EXPECT_EQ(Float16ToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(Float16ToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(Float16ToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isinf(Float16ToFloat(0xFC00)) && Float16ToFloat(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(Float16ToFloat(0x7E00)));
  EXPECT_TRUE(std::signbit(Float16ToFloat(0x8000)));
  EXPECT_EQ(BFloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(0xC0A0), -5.0f);
}

TEST(KernelDefs, EncodingRoundsToNearestEvenAndRoundTrips) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    float f = Float16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Float16ToFloat(FloatToFloat16(f))));
      continue;
    }
    ASSERT_EQ(FloatToFloat16(f), h) << "half 0x" << std::hex << h;
  }
  EXPECT_EQ(FloatToFloat16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie to even: down
  EXPECT_EQ(FloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie to even: up
  EXPECT_EQ(FloatToFloat16(70000.0f), 0x7C00);  // overflow to inf
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie to even: down
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie to even: up
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(-3.5f)), -3.5f);
}

TEST(KernelDefs, ProjectionSignsAreBalancedAndIndependent) {
  const int n = 1 << 16;
  double sum[kMaxProjections] = {};
  double cross = 0;
  for (int p = 0; p < n; ++p) {
    for (int k = 0; k < kMaxProjections; ++k) sum[k] += ProjectionSign(7, p, k);
    cross += ProjectionSign(7, p, 0) * ProjectionSign(7, p, 1);
  }
  // A fair ±1 sequence of n draws has standard deviation sqrt(n) = 256; 5 sigma.
  for (int k = 0; k < kMaxProjections; ++k) EXPECT_LT(std::fabs(sum[k]), 5 * 256) << k;
  EXPECT_LT(std::fabs(cross), 5 * 256);
  // Another seed, other signs.
  int differ = 0;
  for (int p = 0; p < 1024; ++p) differ += ProjectionSign(7, p, 0) != ProjectionSign(8, p, 0);
  EXPECT_GT(differ, 400);
  EXPECT_LT(differ, 624);
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(FingerprintReference, WholeTensorIsTheSignedSum) {
  std::vector<float> x = RandomFloats(1001, 1);
  std::vector<double> fp = FingerprintSlicesReference(x.data(), ElementType::kFloat32,
                                                      {1, 1, 1001}, 3, 42);
  ASSERT_EQ(fp.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    double expect = 0;
    for (size_t p = 0; p < x.size(); ++p) expect += x[p] * ProjectionSign(42, p, k);
    EXPECT_NEAR(fp[k], expect, 1e-4) << k;
  }
}

TEST(FingerprintReference, SlicesOfAConcatMatchTheShards) {
  // full = concat(a, b) along dim 1 of [outer=3, dim, inner=5]: slice j of the full tensor is
  // slice j of a or slice j - 4 of b, bit for bit.
  const int64_t outer = 3, inner = 5, da = 4, db = 2;
  std::vector<float> a = RandomFloats(outer * da * inner, 2);
  std::vector<float> b = RandomFloats(outer * db * inner, 3);
  std::vector<float> full;
  for (int64_t o = 0; o < outer; ++o) {
    full.insert(full.end(), a.begin() + o * da * inner, a.begin() + (o + 1) * da * inner);
    full.insert(full.end(), b.begin() + o * db * inner, b.begin() + (o + 1) * db * inner);
  }
  const int k = 4;
  auto fp_full = FingerprintSlicesReference(full.data(), ElementType::kFloat32,
                                            {outer, da + db, inner}, k, 9);
  auto fp_a = FingerprintSlicesReference(a.data(), ElementType::kFloat32, {outer, da, inner}, k, 9);
  auto fp_b = FingerprintSlicesReference(b.data(), ElementType::kFloat32, {outer, db, inner}, k, 9);
  for (int64_t j = 0; j < da + db; ++j) {
    for (int i = 0; i < k; ++i) {
      double shard = j < da ? fp_a[j * k + i] : fp_b[(j - da) * k + i];
      EXPECT_EQ(fp_full[j * k + i], shard) << j << " " << i;
    }
  }
  // Different slices have different fingerprints.
  EXPECT_NE(fp_full[0], fp_full[k]);
}

TEST(FingerprintReference, SixteenBitTypesDecodeBeforeProjecting) {
  std::vector<float> x = RandomFloats(37, 4);
  std::vector<uint16_t> bf(x.size()), hf(x.size());
  std::vector<float> bf_as_float(x.size()), hf_as_float(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    bf[i] = FloatToBFloat16(x[i]);
    hf[i] = FloatToFloat16(x[i]);
    bf_as_float[i] = BFloat16ToFloat(bf[i]);
    hf_as_float[i] = Float16ToFloat(hf[i]);
  }
  SliceLayout layout{1, 37, 1};
  EXPECT_EQ(FingerprintSlicesReference(bf.data(), ElementType::kBFloat16, layout, 2, 1),
            FingerprintSlicesReference(bf_as_float.data(), ElementType::kFloat32, layout, 2, 1));
  EXPECT_EQ(FingerprintSlicesReference(hf.data(), ElementType::kFloat16, layout, 2, 1),
            FingerprintSlicesReference(hf_as_float.data(), ElementType::kFloat32, layout, 2, 1));
}

TEST(FingerprintReference, RejectsBadArguments) {
  float x = 1;
  EXPECT_THROW(FingerprintSlicesReference(&x, ElementType::kFloat32, {1, 1, 1}, 0, 0),
               std::invalid_argument);
  EXPECT_THROW(FingerprintSlicesReference(&x, ElementType::kFloat32, {1, 1, 1}, 9, 0),
               std::invalid_argument);
  EXPECT_THROW(FingerprintSlicesReference(&x, ElementType::kFloat32, {1, -1, 1}, 1, 0),
               std::invalid_argument);
  EXPECT_TRUE(FingerprintSlicesReference(&x, ElementType::kFloat32, {1, 0, 1}, 1, 0).empty());
}

TEST(CompareReference, ErrorsIndicesAndNonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  //                       0     1    2     3    4    5     6    7
  std::vector<float> e = {1.0f, 2.0f, -4.0f, nan, inf, 3.0f, nan, 0.5f};
  std::vector<float> a = {1.0f, 2.5f, -4.5f, nan, inf, inf, 1.0f, 0.25f};
  CompareResult r = CompareReference(e.data(), a.data(), ElementType::kFloat32, 8, 0.3);
  EXPECT_EQ(r.numel, 8);
  EXPECT_EQ(r.max_abs_error, 0.5);
  EXPECT_EQ(r.worst_index, 1);  // index 2 ties at 0.5; the first one counts
  EXPECT_EQ(r.expected_at_worst, 2.0);
  EXPECT_EQ(r.actual_at_worst, 2.5);
  EXPECT_EQ(r.max_abs_expected, 4.0);
  EXPECT_EQ(r.nonfinite_mismatches, 2);  // 5 (3 vs inf), 6 (NaN vs 1)
  EXPECT_EQ(r.over_tolerance, 4);        // 1, 2, 5, 6 (7 differs by 0.25 <= 0.3)
  EXPECT_EQ(r.first_over_index, 1);
  EXPECT_DOUBLE_EQ(r.NormwiseRelativeError(), 0.125);
  EXPECT_DOUBLE_EQ(r.RelativeErrorAtWorst(), 0.25);
}

TEST(CompareReference, EqualTensorsAndEmptyOnes) {
  std::vector<float> e = RandomFloats(10, 5);
  CompareResult r = CompareReference(e.data(), e.data(), ElementType::kFloat32, 10, 0.0);
  EXPECT_EQ(r.max_abs_error, 0.0);
  EXPECT_EQ(r.worst_index, -1);
  EXPECT_EQ(r.over_tolerance, 0);
  EXPECT_EQ(r.first_over_index, -1);
  EXPECT_EQ(r.NormwiseRelativeError(), 0.0);
  CompareResult empty = CompareReference(nullptr, nullptr, ElementType::kBFloat16, 0, 0.0);
  EXPECT_EQ(empty.numel, 0);
  EXPECT_THROW(CompareReference(nullptr, nullptr, ElementType::kFloat32, -1, 0),
               std::invalid_argument);
  EXPECT_THROW(CompareReference(nullptr, nullptr, ElementType::kFloat32, 0, -1),
               std::invalid_argument);
}

TEST(CompareReference, HalfPrecisionDifferencesAreExact) {
  std::vector<uint16_t> e = {FloatToFloat16(1.0f), FloatToFloat16(-2.0f)};
  std::vector<uint16_t> a = {FloatToFloat16(1.0009765625f), FloatToFloat16(-2.0f)};
  CompareResult r = CompareReference(e.data(), a.data(), ElementType::kFloat16, 2, 0.0);
  EXPECT_EQ(r.max_abs_error, 0.0009765625);  // one half ulp at 1.0, exactly
  EXPECT_EQ(r.over_tolerance, 1);
  EXPECT_EQ(r.worst_index, 0);
}

}  // namespace
}  // namespace gg::kernels
