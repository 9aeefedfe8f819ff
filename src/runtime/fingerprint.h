// Fingerprints: a few random projections of a tensor, whole and per slice along every dimension,
// small enough to keep for every tensor of S and of every rank of D, so that relations between
// them (identical, replicated, concatenated over ranks, summed over ranks, a row range of one rank)
// can be found and tested without keeping the tensors.
//
// Definition (the one of kernels/reference/kernel_defs.h, which the CUDA kernels compute too): a
// tensor viewed as [outer, dim, inner] has `dim` slices; slice j holds x[o, j, i] at slice position
// p = o * inner + i, and projection k of slice j is sum_p x[o, j, i] * s_k(p) with the sign
// s_k(p) = -1 when bit ((p % 8) * 8 + k) of Hash64(seed, p / 8) is set, else +1. Because p does not
// depend on j or on the extent of `dim`, the slices of a tensor concatenated along d are the slices
// of its pieces, in order; a sum of tensors has the sum of their projections; a reshape keeps the
// whole-tensor projections (layout [1, 1, numel]). Here everything is summed in double (the
// reference sums groups of 8 in float first: equal up to rounding). Each slice also records its
// sum of squares, the scale against which a difference of projections is judged.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/program.h"

namespace gg::runtime {

struct FingerprintOptions {
  int projections = 4;             // 1..8 (kernel_defs.h's kMaxProjections)
  uint64_t seed = 0x6767'7072'6f6aull;
};

// Projections of the slices along one dimension (or of the whole tensor).
struct SliceProjections {
  int64_t count = 0;               // number of slices
  std::vector<double> values;      // count * projections, slice-major
  std::vector<double> sum_squares; // one per slice
  double projection(int64_t slice, int k, int projections) const {
    return values[static_cast<size_t>(slice * projections + k)];
  }
};

struct TensorFingerprint {
  std::string name;                // the FX name of the value
  ir::DType dtype = ir::DType::kFloat32;
  std::vector<int64_t> shape;
  int projections = 0;
  SliceProjections whole;          // layout [1, 1, numel]: one slice
  std::vector<SliceProjections> dims;  // per dimension d: layout [outer, shape[d], inner]; empty
                                       // (count 0) for dimensions of extent 1 (equal to `whole`)
  int64_t numel() const;
  double sum_squares() const { return whole.sum_squares.empty() ? 0.0 : whole.sum_squares[0]; }
  // The slices along d (the whole tensor for an extent-1 dimension).
  const SliceProjections& along(int64_t d) const;
};

// The fingerprint of `value` (any dtype, any layout; integers and booleans as numbers).
// Throws std::invalid_argument for a bad projection count.
TensorFingerprint Fingerprint(const at::Tensor& value, const FingerprintOptions& options = {},
                              std::string name = "");

// Fingerprints of the values of one graph (S) or of every rank of a program (D).
struct FingerprintTable {
  int projections = 0;
  std::vector<std::map<ir::TensorRef, TensorFingerprint>> ranks;  // indexed by rank
  const TensorFingerprint* Find(int32_t rank, ir::TensorRef ref) const;
};

// An ExecutionOptions::observe hook that fingerprints every value into `table` (ranks sized from
// `graphs`, names taken from them). The table must outlive the execution.
std::function<void(int32_t, ir::TensorRef, const at::Tensor&)> FingerprintObserver(
    FingerprintTable* table, std::vector<const ir::Graph*> graphs,
    const FingerprintOptions& options = {});

}  // namespace gg::runtime
