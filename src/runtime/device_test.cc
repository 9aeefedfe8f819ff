#include "runtime/device.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gg::runtime {
namespace {

// The message of the std::invalid_argument that ResolveDevice throws, or "" when it does not.
std::string Refusal(const std::string& text) {
  try {
    ResolveDevice(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Device, CpuIsTheCpu) {
  EXPECT_EQ(ResolveDevice("cpu"), at::Device(at::kCPU));
  EXPECT_EQ(DeviceName(ResolveDevice("cpu")), "cpu");
}

TEST(Device, MalformedNamesAreRefused) {
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:x", "cuda0", "cuda:-1", "cpu:0"}) {
    std::string why = Refusal(bad);
    EXPECT_NE(why.find("unknown device"), std::string::npos) << bad << ": '" << why << "'";
  }
}

// Without a CUDA device (this machine, CI) asking for one says why; with one, "cuda" is a CUDA
// device and an index past the last device is refused.
TEST(Device, CudaIsRefusedWithoutADeviceAndIndexedWithOne) {
  if (CudaDeviceCount() == 0) {
    EXPECT_NE(NoCudaReason().find("no CUDA device"), std::string::npos) << NoCudaReason();
    EXPECT_NE(Refusal("cuda").find("no CUDA device"), std::string::npos) << Refusal("cuda");
    EXPECT_NE(Refusal("cuda:0").find("no CUDA device"), std::string::npos);
    return;
  }
  EXPECT_TRUE(NoCudaReason().empty());
  EXPECT_TRUE(ResolveDevice("cuda").is_cuda());
  EXPECT_EQ(ResolveDevice("cuda", 2 * CudaDeviceCount() + 1).index(), 1 % CudaDeviceCount());
  EXPECT_NE(Refusal("cuda:" + std::to_string(CudaDeviceCount())).find("CUDA device(s)"),
            std::string::npos);
}

}  // namespace
}  // namespace gg::runtime
