# Cross-compiles the runtime, kernels, XNNPACK delegate and C++ tests for aarch64 Linux with
# Debian's cross toolchain (g++-aarch64-linux-gnu); ctest runs the tests under qemu-aarch64.
#
# Libraries for the target come from the cross C library (/usr/aarch64-linux-gnu) and from a
# sysroot of extracted arm64 packages (XNNPACK, pthreadpool, cpuinfo, GoogleTest, and the
# header-only nlohmann-json), which `make check-aarch64` fills. They are extracted rather than
# installed because Debian's libxnnpack-dev and libpthreadpool-dev cannot be installed for two
# architectures at once.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Where the extracted arm64 packages are (the sysroot's usr/ is inside).
set(PTERON_AARCH64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build-aarch64-sysroot"
    CACHE PATH "Extracted arm64 packages (XNNPACK, pthreadpool, cpuinfo, GoogleTest)")
get_filename_component(PTERON_AARCH64_SYSROOT "${PTERON_AARCH64_SYSROOT}" ABSOLUTE)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu "${PTERON_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # flatc, ccache: host programs
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest (and gtest_discover_tests) run target binaries through qemu: -L for the cross C library
# and loader, LD_LIBRARY_PATH for the extracted shared libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64 -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=${PTERON_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu)
