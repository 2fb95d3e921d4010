# Finds Debian's XNNPACK (libxnnpack-dev, Feb 2022 snapshot), which ships no CMake or
# pkg-config files, and defines the PTERON_XNNPACK option: ON by default for hosted builds
# where the library is found.
set(PTERON_XNNPACK_FOUND OFF)
if(NOT PTERON_BARE_METAL)
  find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
  find_path(PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
  find_library(XNNPACK_LIBRARY XNNPACK)
  find_library(PTHREADPOOL_LIBRARY pthreadpool)
  find_library(CPUINFO_LIBRARY cpuinfo)
  if(XNNPACK_INCLUDE_DIR AND PTHREADPOOL_INCLUDE_DIR AND XNNPACK_LIBRARY AND PTHREADPOOL_LIBRARY
     AND CPUINFO_LIBRARY)
    set(PTERON_XNNPACK_FOUND ON)
  endif()
endif()
include(${CMAKE_SOURCE_DIR}/cmake/backend_option.cmake)
pteron_backend_option(PTERON_XNNPACK ${PTERON_XNNPACK_FOUND}
                      "Build the XNNPACK delegate (hosted builds only)"
                      "XNNPACK, pthreadpool or cpuinfo was not found (install libxnnpack-dev libpthreadpool-dev libcpuinfo-dev)")
