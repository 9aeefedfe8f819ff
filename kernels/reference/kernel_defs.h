// Kernel definitions shared by the CUDA kernels (kernels/gpu_kernels.cu) and their plain C++
// reference (kernels_reference.h): element decoding, the counter-based hash that generates the
// ±1 projection vectors, the slice layout, and the compare result. One definition, so the CPU
// code and the GPU kernels compute the same fingerprint and the same compare.
//
// Fingerprint. A tensor is viewed as [outer, dim, inner] (contiguous). Slice j (an index along
// dim) holds the outer*inner elements x[o, j, i]; its position p = o*inner + i does not depend on
// j or on dim, so a slice of a sharded tensor and the matching slice of the full tensor meet the
// same projection vectors. Projection k of slice j is sum_p x[o, j, i] * s_k(p), where the sign
// s_k(p) = ±1 is bit ((p % 8) * 8 + k) of Hash64(seed, p / 8): one hash serves 8 positions and up
// to 8 projections, so nothing is stored and the kernel stays memory-bound. The 8 products of a
// group are summed in float (in position order), groups are summed in double. The whole-tensor
// fingerprint is the layout [1, 1, numel].
//
// Compare. Expected e and actual a (same dtype, same number of elements, flat) in one pass:
// elements whose values are both finite differ by |a - e| (computed in double: exact for values
// decoded from fp32/bf16/fp16); a pair is a non-finite mismatch when exactly one is NaN, or either
// is infinite and they differ; both NaN or the same infinity agree. "Over tolerance" means
// |a - e| > tol or a non-finite mismatch.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GG_HD __host__ __device__ __forceinline__
#else
#define GG_HD inline
#endif

namespace gg::kernels {

enum class ElementType : int32_t { kFloat32 = 0, kBFloat16 = 1, kFloat16 = 2 };

GG_HD int ElementSize(ElementType t) { return t == ElementType::kFloat32 ? 4 : 2; }
const char* ElementTypeName(ElementType t);

// Projections per slice: at most 8 (the 64 bits of one hash cover 8 positions x 8 projections).
constexpr int kMaxProjections = 8;
// Positions per hash (and per vector load in the kernels).
constexpr int kGroup = 8;

// splitmix64's finalizer over the seed and the group counter: cheap, well mixed, the same on the
// host and the device (integer arithmetic only).
GG_HD uint64_t Hash64(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

// The sign of projection k at slice position p: +1 when the bit is 0, -1 when it is 1.
GG_HD float ProjectionSign(uint64_t seed, uint64_t p, int k) {
  uint64_t bits = Hash64(seed, p / kGroup);
  return ((bits >> ((p % kGroup) * 8 + static_cast<uint64_t>(k))) & 1u) ? -1.0f : 1.0f;
}

// Bit-exact decoding of the 16-bit formats (the device kernels use the same functions, so the
// values agree bit for bit with the host).
GG_HD float BitsToFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  union {
    uint32_t u;
    float f;
  } v{bits};
  return v.f;
#endif
}

GG_HD float BFloat16ToFloat(uint16_t bits) { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }

GG_HD float Float16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return BitsToFloat(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return BitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitsToFloat(sign);  // +-0
  // Subnormal: value = mantissa * 2^-24, exact in float.
  float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

// Element i of a buffer of the given type, as float (exact).
GG_HD float LoadElement(const void* data, ElementType type, uint64_t i) {
  switch (type) {
    case ElementType::kFloat32:
      return static_cast<const float*>(data)[i];
    case ElementType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(data)[i]);
    case ElementType::kFloat16:
      return Float16ToFloat(static_cast<const uint16_t*>(data)[i]);
  }
  return 0.0f;
}

// A contiguous tensor viewed as [outer, dim, inner]; slices are the indices along dim.
struct SliceLayout {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
  GG_HD int64_t slice_size() const { return outer * inner; }
  GG_HD int64_t numel() const { return outer * dim * inner; }
  // The flat element index of slice j at slice position p.
  GG_HD int64_t ElementIndex(int64_t j, int64_t p) const {
    int64_t o = p / inner;
    return (o * dim + j) * inner + (p - o * inner);
  }
};

// The result of one compare (see the banner). Indices are flat element indices, -1 when none.
struct CompareResult {
  int64_t numel = 0;
  double max_abs_error = 0.0;     // over pairs of finite values
  int64_t worst_index = -1;       // where max_abs_error is reached first (-1: no finite pair
                                  // differs)
  double expected_at_worst = 0.0;
  double actual_at_worst = 0.0;
  double max_abs_expected = 0.0;  // max |e| over finite e
  int64_t over_tolerance = 0;     // |a - e| > tol, or a non-finite mismatch
  int64_t first_over_index = -1;  // the first such element
  int64_t nonfinite_mismatches = 0;

  // Normwise relative error: max |a - e| / max |e| (0 when both are 0; infinite when only e is).
  double NormwiseRelativeError() const;
  // Elementwise relative error at the worst index: |a - e| / |e| there.
  double RelativeErrorAtWorst() const;
};

// How one pair of values contributes to a compare: its finite difference (or -1 when the pair
// is not a finite pair), whether it is over the tolerance and whether it is a non-finite mismatch.
struct PairVerdict {
  double abs_error;  // -1: not a pair of finite values
  bool over;
  bool nonfinite_mismatch;
};

GG_HD bool IsNan(float x) { return x != x; }
GG_HD bool IsInf(float x) { return x - x != x - x && x == x; }

GG_HD PairVerdict JudgePair(float expected, float actual, double tol) {
  bool e_nan = IsNan(expected), a_nan = IsNan(actual);
  bool e_inf = IsInf(expected), a_inf = IsInf(actual);
  if (e_nan || a_nan || e_inf || a_inf) {
    bool agree = (e_nan && a_nan) || (!e_nan && !a_nan && expected == actual);
    return {-1.0, !agree, !agree};
  }
  double d = static_cast<double>(actual) - static_cast<double>(expected);
  if (d < 0) d = -d;
  return {d, d > tol, false};
}

}  // namespace gg::kernels
