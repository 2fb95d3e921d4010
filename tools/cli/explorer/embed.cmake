# Writes OUT: a C++ file defining kExplorerCss and kExplorerJs from the page's files, so the
# `pteron explore` binary is self-contained. Run at build time (see tools/cli/CMakeLists.txt).
file(READ "${CSS}" css)
file(READ "${JS}" js)
file(WRITE "${OUT}.tmp" "// Generated from tools/cli/explorer/ by embed.cmake; do not edit.\n"
  "namespace pteron::cli {\n"
  "extern const char* const kExplorerCss;\nextern const char* const kExplorerJs;\n"
  "const char* const kExplorerCss = R\"PTERON_ASSET(${css})PTERON_ASSET\";\n"
  "const char* const kExplorerJs = R\"PTERON_ASSET(${js})PTERON_ASSET\";\n"
  "}  // namespace pteron::cli\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
