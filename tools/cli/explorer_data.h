// The data behind `pteron explore`: one JSON document describing a program's methods
// (instructions, values with shapes/dtypes/arena placement, delegates, arenas, tensor
// lifetimes), the compiler's graph info when the program carries it, and per-instruction
// timing from an ETDump. The page's script draws everything from this document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/host/host_method.h"

namespace pteron::cli {

// Named data key under which the compiler stores graph info (node names, module paths, source
// lines, reasons not delegated); read here by key so the explorer works with or without it.
inline constexpr const char* kExplorerGraphInfoKey = "pteron.graph_info";

// Throws UserError naming the file when the program or the trace cannot be read.
nlohmann::json explorer_data(const HostProgram& program, const std::string& program_path,
                             const std::string& trace_path);

}  // namespace pteron::cli
