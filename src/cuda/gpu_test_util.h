// Helpers of the GPU tests (gg_gpu_tests, ctest label gpu): every test that needs a CUDA device
// starts with GG_SKIP_WITHOUT_CUDA(), which skips it with the reason when there is none, so the
// suite passes (as skipped) on machines without a GPU. Also the MPI world the test main set up
// when the binary runs under mpirun.
#pragma once

#include <gtest/gtest.h>

#include "cuda/device.h"

#if GG_HAVE_MPI
#include <mpi.h>
#endif

#define GG_SKIP_WITHOUT_CUDA()                                  \
  do {                                                          \
    if (::gg::cuda::DeviceCount() == 0) {                       \
      GTEST_SKIP() << ::gg::cuda::NoDeviceReason();             \
    }                                                           \
    ::gg::cuda::SelectDeviceForLocalRank(                       \
        ::gg::cuda::LocalRankFromEnvironment());                \
  } while (0)

namespace gg::cuda {

// Whether the test main initialized MPI (the binary runs under mpirun), and the world's size.
bool MpiWorldActive();
int MpiWorldSize();
int MpiWorldRank();

}  // namespace gg::cuda
