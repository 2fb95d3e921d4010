# Finds Arm's ML SDK pieces the VGF delegate needs in the Arm tools venv (PTERON_ARM_VENV,
# default .venv-arm, made by `make venv-arm` from tools/arm/requirements-arm.txt): the VGF
# library (headers + libvgf.a, PyPI ai-ml-sdk-vgf-library), the ML emulation layer (PyPI
# ai-ml-emulation-layer-for-vulkan) and the model converter. Defines PTERON_VGF: ON for hosted
# builds with the Vulkan delegate where the VGF library is found (the venv's libvgf.a is built
# for the host, so never when cross-compiling).
if(NOT DEFINED PTERON_ARM_VENV)  # normally set by backends/tosa/tosa_schema.cmake
  set(PTERON_ARM_VENV ${CMAKE_SOURCE_DIR}/.venv-arm CACHE PATH "Arm graph-path tools venv")
endif()
set(PTERON_VGF_FOUND OFF)
if(PTERON_VULKAN AND NOT CMAKE_CROSSCOMPILING)
  file(GLOB _pteron_vgf_roots ${PTERON_ARM_VENV}/lib/python3*/site-packages)
  foreach(root ${_pteron_vgf_roots})
    if(EXISTS ${root}/vgf_lib/binaries/lib/libvgf.a)
      set(PTERON_VGF_LIB ${root}/vgf_lib/binaries/lib/libvgf.a)
      set(PTERON_VGF_INCLUDE ${root}/vgf_lib/binaries/include)
      set(PTERON_VGF_EMULATION_LAYER ${root}/emulation_layer/deploy)
      set(PTERON_VGF_FOUND ON)
    endif()
  endforeach()
endif()
option(PTERON_VGF "Build the VGF (VK_ARM_data_graph) delegate (hosted builds with Vulkan)"
       ${PTERON_VGF_FOUND})
if(PTERON_VGF AND NOT PTERON_VGF_FOUND)
  message(FATAL_ERROR "PTERON_VGF is ON but the VGF library was not found under "
                      "${PTERON_ARM_VENV} (make venv-arm), or the Vulkan delegate is off")
endif()
