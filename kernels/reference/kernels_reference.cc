#include "reference/kernels_reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace gg::kernels {

const char* ElementTypeName(ElementType t) {
  switch (t) {
    case ElementType::kFloat32:
      return "f32";
    case ElementType::kBFloat16:
      return "bf16";
    case ElementType::kFloat16:
      return "f16";
  }
  return "?";
}

double CompareResult::NormwiseRelativeError() const {
  if (max_abs_error == 0.0) return 0.0;
  if (max_abs_expected == 0.0) return std::numeric_limits<double>::infinity();
  return max_abs_error / max_abs_expected;
}

double CompareResult::RelativeErrorAtWorst() const {
  if (worst_index < 0 || max_abs_error == 0.0) return 0.0;
  double e = std::fabs(expected_at_worst);
  return e == 0.0 ? std::numeric_limits<double>::infinity() : max_abs_error / e;
}

std::vector<double> FingerprintSlicesReference(const void* data, ElementType type,
                                               SliceLayout layout, int num_projections,
                                               uint64_t seed) {
  if (num_projections < 1 || num_projections > kMaxProjections) {
    throw std::invalid_argument("fingerprint: " + std::to_string(num_projections) +
                                " projections (1.." + std::to_string(kMaxProjections) + ")");
  }
  if (layout.outer < 0 || layout.dim < 0 || layout.inner < 0) {
    throw std::invalid_argument("fingerprint: negative extent in the slice layout");
  }
  const int64_t size = layout.slice_size();
  std::vector<double> result(static_cast<size_t>(layout.dim * num_projections), 0.0);
  for (int64_t j = 0; j < layout.dim; ++j) {
    for (int64_t group = 0; group * kGroup < size; ++group) {
      // The 8 products of a group are summed in float, in position order, as the kernels do.
      float partial[kMaxProjections] = {};
      for (int64_t p = group * kGroup; p < size && p < (group + 1) * kGroup; ++p) {
        float x = LoadElement(data, type, static_cast<uint64_t>(layout.ElementIndex(j, p)));
        for (int k = 0; k < num_projections; ++k) {
          partial[k] += x * ProjectionSign(seed, static_cast<uint64_t>(p), k);
        }
      }
      for (int k = 0; k < num_projections; ++k) {
        result[static_cast<size_t>(j * num_projections + k)] += partial[k];
      }
    }
  }
  return result;
}

CompareResult CompareReference(const void* expected, const void* actual, ElementType type,
                               int64_t numel, double tol) {
  if (numel < 0) throw std::invalid_argument("compare: negative element count");
  if (!(tol >= 0)) throw std::invalid_argument("compare: tolerance must be >= 0");
  CompareResult r;
  r.numel = numel;
  for (int64_t i = 0; i < numel; ++i) {
    float e = LoadElement(expected, type, static_cast<uint64_t>(i));
    float a = LoadElement(actual, type, static_cast<uint64_t>(i));
    if (!IsNan(e) && !IsInf(e) && std::fabs(static_cast<double>(e)) > r.max_abs_expected) {
      r.max_abs_expected = std::fabs(static_cast<double>(e));
    }
    PairVerdict v = JudgePair(e, a, tol);
    if (v.abs_error > r.max_abs_error) {
      r.max_abs_error = v.abs_error;
      r.worst_index = i;
      r.expected_at_worst = e;
      r.actual_at_worst = a;
    }
    if (v.over) {
      ++r.over_tolerance;
      if (r.first_over_index < 0) r.first_over_index = i;
    }
    if (v.nonfinite_mismatch) ++r.nonfinite_mismatches;
  }
  return r;
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

uint16_t FloatToFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (abs_bits > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs_bits >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to inf
  float magnitude;
  std::memcpy(&magnitude, &abs_bits, sizeof magnitude);
  if (abs_bits < 0x38800000u) {
    // Subnormal half (or zero): multiples of 2^-24, rounded to nearest even by the FPU.
    float scaled = std::nearbyint(magnitude * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(scaled));
  }
  uint32_t exponent = (abs_bits >> 23) - 112u;
  uint32_t mantissa = abs_bits & 0x7FFFFFu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<uint16_t>(sign | half);
}

}  // namespace gg::kernels
