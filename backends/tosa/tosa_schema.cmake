# The TOSA flatbuffer schema (tosa.fbs) comes from the pinned tosa-tools in .venv-arm
# (tools/arm/requirements-arm.txt), not from this repository: the schema, the serializer it
# describes and the reference model that checks our numerics stay one release. Debian's flatc
# (2.0.8) compiles it into backends/tosa/schema/tosa_generated.h in the build tree, exposed as
# the INTERFACE target pteron_tosa_schema (header-only; no object API, so no std::string, and
# it builds bare metal like schema/program.fbs).
#
# Defines PTERON_TOSA (ON when tosa.fbs was found) and, then, pteron_tosa_schema.
# Cache variables: PTERON_ARM_VENV (the venv with tosa-tools) and PTERON_TOSA_FBS (the schema;
# derived from PTERON_ARM_VENV's python when empty).

# .venv-arm sits in the repository root (make venv-arm). A git worktree has none of its own:
# then use the main checkout's, found through git's common directory.
set(_pteron_arm_venv_default ${CMAKE_SOURCE_DIR}/.venv-arm)
if(NOT EXISTS ${_pteron_arm_venv_default}/bin/python)
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-common-dir
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
      OUTPUT_VARIABLE _pteron_git_common OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_pteron_git_common)
      get_filename_component(_pteron_main_checkout ${_pteron_git_common} DIRECTORY)
      if(EXISTS ${_pteron_main_checkout}/.venv-arm/bin/python)
        set(_pteron_arm_venv_default ${_pteron_main_checkout}/.venv-arm)
      endif()
    endif()
  endif()
endif()
set(PTERON_ARM_VENV ${_pteron_arm_venv_default} CACHE PATH
    "Python venv with Arm's graph-path tools (tosa-tools, Vela, ML SDK): make venv-arm")
set(PTERON_TOSA_FBS "" CACHE FILEPATH
    "tosa.fbs to generate the TOSA schema header from (empty: the one in PTERON_ARM_VENV)")

set(_pteron_tosa_fbs ${PTERON_TOSA_FBS})
if(NOT _pteron_tosa_fbs AND EXISTS ${PTERON_ARM_VENV}/bin/python)
  # tosa-tools installs the schema as <purelib>/bin/tosa.fbs.
  execute_process(
    COMMAND ${PTERON_ARM_VENV}/bin/python -c
            "import sysconfig;print(sysconfig.get_paths()['purelib'])"
    OUTPUT_VARIABLE _pteron_arm_purelib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_pteron_arm_purelib AND EXISTS ${_pteron_arm_purelib}/bin/tosa.fbs)
    set(_pteron_tosa_fbs ${_pteron_arm_purelib}/bin/tosa.fbs)
  endif()
endif()

set(PTERON_TOSA OFF)
if(_pteron_tosa_fbs AND EXISTS ${_pteron_tosa_fbs})
  set(PTERON_TOSA ON)
  set(PTERON_TOSA_FBS_USED ${_pteron_tosa_fbs})
  set(PTERON_TOSA_SCHEMA_HEADER ${PTERON_SCHEMA_GEN_DIR}/backends/tosa/schema/tosa_generated.h)
  add_custom_command(
    OUTPUT ${PTERON_TOSA_SCHEMA_HEADER}
    COMMAND ${FLATC} --cpp --scoped-enums -o ${PTERON_SCHEMA_GEN_DIR}/backends/tosa/schema
            ${_pteron_tosa_fbs}
    DEPENDS ${_pteron_tosa_fbs}
    COMMENT "flatc tosa.fbs (tosa-tools)")
  add_custom_target(pteron_tosa_schema_gen DEPENDS ${PTERON_TOSA_SCHEMA_HEADER})
  add_library(pteron_tosa_schema INTERFACE)
  add_dependencies(pteron_tosa_schema pteron_tosa_schema_gen)
  target_include_directories(pteron_tosa_schema INTERFACE ${PTERON_SCHEMA_GEN_DIR})
  message(STATUS "TOSA schema: ${_pteron_tosa_fbs}")
else()
  message(STATUS "TOSA schema not found (make venv-arm, or set PTERON_ARM_VENV or "
                 "PTERON_TOSA_FBS): the TOSA lowering and TOSA-based backends are not built")
endif()
