#include "runtime/fingerprint.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "reference/kernel_defs.h"
#include "runtime/op_kernels.h"

namespace gg::runtime {

namespace {

// Signs of projections 0..k-1 at slice positions [first, first + count) into out, row-major
// [count, k].
void FillSigns(int64_t first, int64_t count, int projections, uint64_t seed, double* out) {
  uint64_t group = ~uint64_t{0};
  uint64_t bits = 0;
  for (int64_t q = 0; q < count; ++q) {
    uint64_t p = static_cast<uint64_t>(first + q);
    if (p / kernels::kGroup != group) {
      group = p / kernels::kGroup;
      bits = kernels::Hash64(seed, group);
    }
    for (int k = 0; k < projections; ++k) {
      bool negative = (bits >> ((p % kernels::kGroup) * 8 + static_cast<uint64_t>(k))) & 1u;
      out[q * projections + k] = negative ? -1.0 : 1.0;
    }
  }
}

// The same signs as a tensor [count, k].
at::Tensor Signs(int64_t first, int64_t count, int projections, uint64_t seed) {
  at::Tensor signs = at::empty({count, projections}, at::TensorOptions().dtype(at::kDouble));
  FillSigns(first, count, projections, seed, signs.data_ptr<double>());
  return signs;
}

// Tensors up to this many elements are projected by a loop over their values: a model with a
// small hidden size has tens of thousands of them, and the tensor operations below cost far more
// in dispatch than in arithmetic there. Larger ones use them (BLAS).
constexpr int64_t kLoopElements = int64_t{1} << 16;

// Project's loop: values[j * k + q] = sum over (o, i) of x[o, j, i] * sign_q(o * inner + i).
SliceProjections ProjectByLoop(const double* x, int64_t outer, int64_t dim, int64_t inner,
                               int projections, uint64_t seed) {
  SliceProjections result;
  result.count = dim;
  result.values.assign(static_cast<size_t>(dim * projections), 0.0);
  result.sum_squares.assign(static_cast<size_t>(dim), 0.0);
  std::vector<double> signs(static_cast<size_t>(inner * projections));
  for (int64_t o = 0; o < outer; ++o) {
    FillSigns(o * inner, inner, projections, seed, signs.data());
    for (int64_t j = 0; j < dim; ++j) {
      const double* row = x + (o * dim + j) * inner;
      double* values = &result.values[static_cast<size_t>(j * projections)];
      double squares = 0.0;
      for (int64_t i = 0; i < inner; ++i) {
        double v = row[i];
        squares += v * v;
        const double* sign = &signs[static_cast<size_t>(i * projections)];
        for (int q = 0; q < projections; ++q) values[q] += sign[q] * v;
      }
      result.sum_squares[static_cast<size_t>(j)] += squares;
    }
  }
  return result;
}

// The slices of `x` (double, contiguous, viewed as [outer, dim, inner]). Positions are taken in
// chunks of whole `outer` rows so the sign matrix stays small for any tensor.
SliceProjections Project(const at::Tensor& x, int64_t outer, int64_t dim, int64_t inner,
                         int projections, uint64_t seed) {
  if (x.numel() <= kLoopElements) {
    return ProjectByLoop(x.data_ptr<double>(), outer, dim, inner, projections, seed);
  }
  SliceProjections result;
  result.count = dim;
  at::Tensor view = x.reshape({outer, dim, inner});
  at::Tensor values = at::zeros({dim, projections}, at::TensorOptions().dtype(at::kDouble));
  at::Tensor squares = at::zeros({dim}, at::TensorOptions().dtype(at::kDouble));
  constexpr int64_t kChunkPositions = int64_t{1} << 18;
  int64_t rows = std::max<int64_t>(1, kChunkPositions / std::max<int64_t>(inner, 1));
  for (int64_t o = 0; o < outer; o += rows) {
    int64_t n = std::min(rows, outer - o);
    at::Tensor part = view.narrow(0, o, n);                         // [n, dim, inner]
    at::Tensor signs = Signs(o * inner, n * inner, projections, seed)
                           .view({n, inner, projections});         // [n, inner, k]
    values.add_(at::tensordot(part, signs, {0, 2}, {0, 1}));        // [dim, k]
    squares.add_(part.square().sum(at::IntArrayRef{0, 2}));
  }
  values = values.contiguous();
  result.values.assign(values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
  result.sum_squares.assign(squares.data_ptr<double>(),
                            squares.data_ptr<double>() + squares.numel());
  return result;
}

}  // namespace

int64_t TensorFingerprint::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

const SliceProjections& TensorFingerprint::along(int64_t d) const {
  const SliceProjections& p = dims.at(static_cast<size_t>(d));
  return p.count == 0 && shape.at(static_cast<size_t>(d)) == 1 ? whole : p;
}

TensorFingerprint Fingerprint(const at::Tensor& value, const FingerprintOptions& options,
                              std::string name) {
  if (options.projections < 1 || options.projections > kernels::kMaxProjections) {
    throw std::invalid_argument("fingerprint: " + std::to_string(options.projections) +
                                " projections (1.." + std::to_string(kernels::kMaxProjections) +
                                ")");
  }
  TensorFingerprint fp;
  fp.name = std::move(name);
  fp.dtype = FromAten(value.scalar_type());
  fp.shape = value.sizes().vec();
  fp.projections = options.projections;
  at::Tensor x = value.detach().to(at::kCPU).to(at::kDouble).contiguous();
  int64_t numel = x.numel();
  fp.whole = Project(x, 1, 1, numel, options.projections, options.seed);
  fp.dims.resize(fp.shape.size());
  int64_t outer = 1;
  for (size_t d = 0; d < fp.shape.size(); ++d) {
    int64_t extent = fp.shape[d];
    int64_t inner = extent == 0 ? 0 : numel / std::max<int64_t>(outer * extent, 1);
    if (extent != 1) fp.dims[d] = Project(x, outer, extent, inner, options.projections,
                                          options.seed);
    outer *= extent;
  }
  return fp;
}

const TensorFingerprint* FingerprintTable::Find(int32_t rank, ir::TensorRef ref) const {
  if (rank < 0 || static_cast<size_t>(rank) >= ranks.size()) return nullptr;
  auto it = ranks[static_cast<size_t>(rank)].find(ref);
  return it == ranks[static_cast<size_t>(rank)].end() ? nullptr : &it->second;
}

std::function<void(int32_t, ir::TensorRef, const at::Tensor&)> FingerprintObserver(
    FingerprintTable* table, std::vector<const ir::Graph*> graphs,
    const FingerprintOptions& options) {
  table->projections = options.projections;
  table->ranks.resize(graphs.size());
  return [table, graphs = std::move(graphs), options](int32_t rank, ir::TensorRef ref,
                                                      const at::Tensor& value) {
    if (rank < 0 || static_cast<size_t>(rank) >= graphs.size()) return;
    if (value.is_complex()) return;  // not compared by fingerprints
    std::string name = graphs[static_cast<size_t>(rank)]->ValueName(ref);
    table->ranks[static_cast<size_t>(rank)][ref] = Fingerprint(value, options, std::move(name));
  };
}

}  // namespace gg::runtime
