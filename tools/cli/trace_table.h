// Where the time went: turns trace events (from a live tracer or an ETDump file) into the
// per-op table `pteron profile` and `pteron inspect --trace` print, with the time no event
// covers shown next to wall time, so the table always adds up.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "runtime/trace/event_tracer.h"

namespace pteron::cli {

struct TraceRow {
  std::string name;  // op name, backend id (delegate call), or a backend's node name
  enum class Kind { Execute, Kernel, DelegateCall, DelegateNode } kind;
  int instruction = -1;
  int run = 0;
  double start_ns = 0, end_ns = 0;
};

std::vector<TraceRow> rows_from_tracer(const EventTracer& tracer);
// Verifies and reads a size-prefixed ETDump (pteron's or ExecuTorch's); throws UserError
// naming the file when it is not one.
std::vector<TraceRow> rows_from_etdump(const std::vector<uint8_t>& bytes, const std::string& path);

// {"runs", "wall_ms" (median per run), "covered_ms", "uncovered_ms", "uncovered_share",
//  "ops": [{name, where, calls, total_ms, mean_ms, share}], "by_where": [...]}; times are
//  per run (total over runs / runs).
nlohmann::json summarize_trace(const std::vector<TraceRow>& rows);

// With the program's graph info (debug handles): adds "by_module" to `summary`, each
// instruction's time charged to the module its nodes came from (the common module path of a
// delegate call's nodes), cut to `depth` components (0: the full path less its leaf module).
void add_module_breakdown(nlohmann::json& summary, const std::vector<TraceRow>& rows,
                          const nlohmann::json& graph_info, int depth);
// The program's graph info, or null when it was compiled without it.
nlohmann::json program_graph_info(const HostProgram& program);
void print_trace_summary(const nlohmann::json& summary, size_t top);

// `pteron inspect PROGRAM --trace T.etdp`: the summary of an ETDump, with delegate calls named by
// the program's backend ids.
void inspect_trace(const HostProgram& program, const std::string& program_path,
                   const std::string& trace_path, size_t top, bool json);

}  // namespace pteron::cli
