// Achieved bandwidth of the GPU kernels (kernels/gpu_kernels.h) against a device-to-device
// cudaMemcpy of the same bytes, timed with CUDA events: the fingerprint of a whole tensor and of
// its rows (slices along dim 0), and the compare of two tensors, in fp32, bf16 and fp16.
// Prints one line per case (GB/s, and the fraction of the copy's GB/s) and exits 0; without a
// CUDA device it says so and exits 0 (nothing to measure).
//   gg_gpu_kernels_bandwidth [MiB per tensor, default 1024] [repetitions, default 20]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/device.h"
#include "gpu_kernels.h"

namespace {

using gg::cuda::CheckCuda;
using gg::kernels::ElementType;

// Milliseconds per call of `body` (after two warm-up calls), over `reps` calls.
template <typename F>
double TimeMs(int reps, cudaStream_t stream, F&& body) {
  body();
  body();
  cudaEvent_t start, stop;
  CheckCuda(cudaEventCreate(&start), "cudaEventCreate");
  CheckCuda(cudaEventCreate(&stop), "cudaEventCreate");
  CheckCuda(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < reps; ++i) body();
  CheckCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
  CheckCuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  CheckCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}


}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  if (gg::cuda::DeviceCount() == 0) {
    std::printf("gpu_kernels_bandwidth: skipped (%s)\n", gg::cuda::NoDeviceReason().c_str());
    return 0;
  }
  gg::cuda::SelectDeviceForLocalRank(gg::cuda::LocalRankFromEnvironment());
  cudaDeviceProp prop{};
  CheckCuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const size_t bytes = mib << 20;
  std::printf("device: %s, %d SMs, L2 %d MiB; %zu MiB per tensor, %d repetitions\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, mib, reps);

  gg::cuda::Stream stream;
  gg::cuda::DeviceBuffer a(bytes), b(bytes), c(bytes);
  // Random-looking finite values of every type: small integers are finite in all three formats.
  {
    std::vector<uint16_t> pattern(bytes / 2);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint16_t>(0x3C00 + i % 977);
    a.CopyFromHost(pattern.data(), bytes);
    b.CopyFromHost(pattern.data(), bytes);
  }
  // The copy reads and writes `bytes`: 2 * bytes moved.
  double copy_ms = TimeMs(reps, stream.get(), [&] {
    CheckCuda(cudaMemcpyAsync(c.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()),
              "cudaMemcpyAsync");
  });
  double copy_gbs = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e6);
  std::printf("%-34s %9.3f ms %8.1f GB/s  1.000 of copy\n", "cudaMemcpy D2D (read+write)",
              copy_ms, copy_gbs);

  gg::kernels::DeviceWorkspace workspace;
  gg::cuda::DeviceBuffer out(sizeof(double) * 8 * 1048576 + sizeof(gg::kernels::CompareResult));
  for (ElementType type :
       {ElementType::kFloat32, ElementType::kBFloat16, ElementType::kFloat16}) {
    const int64_t numel = static_cast<int64_t>(bytes) / gg::kernels::ElementSize(type);
    const std::string name = gg::kernels::ElementTypeName(type);
    auto report = [&](const std::string& what, double ms, double moved) {
      double gbs = moved / (ms * 1e6);
      std::printf("%-34s %9.3f ms %8.1f GB/s  %.3f of copy\n", what.c_str(), ms, gbs,
                  gbs / copy_gbs);
    };
    for (int k : {4, 8}) {
      double ms = TimeMs(reps, stream.get(), [&] {
        gg::kernels::LaunchFingerprintSlices(a.data(), type, {1, 1, numel}, k, 1, out.as<double>(),
                                             workspace, stream.get());
      });
      report("fingerprint " + name + " whole k=" + std::to_string(k), ms,
             static_cast<double>(bytes));
    }
    const int64_t rows = 8192;  // slices along dim 0 of [rows, numel / rows]
    double ms = TimeMs(reps, stream.get(), [&] {
      gg::kernels::LaunchFingerprintSlices(a.data(), type, {1, rows, numel / rows}, 4, 1,
                                           out.as<double>(), workspace, stream.get());
    });
    report("fingerprint " + name + " 8192 rows k=4", ms, static_cast<double>(bytes));
    ms = TimeMs(reps, stream.get(), [&] {
      gg::kernels::LaunchCompare(
          a.data(), b.data(), type, numel, 0.0,
          reinterpret_cast<gg::kernels::CompareResult*>(out.as<double>() + 8 * 1048576),
          workspace, stream.get());
    });
    report("compare " + name + " (reads 2 tensors)", ms, 2.0 * static_cast<double>(bytes));
  }
  stream.Synchronize();
  return 0;
}
