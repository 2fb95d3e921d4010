# What `cmake --install` (and the wheel, pyproject.toml) installs, and the build tree's copy of the
# same layout, so tools find their files relative to themselves (runtime/host/self_location.h):
#
#   bin/pteron, bin/pteron-run                   the CLI and the runtime-only runner
#   share/pteron/targets/*.toml                  target files (build tree: a link to targets/)
#   share/pteron/vulkan/explicit_layer.d/        the ML emulation layers (build tree: vgf_layers/)
#   lib/pteron/libqemu_icount.so                 the QEMU instruction-count plugin
#   lib/*.a, lib/pteron/objects/, include/       the runtime for C++ applications, and
#   lib/cmake/pteron/pteronConfig.cmake          find_package(pteron): pteron::runtime, ...
#
# PTERON_INSTALL_ROOT prefixes every destination: the wheel sets it to "pteron/" so everything
# lies inside the installed Python package (site-packages/pteron/bin/pteron, ...).
include(CMakePackageConfigHelpers)
set(PTERON_INSTALL_ROOT "" CACHE STRING "Prefix of every install destination (the wheel: pteron/)")
set(_root "${PTERON_INSTALL_ROOT}")

# The build tree's share/pteron: targets link to the sources (edits apply without a rebuild); the
# Arm tools venv the build was configured with, so a worktree's tools find Vela and the model
# converter (the link is the one place that names it; nothing installed does).
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/pteron)
if(NOT EXISTS ${CMAKE_BINARY_DIR}/share/pteron/targets)
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/targets ${CMAKE_BINARY_DIR}/share/pteron/targets SYMBOLIC)
endif()
if(PTERON_ARM_VENV AND EXISTS ${PTERON_ARM_VENV}/bin AND NOT EXISTS ${CMAKE_BINARY_DIR}/share/pteron/arm-venv)
  file(CREATE_LINK ${PTERON_ARM_VENV} ${CMAKE_BINARY_DIR}/share/pteron/arm-venv SYMBOLIC)
endif()

# Installed targets carry `include/` instead of the source and build folders.
function(pteron_install_interface target)
  foreach(prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
    get_target_property(dirs ${target} ${prop})
    if(NOT dirs)
      continue()
    endif()
    set(out "")
    foreach(d IN LISTS dirs)
      string(FIND "${d}" "${CMAKE_SOURCE_DIR}" in_source)
      string(FIND "${d}" "${CMAKE_BINARY_DIR}" in_build)
      if(in_source EQUAL 0 OR in_build EQUAL 0)
        list(APPEND out "$<BUILD_INTERFACE:${d}>")
      else()
        list(APPEND out "${d}")
      endif()
    endforeach()
    set_property(TARGET ${target} PROPERTY ${prop} "${out}")
  endforeach()
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${_root}include>)
  string(REGEX REPLACE "^pteron_" "" export_name ${target})
  set_property(TARGET ${target} PROPERTY EXPORT_NAME ${export_name})
endfunction()

# The runtime for applications: core, hosted pieces, kernel libraries, and each delegate this
# build has (runtime halves only; the compiler is the `pteron` tool and the Python package).
set(_exported pteron_schema pteron_runtime)
if(NOT PTERON_BARE_METAL)
  list(APPEND _exported pteron_runtime_host pteron_self_location pteron_llm)
endif()
foreach(t pteron_threads pteron_kernels_optimized pteron_xnnpack_schema pteron_xnnpack_libs
          pteron_xnnpack_runtime pteron_backend_xnnpack pteron_vulkan_schema pteron_vulkan_runtime
          pteron_backend_vulkan pteron_tosa_schema pteron_tosa_runtime pteron_ethos_u_schema
          pteron_ethos_u_runtime pteron_backend_ethos_u pteron_vgf_runtime pteron_backend_vgf
          pteron_llm_metadata)
  if(TARGET ${t})
    list(APPEND _exported ${t})
  endif()
endforeach()
if(PTERON_BARE_METAL)
  # Firmware links the selective builds (only the kernels a program names are registered).
  list(APPEND _exported pteron_kernels_portable_selective pteron_kernels_cortex_m_selective
       pteron_board)
else()
  list(APPEND _exported pteron_kernels_portable pteron_kernels_cortex_m)
endif()
foreach(t IN LISTS _exported)
  pteron_install_interface(${t})
endforeach()
if(TARGET pteron_board)
  # The board's headers (board.h, semihosting.h) are included by name, as firmware/ does.
  target_include_directories(pteron_board INTERFACE
                             $<INSTALL_INTERFACE:${_root}include/firmware/platform/cortex_m>)
endif()
install(TARGETS ${_exported} EXPORT pteronTargets
        ARCHIVE DESTINATION ${_root}lib
        OBJECTS DESTINATION ${_root}lib/pteron/objects)

# Headers, at the paths the sources include them by ("runtime/core/error.h").
install(DIRECTORY ${CMAKE_SOURCE_DIR}/runtime DESTINATION ${_root}include
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/kernels DESTINATION ${_root}include
        FILES_MATCHING PATTERN "*.h" PATTERN "aot" EXCLUDE)
foreach(b xnnpack vulkan tosa ethos_u vgf)
  if(EXISTS ${CMAKE_SOURCE_DIR}/backends/${b}/runtime)
    install(DIRECTORY ${CMAKE_SOURCE_DIR}/backends/${b}/runtime DESTINATION ${_root}include/backends/${b}
            FILES_MATCHING PATTERN "*.h")
  endif()
endforeach()
install(DIRECTORY ${PTERON_SCHEMA_GEN_DIR}/ DESTINATION ${_root}include FILES_MATCHING PATTERN "*.h")
if(PTERON_BARE_METAL)
  # flatbuffers is header-only; cross builds get the host's copy (runtime/CMakeLists.txt).
  install(DIRECTORY /usr/include/flatbuffers DESTINATION ${_root}include)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/firmware/platform DESTINATION ${_root}include/firmware
          FILES_MATCHING PATTERN "*.h" PATTERN "*.ld.in")
endif()

# The VGF delegate links Arm's libvgf.a (from the Arm tools venv): shipped beside the runtime,
# declared by pteronConfig.cmake before the targets that name it.
set(PTERON_CONFIG_EXTRA "")
if(TARGET pteron_vgf_lib)
  install(FILES ${PTERON_VGF_LIB} DESTINATION ${_root}lib RENAME libpteron_vgf.a)
  string(APPEND PTERON_CONFIG_EXTRA
         "add_library(pteron_vgf_lib STATIC IMPORTED)\n"
         "set_target_properties(pteron_vgf_lib PROPERTIES IMPORTED_LOCATION \"\${_pteron_prefix}/lib/libpteron_vgf.a\")\n")
endif()
if(TARGET pteron_vulkan_runtime)
  string(APPEND PTERON_CONFIG_EXTRA "find_dependency(Vulkan)\n")
endif()
if(NOT PTERON_BARE_METAL)
  string(APPEND PTERON_CONFIG_EXTRA "find_dependency(nlohmann_json 3)\n")
endif()
set(PTERON_CONFIG_TARGETS "${_exported}")
string(REPLACE "pteron_" "pteron::" PTERON_CONFIG_TARGETS "${PTERON_CONFIG_TARGETS}")

install(EXPORT pteronTargets NAMESPACE pteron:: DESTINATION ${_root}lib/cmake/pteron)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pteronConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/pteronConfig.cmake
                              INSTALL_DESTINATION ${_root}lib/cmake/pteron)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pteronConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pteronConfig.cmake ${CMAKE_BINARY_DIR}/pteronConfigVersion.cmake
        DESTINATION ${_root}lib/cmake/pteron)

if(PTERON_BARE_METAL)
  return()
endif()

# Tools and their files.
foreach(t pteron pteron-run)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${_root}bin)
  endif()
endforeach()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/targets/ DESTINATION ${_root}share/pteron/targets)
if(TARGET qemu_icount)
  install(TARGETS qemu_icount LIBRARY DESTINATION ${_root}lib/pteron)
endif()
if(PTERON_VGF AND EXISTS ${PTERON_VGF_LAYER_DIR}/VkLayer_Graph.json)
  install(DIRECTORY ${PTERON_VGF_LAYER_DIR}/ DESTINATION ${_root}share/pteron/vulkan/explicit_layer.d)
endif()
# The Python module and the zoo, when the package is built (pyproject.toml: the wheel).
if(TARGET pteron_native AND DEFINED SKBUILD_PLATLIB_DIR)
  install(TARGETS pteron_native LIBRARY DESTINATION .)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/models/ DESTINATION pteron/_models
          PATTERN "__pycache__" EXCLUDE PATTERN "train_digits.py" EXCLUDE)
  install(FILES ${CMAKE_SOURCE_DIR}/tools/arm/requirements-arm.txt DESTINATION pteron)
endif()
