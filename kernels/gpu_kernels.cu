// CUDA kernels of gpu_kernels.h. Each kernel runs in two launches: a grid-stride pass over the
// data in which every block reduces its threads' results in a fixed tree and writes one partial,
// and a small pass that combines the partials in block order (deterministic for a given grid).
#include "gpu_kernels.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gg::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorString(status));
  }
}

// Blocks that fill the device: 8 blocks of 256 threads per multiprocessor.
int64_t TargetBlocks() {
  int device = 0;
  int sms = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  return static_cast<int64_t>(sms) * 8;
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Element decoding with the type known at compile time.
template <ElementType kType>
__device__ __forceinline__ float Decode16(uint16_t bits) {
  if constexpr (kType == ElementType::kBFloat16) {
    return BFloat16ToFloat(bits);
  } else {
    return Float16ToFloat(bits);
  }
}

template <ElementType kType>
__device__ __forceinline__ float LoadOne(const void* data, int64_t i) {
  if constexpr (kType == ElementType::kFloat32) {
    return __ldg(static_cast<const float*>(data) + i);
  } else {
    return Decode16<kType>(__ldg(static_cast<const unsigned short*>(data) + i));
  }
}

// Loads the 8 elements starting at element i (16-byte aligned): one 16-byte load for the 16-bit
// types, two for fp32.
template <ElementType kType>
__device__ __forceinline__ void LoadGroup(const void* data, int64_t i, float (&x)[kGroup]) {
  if constexpr (kType == ElementType::kFloat32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(data) + i);
    float4 lo = __ldg(p), hi = __ldg(p + 1);
    x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w;
    x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
  } else {
    uint4 v = __ldg(reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(data) + i));
    const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      x[2 * w] = Decode16<kType>(static_cast<uint16_t>(words[w] & 0xFFFFu));
      x[2 * w + 1] = Decode16<kType>(static_cast<uint16_t>(words[w] >> 16));
    }
  }
}

// ---- fingerprint ------------------------------------------------------------------------------

// Loads group g of slice j (positions 8g..8g+7; zeros past the slice's end).
template <ElementType kType>
__device__ __forceinline__ void LoadSliceGroup(const void* data, const SliceLayout& layout,
                                               int64_t j, int64_t g, int64_t size,
                                               bool vector_ok, float (&x)[kGroup]) {
  int64_t p0 = g * kGroup;
  if (vector_ok && p0 + kGroup <= size) {
    LoadGroup<kType>(data, layout.ElementIndex(j, p0), x);
    return;
  }
#pragma unroll
  for (int e = 0; e < kGroup; ++e) {
    x[e] = p0 + e < size ? LoadOne<kType>(data, layout.ElementIndex(j, p0 + e)) : 0.0f;
  }
}

// Adds group g's signed sums to acc: per projection, the 8 products in float, in position order.
__device__ __forceinline__ void AccumulateGroup(const float (&x)[kGroup], uint64_t seed,
                                                int64_t g, int num_projections,
                                                double (&acc)[kMaxProjections]) {
  uint64_t bits = Hash64(seed, static_cast<uint64_t>(g));
#pragma unroll
  for (int k = 0; k < kMaxProjections; ++k) {
    if (k >= num_projections) break;
    float part = 0.0f;
#pragma unroll
    for (int e = 0; e < kGroup; ++e) part += ((bits >> (e * 8 + k)) & 1u) ? -x[e] : x[e];
    acc[k] += part;
  }
}

template <ElementType kType>
__global__ void __launch_bounds__(kThreads)
    FingerprintPartialsKernel(const void* data, SliceLayout layout, int num_projections,
                              uint64_t seed, bool vector_ok, double* partials) {
  __shared__ double warp_sums[kWarps][kMaxProjections];
  const int64_t size = layout.slice_size();
  const int64_t groups = (size + kGroup - 1) / kGroup;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t j = blockIdx.y; j < layout.dim; j += gridDim.y) {
    double acc[kMaxProjections] = {};
    // Two groups per iteration, both loaded before either is used (more loads in flight).
    for (int64_t g = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; g < groups;
         g += 2 * stride) {
      float x0[kGroup], x1[kGroup];
      LoadSliceGroup<kType>(data, layout, j, g, size, vector_ok, x0);
      bool second = g + stride < groups;
      if (second) LoadSliceGroup<kType>(data, layout, j, g + stride, size, vector_ok, x1);
      AccumulateGroup(x0, seed, g, num_projections, acc);
      if (second) AccumulateGroup(x1, seed, g + stride, num_projections, acc);
    }
    // Block reduction in a fixed tree: warp shuffles, then the first warp over the warps' sums.
#pragma unroll
    for (int k = 0; k < kMaxProjections; ++k) {
      if (k >= num_projections) break;
      double v = acc[k];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
      if (lane == 0) warp_sums[warp][k] = v;
    }
    __syncthreads();
    if (warp == 0) {
      for (int k = 0; k < num_projections; ++k) {
        double v = lane < kWarps ? warp_sums[lane][k] : 0.0;
        for (int offset = 16; offset > 0; offset /= 2) {
          v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
        }
        if (lane == 0) partials[(j * gridDim.x + blockIdx.x) * num_projections + k] = v;
      }
    }
    __syncthreads();
  }
}

// out[j * K + k] = sum over the blocks b of partials[(j * blocks + b) * K + k], in block order.
__global__ void FingerprintFinishKernel(const double* partials, int64_t blocks, int64_t count,
                                        int num_projections, double* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t j = i / num_projections, k = i % num_projections;
    double sum = 0.0;
    for (int64_t b = 0; b < blocks; ++b) sum += partials[(j * blocks + b) * num_projections + k];
    out[i] = sum;
  }
}

// ---- compare ----------------------------------------------------------------------------------

// One thread's (or block's) share of a compare; Merge is associative and commutative, so the
// result does not depend on how the elements were split.
struct ComparePartial {
  double max_abs_error;
  double max_abs_expected;
  int64_t worst_index;
  int64_t over_tolerance;
  int64_t first_over_index;
  int64_t nonfinite_mismatches;
  float expected_at_worst;
  float actual_at_worst;

  __device__ void Init() {
    max_abs_error = 0.0, max_abs_expected = 0.0;
    worst_index = -1, over_tolerance = 0, first_over_index = -1, nonfinite_mismatches = 0;
    expected_at_worst = 0.0f, actual_at_worst = 0.0f;
  }

  __device__ __forceinline__ void Add(float e, float a, int64_t i, double tol) {
    if (!IsNan(e) && !IsInf(e)) max_abs_expected = fmax(max_abs_expected, fabs(double(e)));
    PairVerdict v = JudgePair(e, a, tol);
    // Indices arrive in increasing order within a thread: strictly larger errors only.
    if (v.abs_error > max_abs_error) {
      max_abs_error = v.abs_error, worst_index = i;
      expected_at_worst = e, actual_at_worst = a;
    }
    if (v.over) {
      ++over_tolerance;
      if (first_over_index < 0) first_over_index = i;
    }
    if (v.nonfinite_mismatch) ++nonfinite_mismatches;
  }

  __device__ void Merge(const ComparePartial& o) {
    if (o.max_abs_error > max_abs_error ||
        (o.max_abs_error == max_abs_error && o.worst_index >= 0 &&
         (worst_index < 0 || o.worst_index < worst_index))) {
      max_abs_error = o.max_abs_error, worst_index = o.worst_index;
      expected_at_worst = o.expected_at_worst, actual_at_worst = o.actual_at_worst;
    }
    max_abs_expected = fmax(max_abs_expected, o.max_abs_expected);
    over_tolerance += o.over_tolerance;
    nonfinite_mismatches += o.nonfinite_mismatches;
    if (o.first_over_index >= 0 &&
        (first_over_index < 0 || o.first_over_index < first_over_index)) {
      first_over_index = o.first_over_index;
    }
  }
};

// Reduces every thread's `mine` into shared[0] (a fixed tree over the block).
__device__ void BlockMerge(ComparePartial (&shared)[kThreads], const ComparePartial& mine) {
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) shared[threadIdx.x].Merge(shared[threadIdx.x + s]);
    __syncthreads();
  }
}

template <ElementType kType>
__global__ void __launch_bounds__(kThreads)
    ComparePartialsKernel(const void* expected, const void* actual, int64_t numel, double tol,
                          bool vector_ok, ComparePartial* partials) {
  __shared__ ComparePartial shared[kThreads];
  ComparePartial mine;
  mine.Init();
  const int64_t groups = (numel + kGroup - 1) / kGroup;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; g < groups;
       g += stride) {
    const int64_t i0 = g * kGroup;
    float e[kGroup], a[kGroup];
    if (vector_ok && i0 + kGroup <= numel) {
      LoadGroup<kType>(expected, i0, e);
      LoadGroup<kType>(actual, i0, a);
#pragma unroll
      for (int x = 0; x < kGroup; ++x) mine.Add(e[x], a[x], i0 + x, tol);
    } else {
      for (int x = 0; x < kGroup && i0 + x < numel; ++x) {
        mine.Add(LoadOne<kType>(expected, i0 + x), LoadOne<kType>(actual, i0 + x), i0 + x, tol);
      }
    }
  }
  BlockMerge(shared, mine);
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

__global__ void __launch_bounds__(kThreads)
    CompareFinishKernel(const ComparePartial* partials, int64_t blocks, int64_t numel,
                        CompareResult* out) {
  __shared__ ComparePartial shared[kThreads];
  ComparePartial mine;
  mine.Init();
  for (int64_t b = threadIdx.x; b < blocks; b += kThreads) mine.Merge(partials[b]);
  BlockMerge(shared, mine);
  if (threadIdx.x == 0) {
    const ComparePartial& r = shared[0];
    CompareResult result;
    result.numel = numel;
    result.max_abs_error = r.max_abs_error;
    result.worst_index = r.worst_index;
    result.expected_at_worst = r.expected_at_worst;
    result.actual_at_worst = r.actual_at_worst;
    result.max_abs_expected = r.max_abs_expected;
    result.over_tolerance = r.over_tolerance;
    result.first_over_index = r.first_over_index;
    result.nonfinite_mismatches = r.nonfinite_mismatches;
    *out = result;
  }
}

}  // namespace

// ---- host side --------------------------------------------------------------------------------

DeviceWorkspace::~DeviceWorkspace() {
  if (data_ != nullptr) cudaFree(data_);
}

void* DeviceWorkspace::Reserve(size_t bytes) {
  if (bytes <= bytes_) return data_;
  if (data_ != nullptr) {
    // The previous buffer may still be read by launches on any stream of this workspace.
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    Check(cudaFree(data_), "cudaFree");
    data_ = nullptr;
    bytes_ = 0;
  }
  Check(cudaMalloc(&data_, bytes), "cudaMalloc (kernel workspace)");
  bytes_ = bytes;
  return data_;
}

void LaunchFingerprintSlices(const void* data, ElementType type, SliceLayout layout,
                             int num_projections, uint64_t seed, double* out,
                             DeviceWorkspace& workspace, cudaStream_t stream) {
  if (num_projections < 1 || num_projections > kMaxProjections) {
    throw std::invalid_argument("fingerprint: " + std::to_string(num_projections) +
                                " projections (1.." + std::to_string(kMaxProjections) + ")");
  }
  if (layout.outer < 0 || layout.dim < 0 || layout.inner < 0) {
    throw std::invalid_argument("fingerprint: negative extent in the slice layout");
  }
  if (layout.dim == 0) return;
  const int64_t groups = (layout.slice_size() + kGroup - 1) / kGroup;
  // A group is one aligned 16-byte run when rows hold whole groups, or the tensor is one slice.
  bool vector_ok = Aligned16(data) &&
                   (layout.inner % kGroup == 0 || (layout.outer == 1 && layout.dim == 1));
  int64_t slices_per_launch = layout.dim < 65535 ? layout.dim : 65535;
  int64_t blocks_needed = (groups + kThreads - 1) / kThreads;
  int64_t blocks_per_slice = TargetBlocks() / slices_per_launch;
  if (blocks_per_slice < 1) blocks_per_slice = 1;
  if (blocks_per_slice > blocks_needed) blocks_per_slice = blocks_needed > 0 ? blocks_needed : 1;
  double* partials = static_cast<double*>(
      workspace.Reserve(sizeof(double) * layout.dim * blocks_per_slice * num_projections));
  dim3 grid(static_cast<unsigned>(blocks_per_slice), static_cast<unsigned>(slices_per_launch));
  switch (type) {
    case ElementType::kFloat32:
      FingerprintPartialsKernel<ElementType::kFloat32><<<grid, kThreads, 0, stream>>>(
          data, layout, num_projections, seed, vector_ok, partials);
      break;
    case ElementType::kBFloat16:
      FingerprintPartialsKernel<ElementType::kBFloat16><<<grid, kThreads, 0, stream>>>(
          data, layout, num_projections, seed, vector_ok, partials);
      break;
    case ElementType::kFloat16:
      FingerprintPartialsKernel<ElementType::kFloat16><<<grid, kThreads, 0, stream>>>(
          data, layout, num_projections, seed, vector_ok, partials);
      break;
  }
  Check(cudaGetLastError(), "fingerprint kernel launch");
  int64_t count = layout.dim * num_projections;
  int64_t finish_blocks = (count + kThreads - 1) / kThreads;
  if (finish_blocks > 65535) finish_blocks = 65535;
  FingerprintFinishKernel<<<static_cast<unsigned>(finish_blocks), kThreads, 0, stream>>>(
      partials, blocks_per_slice, count, num_projections, out);
  Check(cudaGetLastError(), "fingerprint finish launch");
}

void LaunchCompare(const void* expected, const void* actual, ElementType type, int64_t numel,
                   double tol, CompareResult* out, DeviceWorkspace& workspace,
                   cudaStream_t stream) {
  if (numel < 0) throw std::invalid_argument("compare: negative element count");
  if (!(tol >= 0)) throw std::invalid_argument("compare: tolerance must be >= 0");
  const int64_t groups = (numel + kGroup - 1) / kGroup;
  int64_t blocks = (groups + kThreads - 1) / kThreads;
  int64_t target = TargetBlocks();
  if (blocks > target) blocks = target;
  if (blocks < 1) blocks = 1;
  bool vector_ok = Aligned16(expected) && Aligned16(actual);
  auto* partials =
      static_cast<ComparePartial*>(workspace.Reserve(sizeof(ComparePartial) * blocks));
  switch (type) {
    case ElementType::kFloat32:
      ComparePartialsKernel<ElementType::kFloat32><<<static_cast<unsigned>(blocks), kThreads, 0,
                                                     stream>>>(expected, actual, numel, tol,
                                                               vector_ok, partials);
      break;
    case ElementType::kBFloat16:
      ComparePartialsKernel<ElementType::kBFloat16><<<static_cast<unsigned>(blocks), kThreads, 0,
                                                      stream>>>(expected, actual, numel, tol,
                                                                vector_ok, partials);
      break;
    case ElementType::kFloat16:
      ComparePartialsKernel<ElementType::kFloat16><<<static_cast<unsigned>(blocks), kThreads, 0,
                                                     stream>>>(expected, actual, numel, tol,
                                                               vector_ok, partials);
      break;
  }
  Check(cudaGetLastError(), "compare kernel launch");
  CompareFinishKernel<<<1, kThreads, 0, stream>>>(partials, blocks, numel, out);
  Check(cudaGetLastError(), "compare finish launch");
}

std::vector<double> FingerprintSlicesOnDevice(const void* data, ElementType type,
                                              SliceLayout layout, int num_projections,
                                              uint64_t seed, cudaStream_t stream) {
  DeviceWorkspace workspace;
  std::vector<double> result(static_cast<size_t>(layout.dim > 0 ? layout.dim : 0) *
                             static_cast<size_t>(num_projections > 0 ? num_projections : 0));
  double* out = nullptr;
  if (!result.empty()) Check(cudaMalloc(&out, sizeof(double) * result.size()), "cudaMalloc");
  try {
    LaunchFingerprintSlices(data, type, layout, num_projections, seed, out, workspace, stream);
    if (!result.empty()) {
      Check(cudaMemcpyAsync(result.data(), out, sizeof(double) * result.size(),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync");
    }
    Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } catch (...) {
    cudaFree(out);
    throw;
  }
  cudaFree(out);
  return result;
}

CompareResult CompareOnDevice(const void* expected, const void* actual, ElementType type,
                              int64_t numel, double tol, cudaStream_t stream) {
  DeviceWorkspace workspace;
  CompareResult result;
  CompareResult* out = nullptr;
  Check(cudaMalloc(&out, sizeof(CompareResult)), "cudaMalloc");
  try {
    LaunchCompare(expected, actual, type, numel, tol, out, workspace, stream);
    Check(cudaMemcpyAsync(&result, out, sizeof(CompareResult), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } catch (...) {
    cudaFree(out);
    throw;
  }
  cudaFree(out);
  return result;
}

}  // namespace gg::kernels
