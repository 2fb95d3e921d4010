# Cross-compiles the runtime core and kernels for a Cortex-M core (bare metal, newlib). The core
# is -DPTERON_MCU=...: cortex-m55 (the default: MVE and a double-precision FPU), cortex-m7
# (DSP extension, double-precision FPU) or cortex-m4 (DSP extension, single-precision FPU). One
# build folder per core: build-m55, build-m7, build-m4 (`make check-baremetal`).
set(CMAKE_SYSTEM_NAME Generic)
set(PTERON_MCU cortex-m55 CACHE STRING "Cortex-M core to build for: cortex-m55, cortex-m7, cortex-m4")
set_property(CACHE PTERON_MCU PROPERTY STRINGS cortex-m55 cortex-m7 cortex-m4)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PTERON_MCU)
if(PTERON_MCU STREQUAL "cortex-m55")
  set(_pteron_fpu "")  # -mcpu=cortex-m55 implies MVE (integer and float) and the FPU
elseif(PTERON_MCU STREQUAL "cortex-m7")
  set(_pteron_fpu "-mfpu=fpv5-d16")
elseif(PTERON_MCU STREQUAL "cortex-m4")
  set(_pteron_fpu "-mfpu=fpv4-sp-d16")
else()
  message(FATAL_ERROR "PTERON_MCU=${PTERON_MCU}: expected cortex-m55, cortex-m7 or cortex-m4")
endif()
set(CMAKE_SYSTEM_PROCESSOR ${PTERON_MCU})
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(PTERON_MCU_FLAGS
    "-mcpu=${PTERON_MCU} ${_pteron_fpu} -mthumb -mfloat-abi=hard -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${PTERON_MCU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${PTERON_MCU_FLAGS}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
