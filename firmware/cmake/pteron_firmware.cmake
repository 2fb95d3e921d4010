# Building and running Cortex-M firmware under QEMU (cross builds only). The build's core
# (PTERON_MCU, cmake/arm-none-eabi.cmake) picks the board: the Cortex-M55 runs on the MPS3
# AN547 (`-M mps3-an547`), the Cortex-M7 on the MPS2 AN500 (`-M mps2-an500`), the Cortex-M4
# on the MPS2 AN386 (`-M mps2-an386`).
#
#   pteron_mcu_executable(<name> SOURCES <src>... [LIBRARIES <lib>...]
#                         [STACK_SIZE <bytes>] [HEAP_SIZE <bytes>])
#     Links <name>.elf with the board's startup, semihosting and linker script.
#   pteron_qemu_test(<test name> <target> [PASS_REGULAR_EXPRESSION <re>] [ARGS <qemu args>...])
#     A ctest that runs <target> under qemu-system-arm; the firmware's exit code is the result.
#   pteron_firmware_kernel_library(<library> <target>)
#     Offers a selective-build kernel archive (sources compiled with PTERON_SELECTIVE_BUILD and
#     PTERON_KERNEL_LIBRARY="<library>") to `pteron firmware`, which links it when the target
#     file lists <library> in runtime.kernels.
set(PTERON_PLATFORM_DIR ${CMAKE_CURRENT_LIST_DIR}/../platform)
if(PTERON_MCU STREQUAL "cortex-m55")
  set(PTERON_BOARD_LINKER_SCRIPT ${PTERON_PLATFORM_DIR}/mps3_an547/an547.ld.in)
  set(PTERON_QEMU_MACHINE mps3-an547)
elseif(PTERON_MCU STREQUAL "cortex-m7")
  set(PTERON_BOARD_LINKER_SCRIPT ${PTERON_PLATFORM_DIR}/mps2/mps2.ld.in)
  set(PTERON_QEMU_MACHINE mps2-an500)
elseif(PTERON_MCU STREQUAL "cortex-m4")
  set(PTERON_BOARD_LINKER_SCRIPT ${PTERON_PLATFORM_DIR}/mps2/mps2.ld.in)
  set(PTERON_QEMU_MACHINE mps2-an386)
else()
  message(FATAL_ERROR "no board for PTERON_MCU=${PTERON_MCU}")
endif()
find_program(PTERON_QEMU_SYSTEM_ARM qemu-system-arm)

function(pteron_mcu_executable name)
  cmake_parse_arguments(ARG "" "STACK_SIZE;HEAP_SIZE" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_STACK_SIZE)
    set(ARG_STACK_SIZE 16384)
  endif()
  if(NOT ARG_HEAP_SIZE)
    set(ARG_HEAP_SIZE 4096)  # newlib's stdio (printf in tests); pteron itself allocates nothing
  endif()
  set(STACK_SIZE ${ARG_STACK_SIZE})
  set(HEAP_SIZE ${ARG_HEAP_SIZE})
  set(ld ${CMAKE_CURRENT_BINARY_DIR}/${name}.ld)
  configure_file(${PTERON_BOARD_LINKER_SCRIPT} ${ld} @ONLY)
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES SUFFIX .elf LINK_DEPENDS ${ld})
  target_link_libraries(${name} PRIVATE pteron_board ${ARG_LIBRARIES})
  target_link_options(${name} PRIVATE -T${ld} -nostartfiles --specs=nano.specs --specs=rdimon.specs
    -Wl,--gc-sections -Wl,--undefined=board_vectors -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map)
endfunction()

function(pteron_qemu_test test_name target)
  cmake_parse_arguments(ARG "" "PASS_REGULAR_EXPRESSION" "ARGS" ${ARGN})
  add_test(NAME ${test_name}
    COMMAND ${PTERON_QEMU_SYSTEM_ARM} -M ${PTERON_QEMU_MACHINE} -nographic -semihosting
            -kernel $<TARGET_FILE:${target}> ${ARG_ARGS})
  set_tests_properties(${test_name} PROPERTIES TIMEOUT 120)
  if(ARG_PASS_REGULAR_EXPRESSION)
    set_tests_properties(${test_name} PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_PASS_REGULAR_EXPRESSION}")
  endif()
endfunction()

function(pteron_firmware_kernel_library library target)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/firmware_kernels/${library}.txt
       CONTENT "$<TARGET_FILE:${target}>")
  add_dependencies(pteron_firmware_libs ${target})
endfunction()
