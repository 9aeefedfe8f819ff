// The CUDA kernels against their CPU reference (kernels_reference.h) on random data: every dtype,
// uneven sizes, misaligned starts (the scalar paths and the tails), slices with and without
// whole 8-element groups per row. Skipped without a CUDA device.
#include "gpu_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda/device.h"
#include "cuda/gpu_test_util.h"
#include "reference/kernels_reference.h"

namespace gg::kernels {
namespace {

constexpr ElementType kTypes[] = {ElementType::kFloat32, ElementType::kBFloat16,
                                  ElementType::kFloat16};

// The values encoded as `type` (bytes, rounded to nearest even for the 16-bit types).
std::vector<uint8_t> Encode(const std::vector<float>& values, ElementType type) {
  size_t size = static_cast<size_t>(ElementSize(type));
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == ElementType::kFloat32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      uint16_t h = type == ElementType::kBFloat16 ? FloatToBFloat16(values[i])
                                                  : FloatToFloat16(values[i]);
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
  return bytes;
}

std::vector<float> Normal(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Host bytes on the device at an element offset (0: the cudaMalloc alignment).
struct OnDevice {
  cuda::DeviceBuffer buffer;
  const void* data;
  OnDevice(const std::vector<uint8_t>& host, size_t offset_bytes)
      : buffer(host.size() + offset_bytes + 16) {
    std::vector<uint8_t> padded(offset_bytes, 0);
    padded.insert(padded.end(), host.begin(), host.end());
    buffer.CopyFromHost(padded.data(), padded.size());
    data = static_cast<const uint8_t*>(buffer.data()) + offset_bytes;
  }
};

void ExpectFingerprintsAgree(const std::vector<float>& values, ElementType type,
                             SliceLayout layout, int k, uint64_t seed, size_t offset) {
  std::vector<uint8_t> host = Encode(values, type);
  OnDevice device(host, offset * static_cast<size_t>(ElementSize(type)));
  std::vector<double> want = FingerprintSlicesReference(host.data(), type, layout, k, seed);
  std::vector<double> got = FingerprintSlicesOnDevice(device.data, type, layout, k, seed);
  ASSERT_EQ(got.size(), want.size());
  double l1 = 0;
  for (size_t i = 0; i < values.size(); ++i) l1 += std::fabs(LoadElement(host.data(), type, i));
  for (size_t i = 0; i < want.size(); ++i) {
    // Same float group sums; the double sums differ only in order.
    ASSERT_NEAR(got[i], want[i], 1e-12 * (1.0 + l1)) << "value " << i;
  }
}

TEST(GpuFingerprint, WholeTensorsOfUnevenSizesAndOffsets) {
  GG_SKIP_WITHOUT_CUDA();
  for (ElementType type : kTypes) {
    for (int64_t n : {1, 7, 8, 9, 1000, 4097, (1 << 20) + 3}) {
      for (size_t offset : {0, 1, 3}) {
        SCOPED_TRACE(std::string(ElementTypeName(type)) + " n=" + std::to_string(n) +
                     " offset=" + std::to_string(offset));
        ExpectFingerprintsAgree(Normal(static_cast<size_t>(n), static_cast<uint32_t>(n)), type,
                                {1, 1, n}, 4, 11, offset);
      }
    }
  }
}

TEST(GpuFingerprint, PerSliceLayouts) {
  GG_SKIP_WITHOUT_CUDA();
  const SliceLayout layouts[] = {
      {1, 300, 64},    // rows of a matrix: vectorized
      {3, 17, 16},     // a middle dimension, whole groups per row
      {5, 12, 9},      // inner not a multiple of 8: scalar loads
      {64, 40, 1},     // the last dimension
      {1, 70000, 8},   // more slices than a grid's y extent
  };
  for (ElementType type : kTypes) {
    for (const SliceLayout& layout : layouts) {
      for (int k : {1, 3, 8}) {
        SCOPED_TRACE(std::string(ElementTypeName(type)) + " [" + std::to_string(layout.outer) +
                     "," + std::to_string(layout.dim) + "," + std::to_string(layout.inner) +
                     "] k=" + std::to_string(k));
        ExpectFingerprintsAgree(Normal(static_cast<size_t>(layout.numel()), 5), type, layout, k,
                                99, 0);
      }
    }
  }
}

TEST(GpuFingerprint, RejectsBadArguments) {
  GG_SKIP_WITHOUT_CUDA();
  float x = 1;
  EXPECT_THROW(FingerprintSlicesOnDevice(&x, ElementType::kFloat32, {1, 1, 1}, 9, 0),
               std::invalid_argument);
}

void ExpectComparesAgree(const std::vector<float>& expected, const std::vector<float>& actual,
                         ElementType type, double tol, size_t offset) {
  std::vector<uint8_t> e = Encode(expected, type), a = Encode(actual, type);
  size_t shift = offset * static_cast<size_t>(ElementSize(type));
  OnDevice de(e, shift), da(a, shift);
  int64_t n = static_cast<int64_t>(expected.size());
  CompareResult want = CompareReference(e.data(), a.data(), type, n, tol);
  CompareResult got = CompareOnDevice(de.data, da.data, type, n, tol);
  // Exact: the differences are exact in double, and max/min/counts do not depend on order.
  EXPECT_EQ(got.numel, want.numel);
  EXPECT_EQ(got.max_abs_error, want.max_abs_error);
  EXPECT_EQ(got.worst_index, want.worst_index);
  EXPECT_EQ(got.expected_at_worst, want.expected_at_worst);
  EXPECT_EQ(got.actual_at_worst, want.actual_at_worst);
  EXPECT_EQ(got.max_abs_expected, want.max_abs_expected);
  EXPECT_EQ(got.over_tolerance, want.over_tolerance);
  EXPECT_EQ(got.first_over_index, want.first_over_index);
  EXPECT_EQ(got.nonfinite_mismatches, want.nonfinite_mismatches);
}

TEST(GpuCompare, RandomPerturbationsEveryTypeSizeAndOffset) {
  GG_SKIP_WITHOUT_CUDA();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ElementType type : kTypes) {
    for (int64_t n : {1, 7, 9, 1000, 4097, (1 << 21) + 5}) {
      for (size_t offset : {0, 1}) {
        SCOPED_TRACE(std::string(ElementTypeName(type)) + " n=" + std::to_string(n) +
                     " offset=" + std::to_string(offset));
        std::vector<float> e = Normal(static_cast<size_t>(n), 1);
        std::vector<float> a = e;
        std::vector<float> noise = Normal(static_cast<size_t>(n), 2, 1e-2f);
        std::mt19937 gen(3);
        for (int64_t i = 0; i < n; ++i) {
          if (gen() % 16 == 0) a[i] += noise[i];  // some elements off, some within tolerance
        }
        if (n > 100) {
          e[17] = nan;                 // NaN vs a number: a mismatch
          a[23] = inf;                 // inf vs a number: a mismatch
          e[40] = a[40] = -inf;        // the same infinity: agrees
          e[41] = a[41] = nan;         // NaN vs NaN: agrees
          a[n - 1] = e[n - 1] + 0.5f;  // the worst difference in the tail
        }
        ExpectComparesAgree(e, a, type, 5e-3, offset);
      }
    }
  }
}

TEST(GpuCompare, TiesPickTheFirstIndex) {
  GG_SKIP_WITHOUT_CUDA();
  std::vector<float> e(100000, 1.0f), a(100000, 1.0f);
  for (int i : {99999, 54321, 777, 123}) a[i] = 3.0f;
  std::vector<uint8_t> eb = Encode(e, ElementType::kFloat32), ab = Encode(a, ElementType::kFloat32);
  OnDevice de(eb, 0), da(ab, 0);
  CompareResult got = CompareOnDevice(de.data, da.data, ElementType::kFloat32, 100000, 0.0);
  EXPECT_EQ(got.worst_index, 123);
  EXPECT_EQ(got.first_over_index, 123);
  EXPECT_EQ(got.over_tolerance, 4);
  EXPECT_EQ(got.max_abs_error, 2.0);
}

}  // namespace
}  // namespace gg::kernels
