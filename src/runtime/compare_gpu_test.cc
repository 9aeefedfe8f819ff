// CompareTensors on CUDA tensors (gg_runtime_gpu_tests, ctest label gpu) against the same
// comparison on the CPU: the fused compare kernel (CUDA builds) must give the ATen path's figures
// for float32, bf16 and fp16, with and without elements beyond the tolerance, with NaNs in both
// tensors and with a NaN on one side only (the ATen path then). Skipped without a CUDA device.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/compare.h"
#include "runtime/device.h"

namespace gg::runtime {
namespace {

void ExpectSameFigures(const Comparison& gpu, const Comparison& cpu) {
  EXPECT_EQ(gpu.holds, cpu.holds);
  EXPECT_EQ(gpu.problem, cpu.problem);
  EXPECT_EQ(gpu.elements, cpu.elements);
  EXPECT_EQ(gpu.out_of_tolerance, cpu.out_of_tolerance);
  EXPECT_EQ(gpu.nan_mismatches, cpu.nan_mismatches);
  EXPECT_EQ(gpu.worst_index, cpu.worst_index);
  EXPECT_EQ(gpu.tolerance, cpu.tolerance);
  // 16-bit differences are taken in float on the CPU and in double by the kernel: equal for
  // values of like magnitude, within float rounding otherwise.
  auto near = [](double a, double b) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(a - b) <= 1e-6 * std::fmax(std::fabs(a), std::fabs(b));
  };
  EXPECT_TRUE(near(gpu.max_abs_error, cpu.max_abs_error))
      << gpu.max_abs_error << " vs " << cpu.max_abs_error;
  EXPECT_TRUE(near(gpu.max_rel_error, cpu.max_rel_error))
      << gpu.max_rel_error << " vs " << cpu.max_rel_error;
  EXPECT_EQ(gpu.expected_scale, cpu.expected_scale);
  EXPECT_EQ(gpu.expected_at_worst, cpu.expected_at_worst);
  EXPECT_EQ(gpu.actual_at_worst, cpu.actual_at_worst);
}

TEST(CompareCuda, FusedKernelGivesTheCpuFigures) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason();
  const at::Device cuda(at::kCUDA, 0);
  at::Generator gen = at::detail::createCPUGenerator(11);
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kHalf}) {
    // Odd sizes: the kernel's vector loads and the scalar tail both take part.
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{1}, {7, 13}, {3, 1000, 9}, {1 << 20}}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " numel " +
                   std::to_string(at::ones(shape).numel()));
      at::Tensor expected = at::randn(shape, gen, at::kDouble).to(dtype);
      at::Tensor noise = at::randn(shape, gen, at::kDouble).mul(1e-3);
      at::Tensor actual = expected.to(at::kDouble).add(noise).to(dtype);
      at::Tensor nan_both = expected.clone(), nan_both_actual = actual.clone();
      nan_both.reshape({-1})[0].fill_(NAN);
      nan_both_actual.reshape({-1})[0].fill_(NAN);
      at::Tensor nan_one = actual.clone();
      nan_one.reshape({-1})[nan_one.numel() - 1].fill_(NAN);
      struct Pair {
        const char* what;
        at::Tensor expected, actual;
      };
      for (const Pair& p :
           {Pair{"equal", expected, expected.clone()}, Pair{"noisy", expected, actual},
            Pair{"nan in both", nan_both, nan_both_actual},
            Pair{"nan on one side", expected, nan_one}}) {
        for (double tolerance : {0.0, 2e-3, 1.0}) {
          SCOPED_TRACE(std::string(p.what) + " tolerance " + std::to_string(tolerance));
          at::Tensor e = p.expected.to(cuda), a = p.actual.to(cuda);
#if GG_GPU_KERNELS
          EXPECT_TRUE(FusedCompareApplies(e, a));
#endif
          ExpectSameFigures(CompareTensors(e, a, tolerance),
                            CompareTensors(p.expected, p.actual, tolerance));
        }
      }
    }
  }
}

TEST(CompareCuda, OtherDtypesAndDevicesUseATen) {
  at::Tensor cpu = at::ones({4});
  EXPECT_FALSE(FusedCompareApplies(cpu, cpu));
  if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason();
  at::Tensor d = at::ones({4}, at::kDouble).to(at::Device(at::kCUDA, 0));
  EXPECT_FALSE(FusedCompareApplies(d, d));
  at::Tensor f = d.to(at::kFloat);
  EXPECT_FALSE(FusedCompareApplies(f, f.cpu()));
  EXPECT_FALSE(FusedCompareApplies(f, f.to(at::kHalf)));
}

}  // namespace
}  // namespace gg::runtime
