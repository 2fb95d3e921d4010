# Generates C++ headers from schema/*.fbs with Debian's flatc at build time.
find_program(FLATC flatc REQUIRED)
set(PTERON_SCHEMA_GEN_DIR ${CMAKE_BINARY_DIR}/generated)
set(PTERON_PROGRAM_HEADER ${PTERON_SCHEMA_GEN_DIR}/schema/program_generated.h)
add_custom_command(
  OUTPUT ${PTERON_PROGRAM_HEADER}
  COMMAND ${FLATC} --cpp --scoped-enums -o ${PTERON_SCHEMA_GEN_DIR}/schema
          ${CMAKE_SOURCE_DIR}/schema/program.fbs
  DEPENDS ${CMAKE_SOURCE_DIR}/schema/program.fbs
  COMMENT "flatc schema/program.fbs")
set(PTERON_ETDUMP_HEADER ${PTERON_SCHEMA_GEN_DIR}/schema/etdump_generated.h)
add_custom_command(
  OUTPUT ${PTERON_ETDUMP_HEADER}
  COMMAND ${FLATC} --cpp --scoped-enums -o ${PTERON_SCHEMA_GEN_DIR}/schema
          ${CMAKE_SOURCE_DIR}/schema/etdump.fbs
  DEPENDS ${CMAKE_SOURCE_DIR}/schema/etdump.fbs
  COMMENT "flatc schema/etdump.fbs")
add_custom_target(pteron_schema_gen DEPENDS ${PTERON_PROGRAM_HEADER} ${PTERON_ETDUMP_HEADER})
add_library(pteron_schema INTERFACE)
add_dependencies(pteron_schema pteron_schema_gen)
target_include_directories(pteron_schema INTERFACE ${PTERON_SCHEMA_GEN_DIR})
