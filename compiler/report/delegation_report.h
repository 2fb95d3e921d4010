// The delegation report: what a program delegates, to which backends, what is left on which
// kernel library and why, where execution crosses between backends and how many FLOPs each
// part runs. Computed from the graph info the compiler stores in the program (graph_info.h);
// the CLI (`pteron inspect --delegation`, `--graph`) and Python (get_delegation_info) share it.
#pragma once

#include <optional>
#include <string>

#include "runtime/executor/program.h"

namespace pteron::compiler {

// The bytes stored under `key` in the program's named data; nullopt when there is none.
// Throws std::runtime_error when the entry points outside the file.
std::optional<std::string> read_named_data(const Program& program, const char* key);

// "512 B", "1.5 KiB", "13.4 MiB": sizes as reports print them.
std::string human_bytes(double bytes);

// The report as JSON text (format in delegation_report.cpp, version 1). Throws
// std::runtime_error when `graph_info` is not graph info this version understands.
std::string delegation_report(const std::string& graph_info);

// A readable summary of delegation_report()'s JSON: totals, per-op table, regions, FLOPs
// shares, and every node left on the portable kernels with the reasons.
std::string delegation_summary(const std::string& report);

// A text view of the lowered graph in execution order, delegate regions as indented blocks.
std::string graph_view(const std::string& graph_info);

// The line shown when a program carries no graph info.
inline constexpr const char* kNoGraphInfo =
    "no graph info in this program (compiled with --strip-debug-info or by another tool)";

}  // namespace pteron::compiler
