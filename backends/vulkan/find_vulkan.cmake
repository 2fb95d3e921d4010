# Finds the Vulkan loader and headers (libvulkan-dev) and the GLSL compiler (glslc) and defines
# the PTERON_VULKAN option: ON by default for hosted builds where both are found. No GPU is
# needed to build; at run time a missing device makes the backend unavailable.
set(PTERON_VULKAN_FOUND OFF)
if(NOT PTERON_BARE_METAL)
  find_package(Vulkan QUIET)
  find_program(GLSLC glslc)
  if(Vulkan_FOUND AND GLSLC)
    set(PTERON_VULKAN_FOUND ON)
  endif()
endif()
include(${CMAKE_SOURCE_DIR}/cmake/backend_option.cmake)
pteron_backend_option(PTERON_VULKAN ${PTERON_VULKAN_FOUND}
                      "Build the Vulkan GPU delegate (hosted builds only)"
                      "the Vulkan loader/headers or glslc was not found (install libvulkan-dev glslc)")
