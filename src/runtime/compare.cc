#include "runtime/compare.h"

namespace gg::runtime {

std::string IndexText(const std::vector<int64_t>& index) {
  std::string text = "[";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + std::to_string(index[i]);
  return text + "]";
}

at::ScalarType CompareType(at::ScalarType type) {
  return type == at::kBFloat16 || type == at::kHalf ? at::kFloat : at::kDouble;
}

Comparison CompareTensors(const at::Tensor& expected, const at::Tensor& actual, double tolerance) {
  Comparison c;
  c.tolerance = tolerance;
  if (!expected.defined() || !actual.defined()) {
    c.problem = "a value is missing";
    return c;
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
  c.max_rel_error = c.expected_scale > 0 ? c.max_abs_error / c.expected_scale
                                         : (c.max_abs_error > 0 ? INFINITY : 0.0);
  c.expected_at_worst = e[worst].item<double>();
  c.actual_at_worst = a[worst].item<double>();
  int64_t rest = worst;
  c.worst_index.assign(static_cast<size_t>(expected.dim()), 0);
  for (int64_t d = expected.dim() - 1; d >= 0; --d) {
    c.worst_index[static_cast<size_t>(d)] = rest % expected.size(d);
    rest /= expected.size(d);
  }
  c.out_of_tolerance = diff.gt(tolerance).sum().item<int64_t>();
  c.holds = c.out_of_tolerance == 0;
  return c;
}

}  // namespace gg::runtime
