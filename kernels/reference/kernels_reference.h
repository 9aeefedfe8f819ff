// Plain C++ reference of the GPU kernels in kernels/gpu_kernels.h: the same semantics
// (kernel_defs.h) computed on the CPU, one element at a time. It builds without CUDA; the GPU
// tests compare the kernels against it, and CPU code can use it for fingerprints and compares.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/kernel_defs.h"

namespace gg::kernels {

// Projections of every slice of `data` (contiguous, `layout.numel()` elements of `type`):
// num_projections values per slice, slice-major (result[j * num_projections + k]).
// Throws std::invalid_argument when num_projections is outside 1..kMaxProjections or the layout
// has a negative extent.
std::vector<double> FingerprintSlicesReference(const void* data, ElementType type,
                                               SliceLayout layout, int num_projections,
                                               uint64_t seed);

// The compare of `actual` against `expected` (both `numel` elements of `type`); see
// kernel_defs.h. Throws std::invalid_argument for a negative numel or tolerance.
CompareResult CompareReference(const void* expected, const void* actual, ElementType type,
                               int64_t numel, double tol);

// Encoding to the 16-bit formats with round-to-nearest-even (for tests and callers that make
// bf16/fp16 data on the CPU without LibTorch).
uint16_t FloatToBFloat16(float value);
uint16_t FloatToFloat16(float value);

}  // namespace gg::kernels
