# GGCuda: the CUDA toolchain for kernels/ and src/cuda/ (included from the top-level CMakeLists
# when check_language(CUDA) found nvcc). Enables the CUDA language for sm_90 (H100/H200) unless
# CMAKE_CUDA_ARCHITECTURES says otherwise, finds the toolkit (CUDA::cudart, CUDA::cublas) and
# NCCL, which CMake has no module for: nccl.h and libnccl under GG_NCCL_ROOT (or $NCCL_ROOT,
# $NCCL_HOME), the toolkit and the standard paths. Sets GG_HAVE_NCCL and the imported target
# gg::nccl when both are found.
include_guard(GLOBAL)

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # One architecture keeps the nvcc time of a clean build small; add more on the command line
  # (-DCMAKE_CUDA_ARCHITECTURES="80;90").
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
find_package(CUDAToolkit REQUIRED)

set(GG_NCCL_ROOT "$ENV{NCCL_ROOT}" CACHE PATH "Where NCCL is installed (include/, lib/)")
set(gg_nccl_hints ${GG_NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT}
    ${CUDAToolkit_TARGET_DIR})
find_path(GG_NCCL_INCLUDE_DIR nccl.h HINTS ${gg_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(GG_NCCL_LIBRARY NAMES nccl libnccl.so.2
             HINTS ${gg_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
             PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
set(GG_HAVE_NCCL no)
if(GG_NCCL_INCLUDE_DIR AND GG_NCCL_LIBRARY)
  set(GG_HAVE_NCCL yes)
  if(NOT TARGET gg::nccl)
    add_library(gg::nccl UNKNOWN IMPORTED GLOBAL)
    set_target_properties(gg::nccl PROPERTIES IMPORTED_LOCATION "${GG_NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${GG_NCCL_INCLUDE_DIR}")
  endif()
endif()
message(STATUS "GraphGuard: CUDA ${CMAKE_CUDA_COMPILER_VERSION} for sm ${CMAKE_CUDA_ARCHITECTURES}, "
               "NCCL ${GG_HAVE_NCCL} (${GG_NCCL_LIBRARY})")
