// main() of gg_gpu_tests: initializes MPI when the binary was started by mpirun (so the NCCL
// tests can span processes), runs the tests, and reports only rank 0's results on the terminal.
#include <cstdlib>

#include "cuda/gpu_test_util.h"

namespace gg::cuda {
namespace {
bool mpi_active = false;
int world_size = 1;
int world_rank = 0;
}  // namespace

bool MpiWorldActive() { return mpi_active; }
int MpiWorldSize() { return world_size; }
int MpiWorldRank() { return world_rank; }

}  // namespace gg::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#if GG_HAVE_MPI
  // Only under a launcher: a plain run (ctest, the test discovery) never starts MPI.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr) {
    MPI_Init(&argc, &argv);
    gg::cuda::mpi_active = true;
    MPI_Comm_size(MPI_COMM_WORLD, &gg::cuda::world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &gg::cuda::world_rank);
    if (gg::cuda::world_rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
  }
#endif
  int status = RUN_ALL_TESTS();
#if GG_HAVE_MPI
  if (gg::cuda::mpi_active) {
    // Every rank's verdict counts.
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
  }
#endif
  return status;
}
