#include "runtime/device.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

#include "util/local_rank.h"

namespace gg::runtime {
namespace {

struct CudaBackend {
  int devices = 0;
  std::string reason;
  void* handle = nullptr;  // libtorch_cuda.so (dlsym searches its dependencies too)
};

// libtorch_cuda.so registers the CUDA kernels and the CUDA hooks in its static initializers; it
// lies beside libtorch_cpu.so, which dladdr finds from one of its functions.
CudaBackend LoadCudaBackend() {
  CudaBackend backend;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::detail::getCUDAHooks), &info) == 0 ||
      info.dli_fname == nullptr) {
    backend.reason = "no CUDA device: cannot locate LibTorch's libraries";
    return backend;
  }
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  std::string path = dir + "libtorch_cuda.so";
  backend.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (backend.handle == nullptr) {
    const char* error = dlerror();
    backend.reason = "no CUDA device: LibTorch's CUDA backend did not load (" +
                     std::string(error ? error : path) + ")";
    return backend;
  }
  try {
    const at::CUDAHooksInterface& hooks = at::detail::getCUDAHooks();
    backend.devices = hooks.hasCUDA() ? static_cast<int>(hooks.deviceCount()) : 0;
  } catch (const std::exception& e) {
    backend.devices = 0;
    backend.reason = std::string("no CUDA device: ") + e.what();
    return backend;
  }
  if (backend.devices == 0) {
    backend.reason = "no CUDA device: the CUDA driver reports none on this machine";
  }
  return backend;
}

const CudaBackend& Backend() {
  static const CudaBackend backend = LoadCudaBackend();
  return backend;
}

}  // namespace

int CudaDeviceCount() { return Backend().devices; }

std::string NoCudaReason() { return Backend().reason; }

void* CudaBackendSymbol(const char* name) {
  void* handle = Backend().handle;
  return handle == nullptr ? nullptr : dlsym(handle, name);
}

int LocalRankFromEnvironment() { return util::LocalRankFromEnvironment(); }

at::Device ResolveDevice(const std::string& text, int local_rank) {
  if (text == "cpu") return at::kCPU;
  if (text.rfind("cuda", 0) != 0) {
    throw std::invalid_argument("unknown device '" + text + "' (cpu, cuda or cuda:N)");
  }
  int index = -1;
  if (text.size() > 4) {
    std::string digits = text.substr(4);
    if (digits.size() < 2 || digits[0] != ':' ||
        digits.find_first_not_of("0123456789", 1) != std::string::npos || digits.size() > 6) {
      throw std::invalid_argument("unknown device '" + text + "' (cpu, cuda or cuda:N)");
    }
    index = std::stoi(digits.substr(1));
  }
  int count = CudaDeviceCount();
  if (count == 0) throw std::invalid_argument("--device " + text + ": " + NoCudaReason());
  if (index >= count) {
    throw std::invalid_argument("--device " + text + ": this machine has " + std::to_string(count) +
                                " CUDA device(s)");
  }
  if (index < 0) index = local_rank < 0 ? 0 : local_rank % count;
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string DeviceName(at::Device device) { return device.str(); }

}  // namespace gg::runtime
