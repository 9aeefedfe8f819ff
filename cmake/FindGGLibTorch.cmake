# FindGGLibTorch: locates the CPU part of a LibTorch installation without LibTorch's own CMake
# config (TorchConfig.cmake pulls in its CUDA setup, which CMake 3.25 rejects for C++20).
#
# Looks in GG_TORCH_DIR (the torch package directory, holding include/ and lib/), else asks the
# repository's virtual environment: <repo>/.venv/bin/python -c 'import torch; ...'.
# Defines GGLibTorch_FOUND, GG_TORCH_DIR (cached) and the imported target gg::libtorch_cpu
# (headers, libtorch_cpu + libc10, an rpath to <torch>/lib, C++20).
include_guard(GLOBAL)

if(NOT GG_TORCH_DIR)
  set(gg_torch_python "${CMAKE_SOURCE_DIR}/.venv/bin/python")
  if(EXISTS "${gg_torch_python}")
    execute_process(
      COMMAND "${gg_torch_python}" -c "import torch,os;print(os.path.dirname(torch.__file__))"
      OUTPUT_VARIABLE gg_torch_found_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE gg_torch_rc ERROR_QUIET)
    if(gg_torch_rc EQUAL 0 AND IS_DIRECTORY "${gg_torch_found_dir}")
      set(GG_TORCH_DIR "${gg_torch_found_dir}" CACHE PATH "The torch package directory (include/, lib/)")
    endif()
  endif()
endif()

set(gg_torch_lib_cpu "${GG_TORCH_DIR}/lib/libtorch_cpu.so")
set(gg_torch_lib_c10 "${GG_TORCH_DIR}/lib/libc10.so")
set(gg_torch_include "${GG_TORCH_DIR}/include")
set(gg_torch_api_include "${GG_TORCH_DIR}/include/torch/csrc/api/include")

include(FindPackageHandleStandardArgs)
if(GG_TORCH_DIR AND EXISTS "${gg_torch_lib_cpu}" AND EXISTS "${gg_torch_lib_c10}"
   AND EXISTS "${gg_torch_include}/ATen/ATen.h")
  set(GGLibTorch_DIR_OK TRUE)
endif()
find_package_handle_standard_args(GGLibTorch REQUIRED_VARS GG_TORCH_DIR GGLibTorch_DIR_OK)

if(GGLibTorch_FOUND AND NOT TARGET gg::libtorch_cpu)
  add_library(gg::libtorch_cpu INTERFACE IMPORTED GLOBAL)
  # SYSTEM: LibTorch's headers do not pass -Wall -Wextra -Werror.
  set_target_properties(gg::libtorch_cpu PROPERTIES
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${gg_torch_include};${gg_torch_api_include}"
    INTERFACE_INCLUDE_DIRECTORIES "${gg_torch_include};${gg_torch_api_include}"
    INTERFACE_LINK_LIBRARIES "${gg_torch_lib_cpu};${gg_torch_lib_c10}"
    INTERFACE_LINK_OPTIONS "LINKER:-rpath,${GG_TORCH_DIR}/lib"
    INTERFACE_COMPILE_FEATURES cxx_std_20)
endif()
