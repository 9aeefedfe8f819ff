// Compare: elementwise comparison of S's value of a tensor with the value rebuilt from D, against
// an absolute tolerance from the tolerance model (tolerance.h): the figures a check reports.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gg::runtime {

struct Comparison {
  bool holds = false;
  std::string problem;  // shapes differ, ... (empty when the values were compared)
  int64_t elements = 0;
  int64_t out_of_tolerance = 0;  // elements with |actual - expected| > tolerance
  int64_t nan_mismatches = 0;    // NaN on one side only (counted as out of tolerance too)
  double max_abs_error = 0;
  double max_rel_error = 0;          // max_abs_error / max |expected| (normwise)
  double expected_scale = 0;         // max |expected|
  std::vector<int64_t> worst_index;  // multi-index of the largest error
  double expected_at_worst = 0;
  double actual_at_worst = 0;
  double tolerance = 0;           // the absolute tolerance applied (to elements up to `magnitude`)
  double magnitude = 0;           // above it, an element's tolerance grows with |S| (0: never)
  double tolerance_at_worst = 0;  // the worst element's own tolerance
};

// The dtype differences are computed in: float32 for 16-bit floats (exact for their values,
// half the memory traffic), complex128 for complex tensors (and random complex inputs are drawn
// in it: real and imaginary parts both random), float64 otherwise.
at::ScalarType CompareType(at::ScalarType type);

// Compares in CompareType (complex tensors as their (real, imag) pairs). Both NaN (or equal
// infinities) at an index count as equal. Float32/bf16/fp16 tensors on one CUDA device are compared
// by the fused compare kernel (kernels/gpu_kernels.h: one pass, differences in double) in CUDA
// builds; the figures are the ATen path's except that the relative error's scale is the largest
// finite |expected| (ATen's is infinite when S's tensor holds an infinity). A pair with a NaN or
// infinity on one side only sends the comparison back to the ATen path, which gives those their
// figures (inf, NaN counts). With `magnitude` > 0 (the RMS of S's tensor), an element larger than
// it may differ by tolerance * |S_i| / magnitude: rounding noise is relative to the values
// (tolerance.h), so an element k times the RMS carries k times the RMS noise. The worst element is
// the largest difference while every element holds, else the element furthest beyond its own
// tolerance.
Comparison CompareTensors(const at::Tensor& expected, const at::Tensor& actual, double tolerance,
                          double magnitude = 0);

// Whether CompareTensors uses the fused compare kernel for these tensors (a CUDA build, both on
// one CUDA device, the same float32/bf16/fp16 dtype).
bool FusedCompareApplies(const at::Tensor& expected, const at::Tensor& actual);

// "[3, 0, 17]"
std::string IndexText(const std::vector<int64_t>& index);

}  // namespace gg::runtime
