#include "runtime/compare.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#if GG_GPU_KERNELS
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "gpu_kernels.h"
#endif

namespace gg::runtime {
namespace {

// The flat index `flat` of a tensor of this shape as a multi-index.
std::vector<int64_t> MultiIndex(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = flat % sizes[static_cast<size_t>(d)];
    flat /= sizes[static_cast<size_t>(d)];
  }
  return index;
}

// The tolerance of an element of S value `expected` (c.magnitude > 0): the plain one up to the
// magnitude, proportionally more above it; non-finite values get the plain one.
double ScaledTolerance(const Comparison& c, double expected) {
  if (!std::isfinite(expected)) return c.tolerance;
  return c.tolerance * std::max(1.0, std::abs(expected) / c.magnitude);
}

double RelativeError(double max_abs_error, double scale) {
  return scale > 0 ? max_abs_error / scale : (max_abs_error > 0 ? INFINITY : 0.0);
}

#if GG_GPU_KERNELS
void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorString(status));
  }
}

// The fused compare kernel's figures (c holds the elements and the tolerance), or nullopt when a
// pair is non-finite on one side only (the ATen path gives those figures).
std::optional<Comparison> CompareWithKernel(const at::Tensor& expected, const at::Tensor& actual,
                                            Comparison c) {
  kernels::ElementType type = kernels::ElementType::kFloat32;
  if (expected.scalar_type() == at::kBFloat16) type = kernels::ElementType::kBFloat16;
  if (expected.scalar_type() == at::kHalf) type = kernels::ElementType::kFloat16;
  at::Tensor e = expected.contiguous().reshape({-1});
  at::Tensor a = actual.contiguous().reshape({-1});
  int previous = 0;
  CheckCuda(cudaGetDevice(&previous), "cudaGetDevice");
  CheckCuda(cudaSetDevice(expected.device().index()), "cudaSetDevice");
  kernels::CompareResult r;
  try {
    // LibTorch's stream computed both tensors; the kernel runs on this runtime's default stream.
    CheckCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    r = kernels::CompareOnDevice(e.data_ptr(), a.data_ptr(), type, e.numel(), c.tolerance);
  } catch (...) {
    cudaSetDevice(previous);
    throw;
  }
  CheckCuda(cudaSetDevice(previous), "cudaSetDevice");
  if (r.nonfinite_mismatches > 0) return std::nullopt;
  c.out_of_tolerance = r.over_tolerance;
  c.nan_mismatches = 0;
  c.max_abs_error = r.max_abs_error;
  c.expected_scale = r.max_abs_expected;
  c.max_rel_error = RelativeError(c.max_abs_error, c.expected_scale);
  // No pair differs: the ATen path's argmax of all-zero differences is element 0.
  int64_t worst = r.worst_index < 0 ? 0 : r.worst_index;
  if (r.worst_index < 0) {
    c.expected_at_worst = e[0].item<double>();
    c.actual_at_worst = a[0].item<double>();
  } else {
    c.expected_at_worst = r.expected_at_worst;
    c.actual_at_worst = r.actual_at_worst;
  }
  c.worst_index = MultiIndex(worst, expected.sizes());
  c.holds = c.out_of_tolerance == 0;
  return c;
}
#endif

}  // namespace

bool FusedCompareApplies(const at::Tensor& expected, const at::Tensor& actual) {
#if GG_GPU_KERNELS
  at::ScalarType t = expected.scalar_type();
  return expected.is_cuda() && actual.device() == expected.device() && actual.scalar_type() == t &&
         (t == at::kFloat || t == at::kBFloat16 || t == at::kHalf);
#else
  return false;
#endif
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string text = "[";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + std::to_string(index[i]);
  return text + "]";
}

at::ScalarType CompareType(at::ScalarType type) {
  if (at::isComplexType(type)) return at::kComplexDouble;
  return type == at::kBFloat16 || type == at::kHalf ? at::kFloat : at::kDouble;
}

Comparison CompareTensors(const at::Tensor& expected, const at::Tensor& actual, double tolerance,
                          double magnitude) {
  Comparison c;
  c.tolerance = tolerance;
  c.tolerance_at_worst = tolerance;
  // Scaling applies to positive tolerances of a tensor with a positive, finite RMS.
  bool scaled = tolerance > 0 && magnitude > 0 && std::isfinite(magnitude);
  c.magnitude = scaled ? magnitude : 0;
  if (!expected.defined() || !actual.defined()) {
    c.problem = "a value is missing";
    return c;
  }
  if (expected.is_complex() || actual.is_complex()) {  // as their (real, imag) pairs
    if (expected.is_complex() != actual.is_complex()) {
      c.problem = "one value is complex, the other is not";
      return c;
    }
    return CompareTensors(at::view_as_real(expected.resolve_conj()),
                          at::view_as_real(actual.resolve_conj()), tolerance, magnitude);
  }
  if (expected.sizes() != actual.sizes()) {
    c.problem = "shapes differ: " + IndexText(expected.sizes().vec()) + " vs " +
                IndexText(actual.sizes().vec());
    return c;
  }
  c.elements = expected.numel();
  if (c.elements == 0) {
    c.holds = true;
    return c;
  }
#if GG_GPU_KERNELS
  if (tolerance >= 0 && FusedCompareApplies(expected, actual)) {
    // Against the unscaled tolerance: every element within it is within its own; otherwise the
    // ATen path below counts with the scaled ones.
    std::optional<Comparison> fused = CompareWithKernel(expected, actual, c);
    if (fused && (fused->holds || !scaled)) {
      if (scaled) fused->tolerance_at_worst = ScaledTolerance(*fused, fused->expected_at_worst);
      return *fused;
    }
  }
#endif
  at::ScalarType type = CompareType(expected.scalar_type());
  at::Tensor e = expected.to(type).reshape({-1});
  at::Tensor a = actual.to(type).reshape({-1});
  at::Tensor e_nan = e.isnan();
  at::Tensor a_nan = a.isnan();
  at::Tensor nan_mismatch = e_nan.logical_xor(a_nan);
  c.nan_mismatches = nan_mismatch.sum().item<int64_t>();
  // Equal values (both NaN, equal infinities) differ by 0; a one-sided NaN by +inf.
  at::Tensor same = e.eq(a).logical_or(e_nan.logical_and(a_nan));
  at::Tensor diff = (a - e).abs().masked_fill(same, 0.0).masked_fill(nan_mismatch, INFINITY);
  diff = diff.nan_to_num(INFINITY, INFINITY, INFINITY);
  at::Tensor finite_e = e.masked_fill(e_nan, 0.0).abs();
  c.expected_scale = finite_e.max().item<double>();
  int64_t worst = diff.argmax().item<int64_t>();
  c.max_abs_error = diff[worst].item<double>();
  c.max_rel_error = RelativeError(c.max_abs_error, c.expected_scale);
  if (scaled) {
    // Non-finite S values keep the plain tolerance (an infinity allows nothing extra).
    at::Tensor allowed =
        finite_e.nan_to_num(0.0, 0.0, 0.0).div(magnitude).clamp_min(1.0).mul(tolerance);
    at::Tensor beyond = diff.gt(allowed);
    c.out_of_tolerance = beyond.sum().item<int64_t>();
    if (c.out_of_tolerance > 0) worst = diff.div(allowed).argmax().item<int64_t>();
  } else {
    c.out_of_tolerance = diff.gt(tolerance).sum().item<int64_t>();
  }
  c.expected_at_worst = e[worst].item<double>();
  c.actual_at_worst = a[worst].item<double>();
  if (scaled) c.tolerance_at_worst = ScaledTolerance(c, c.expected_at_worst);
  c.worst_index = MultiIndex(worst, expected.sizes());
  c.holds = c.out_of_tolerance == 0;
  return c;
}

}  // namespace gg::runtime
