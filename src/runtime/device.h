// Device: where a numeric command runs (`--device cpu|cuda[:N]`). LibTorch's CUDA backend
// (libtorch_cuda.so beside libtorch_cpu.so) is loaded the first time CUDA is asked for, so CPU
// runs never load the CUDA libraries and a build links against the CPU library only.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace gg::runtime {

// Loads LibTorch's CUDA backend once and returns the number of usable CUDA devices: 0 when the
// backend cannot be loaded, there is no driver or no device (never throws).
int CudaDeviceCount();
// Why CudaDeviceCount() is 0 ("no CUDA device: ..."), or "" when there are devices.
std::string NoCudaReason();

// The address of `name` in LibTorch's CUDA backend or a library it loaded (NCCL, the CUDA
// runtime), nullptr when there is no such symbol or the backend did not load. The NCCL collective
// backend calls the NCCL that LibTorch loaded this way: linking another NCCL into the binary would
// make the dynamic linker hand LibTorch that one (same soname), which may lack its symbols.
void* CudaBackendSymbol(const char* name);

// The process's rank among the processes of its node, from the launcher's environment
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, LOCAL_RANK); -1 when none is set.
int LocalRankFromEnvironment();

// The device named by `text`: "cpu", "cuda" or "cuda:N". A plain "cuda" is device
// local_rank % CudaDeviceCount() (device 0 for a negative local rank), so the processes of a
// distributed run on one node spread over its GPUs. Throws std::invalid_argument for a malformed
// name, a CUDA device when there is none (with NoCudaReason()) or an index out of range.
at::Device ResolveDevice(const std::string& text, int local_rank = -1);

// "cpu", "cuda:0", ...: how reports name a device.
std::string DeviceName(at::Device device);

}  // namespace gg::runtime
