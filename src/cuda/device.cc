#include "cuda/device.h"

#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "util/local_rank.h"

namespace gg::cuda {

void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorString(status));
  }
}

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a missing driver
    return 0;
  }
  return count;
}

std::string NoDeviceReason() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device: the driver reports none";
  return "";
}

int LocalRankFromEnvironment() { return util::LocalRankFromEnvironment(); }

int SelectDeviceForLocalRank(int local_rank) {
  int count = DeviceCount();
  if (count == 0) throw std::runtime_error(NoDeviceReason());
  int device = local_rank < 0 ? 0 : local_rank % count;
  CheckCuda(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

Stream::Stream() {
  CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Stream::Synchronize() const {
  CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CheckCuda(cudaMalloc(&data_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() { Release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::Release() noexcept {
  if (data_ != nullptr) cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::CopyFromHost(const void* host, size_t bytes) {
  if (bytes > bytes_) throw std::invalid_argument("DeviceBuffer: copy larger than the buffer");
  if (bytes > 0) CheckCuda(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
}

void DeviceBuffer::CopyToHost(void* host, size_t bytes) const {
  if (bytes > bytes_) throw std::invalid_argument("DeviceBuffer: copy larger than the buffer");
  if (bytes > 0) CheckCuda(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

}  // namespace gg::cuda
