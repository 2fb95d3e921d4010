# Building and running Cortex-M55 firmware for the MPS3 AN547 under QEMU (cross builds only).
#
#   pteron_m55_executable(<name> SOURCES <src>... [LIBRARIES <lib>...]
#                         [STACK_SIZE <bytes>] [HEAP_SIZE <bytes>])
#     Links <name>.elf with the AN547 startup, semihosting and linker script.
#   pteron_qemu_test(<test name> <target> [PASS_REGULAR_EXPRESSION <re>] [ARGS <qemu args>...])
#     A ctest that runs <target> under qemu-system-arm; the firmware's exit code is the result.
#   pteron_firmware_kernel_library(<library> <target>)
#     Offers a selective-build kernel archive (sources compiled with PTERON_SELECTIVE_BUILD and
#     PTERON_KERNEL_LIBRARY="<library>") to `pteron firmware`, which links it when the target
#     file lists <library> in runtime.kernels.
set(PTERON_AN547_DIR ${CMAKE_CURRENT_LIST_DIR}/../platform/mps3_an547)
find_program(PTERON_QEMU_SYSTEM_ARM qemu-system-arm)

function(pteron_m55_executable name)
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
  configure_file(${PTERON_AN547_DIR}/an547.ld.in ${ld} @ONLY)
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES SUFFIX .elf LINK_DEPENDS ${ld})
  target_link_libraries(${name} PRIVATE pteron_an547 ${ARG_LIBRARIES})
  target_link_options(${name} PRIVATE -T${ld} -nostartfiles --specs=nano.specs --specs=rdimon.specs
    -Wl,--gc-sections -Wl,--undefined=board_vectors -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map)
endfunction()

function(pteron_qemu_test test_name target)
  cmake_parse_arguments(ARG "" "PASS_REGULAR_EXPRESSION" "ARGS" ${ARGN})
  add_test(NAME ${test_name}
    COMMAND ${PTERON_QEMU_SYSTEM_ARM} -M mps3-an547 -nographic -semihosting
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
