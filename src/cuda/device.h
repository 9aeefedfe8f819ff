// CUDA devices for GraphGuard's distributed mode: which GPU a process uses (its local rank under
// mpirun), a stream per rank, and device memory taken with plain cudaMalloc/cudaFree (no managed
// memory, no caching allocator) behind RAII owners.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gg::cuda {

// Throws std::runtime_error naming `what` when status is not cudaSuccess.
void CheckCuda(cudaError_t status, const char* what);

// The number of usable CUDA devices; 0 when there is none or no driver (never throws).
int DeviceCount();
// Why DeviceCount() is 0 ("no CUDA device: ..."), or "" when there are devices.
std::string NoDeviceReason();

// The process's rank among the processes of its node, from the launcher's environment
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, LOCAL_RANK); -1 when none is set.
int LocalRankFromEnvironment();

// Makes device local_rank % DeviceCount() current for this thread and returns it (device 0 for a
// negative local rank). Throws std::runtime_error when there is no device.
int SelectDeviceForLocalRank(int local_rank);

// A non-blocking stream on the current device, destroyed with its owner.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void Synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

// Device memory from cudaMalloc, freed by cudaFree with its owner (movable, not copyable).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // Synchronous copies of the first `bytes` bytes (at most bytes()).
  void CopyFromHost(const void* host, size_t bytes);
  void CopyToHost(void* host, size_t bytes) const;

 private:
  void Release() noexcept;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace gg::cuda
