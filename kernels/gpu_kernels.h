// The checker's hot paths as CUDA kernels: tensor fingerprints (±1 random projections of every
// slice along a dimension) and the fused compare of two tensors, over fp32/bf16/fp16 device
// buffers. The semantics are kernel_defs.h's, the CPU reference is kernels_reference.h: the
// compare agrees with it bit for bit, the fingerprint up to the order of the double sums.
//
// Written for bandwidth: 16-byte loads (one hash and one load per 8 elements), grid-stride loops
// over a grid sized to the device, block reductions in a fixed order and a second small kernel
// that combines the blocks' partials, so the result is deterministic for a device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/kernel_defs.h"

namespace gg::kernels {

// Device scratch memory for the blocks' partial results, grown on demand with cudaMalloc and
// freed with cudaFree. One workspace per stream (a launch may still read it after returning).
class DeviceWorkspace {
 public:
  DeviceWorkspace() = default;
  ~DeviceWorkspace();
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;
  void* Reserve(size_t bytes);  // throws std::runtime_error when cudaMalloc fails

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Launches the fingerprint of `data` (a device buffer of layout.numel() elements) on `stream`;
// `out` is a device buffer of layout.dim * num_projections doubles (slice-major). Throws
// std::invalid_argument for bad arguments (as the reference) and std::runtime_error for CUDA
// errors.
void LaunchFingerprintSlices(const void* data, ElementType type, SliceLayout layout,
                             int num_projections, uint64_t seed, double* out,
                             DeviceWorkspace& workspace, cudaStream_t stream);

// Launches the compare of `actual` against `expected` (device buffers of numel elements);
// `out` is one CompareResult in device memory.
void LaunchCompare(const void* expected, const void* actual, ElementType type, int64_t numel,
                   double tol, CompareResult* out, DeviceWorkspace& workspace,
                   cudaStream_t stream);

// Synchronous conveniences: launch on `stream`, copy the result back, wait.
std::vector<double> FingerprintSlicesOnDevice(const void* data, ElementType type,
                                              SliceLayout layout, int num_projections,
                                              uint64_t seed, cudaStream_t stream = nullptr);
CompareResult CompareOnDevice(const void* expected, const void* actual, ElementType type,
                              int64_t numel, double tol, cudaStream_t stream = nullptr);

}  // namespace gg::kernels
