#include "tools/cli/trace_table.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "schema/etdump_generated.h"
#include "tools/cli/commands.h"
#include "tools/cli/program_tools.h"

namespace pteron::cli {
namespace {

namespace ed = pteron::etdump;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<TraceRow> rows_from_tracer(const EventTracer& tracer) {
  std::vector<TraceRow> rows;
  const double ns_per_tick = 1e9 / static_cast<double>(tracer.clock().ticks_per_second);
  for (const TraceEvent& e : tracer.events()) {
    TraceRow r;
    switch (e.kind) {
      case TraceEvent::Kind::Execute:
        r.kind = TraceRow::Kind::Execute;
        break;
      case TraceEvent::Kind::Kernel:
        r.kind = TraceRow::Kind::Kernel;
        break;
      case TraceEvent::Kind::DelegateCall:
        r.kind = TraceRow::Kind::DelegateCall;
        break;
      case TraceEvent::Kind::DelegateNode:
        r.kind = TraceRow::Kind::DelegateNode;
        break;
      case TraceEvent::Kind::Allocation:
        continue;
    }
    r.name = e.name ? e.name : "";
    r.instruction = e.instruction;
    r.run = static_cast<int>(e.run);
    r.start_ns = static_cast<double>(e.start) * ns_per_tick;
    r.end_ns = static_cast<double>(e.end) * ns_per_tick;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<TraceRow> rows_from_etdump(const std::vector<uint8_t>& bytes, const std::string& path) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (bytes.size() < 8 || !ed::VerifySizePrefixedETDumpBuffer(verifier) ||
      !flatbuffers::BufferHasIdentifier(bytes.data(), ed::ETDumpIdentifier(),
                                        /*size_prefixed=*/true)) {
    throw UserError(path + ": not an ETDump file (size-prefixed flatbuffer with identifier ED00)");
  }
  const ed::ETDump* dump = ed::GetSizePrefixedETDump(bytes.data());
  std::vector<TraceRow> rows;
  if (dump->run_data() == nullptr) return rows;
  int run = 0;
  for (const ed::RunData* data : *dump->run_data()) {
    // Instructions that are delegate calls in this run: other events of theirs come from
    // inside the delegate, with or without a debug id (a tracer writes the call first).
    std::set<int> delegate_calls;
    if (data->events() != nullptr) {
      for (const ed::Event* event : *data->events()) {
        const ed::ProfileEvent* p = event->profile_event();
        if (p == nullptr) continue;
        TraceRow r;
        r.name = p->name() ? p->name()->str() : "";
        r.instruction = p->instruction_id();
        r.run = run;
        r.start_ns = static_cast<double>(p->start_time());
        r.end_ns = static_cast<double>(p->end_time());
        if (r.name == "Method::execute") {
          r.kind = TraceRow::Kind::Execute;
        } else if (p->delegate_debug_id_int() >= 0 || p->delegate_debug_id_str() != nullptr ||
                   (r.name != "DELEGATE_CALL" && delegate_calls.count(r.instruction))) {
          r.kind = TraceRow::Kind::DelegateNode;
        } else if (r.name == "DELEGATE_CALL") {
          r.kind = TraceRow::Kind::DelegateCall;
          delegate_calls.insert(r.instruction);
        } else if (r.instruction >= 0) {
          r.kind = TraceRow::Kind::Kernel;
        } else {
          continue;  // other framework events (load, init)
        }
        rows.push_back(std::move(r));
      }
    }
    ++run;
  }
  return rows;
}

nlohmann::json summarize_trace(const std::vector<TraceRow>& rows) {
  std::map<int, double> wall, covered;  // per run
  struct Acc {
    std::string name, where;
    size_t calls = 0;
    double total_ns = 0;
    std::map<int, double> per_run_ns;
  };
  std::map<std::pair<std::string, std::string>, Acc> ops, inside;
  for (const TraceRow& r : rows) {
    const double d = r.end_ns - r.start_ns;
    switch (r.kind) {
      case TraceRow::Kind::Execute:
        wall[r.run] += d;
        break;
      case TraceRow::Kind::Kernel:
      case TraceRow::Kind::DelegateCall: {
        covered[r.run] += d;
        const std::string where = r.kind == TraceRow::Kind::Kernel ? "kernel" : "delegate";
        Acc& a = ops[{r.name, where}];
        a.name = r.name;
        a.where = where;
        ++a.calls;
        a.total_ns += d;
        a.per_run_ns[r.run] += d;
        break;
      }
      case TraceRow::Kind::DelegateNode: {
        Acc& a = inside[{r.name, "inside delegate"}];
        a.name = r.name;
        a.where = "inside delegate";
        ++a.calls;
        a.total_ns += d;
        a.per_run_ns[r.run] += d;
        break;
      }
    }
  }
  const size_t runs = std::max<size_t>(1, wall.size());
  std::vector<double> walls, uncovered;
  double wall_total = 0;
  for (const auto& [run, w] : wall) {
    walls.push_back(w);
    uncovered.push_back(w - covered[run]);
    wall_total += w;
  }
  nlohmann::json j;
  j["runs"] = wall.size();
  j["wall_ms"] = median(walls) / 1e6;
  j["uncovered_ms"] = median(uncovered) / 1e6;
  j["covered_ms"] = (median(walls) - median(uncovered)) / 1e6;
  j["uncovered_share"] = wall_total > 0 ? median(uncovered) / median(walls) : 0.0;
  // Per-run figures are medians over runs (runs where an op did not occur count as 0), shares
  // are of the median wall time, so one slow run does not skew the table.
  const double wall_median = median(walls);
  auto run_median = [&](const std::map<int, double>& per_run) {
    std::vector<double> v;
    for (const auto& [run, w] : wall) v.push_back(per_run.count(run) ? per_run.at(run) : 0.0);
    return v.empty() ? 0.0 : median(v);
  };
  auto list = [&](const std::map<std::pair<std::string, std::string>, Acc>& accs) {
    std::vector<std::pair<double, const Acc*>> v;
    for (const auto& [key, a] : accs) v.emplace_back(run_median(a.per_run_ns), &a);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [per_run_ns, a] : v) {
      out.push_back({{"name", a->name},
                     {"where", a->where},
                     {"calls", static_cast<double>(a->calls) / runs},
                     {"total_ms", per_run_ns / 1e6},
                     {"mean_ms", a->total_ns / a->calls / 1e6},
                     {"share", wall_median > 0 ? per_run_ns / wall_median : 0.0}});
    }
    return out;
  };
  j["ops"] = list(ops);
  j["inside_delegates"] = list(inside);
  std::map<std::string, std::map<int, double>> by_where;
  for (const auto& [key, a] : ops) {
    for (const auto& [run, ns] : a.per_run_ns)
      by_where[a.where == "kernel" ? "kernels" : a.name][run] += ns;
  }
  for (const auto& [where, per_run] : by_where) {
    const double ns = run_median(per_run);
    j["by_where"].push_back({{"where", where},
                             {"total_ms", ns / 1e6},
                             {"share", wall_median > 0 ? ns / wall_median : 0.0}});
  }
  return j;
}

namespace {

std::vector<std::string> split_module(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size() && !path.empty()) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string join_module(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = 0; i < std::min(n, parts.size()); ++i) out += (i ? "." : "") + parts[i];
  return out.empty() ? "(top level)" : out;
}

}  // namespace

void add_module_breakdown(nlohmann::json& summary, const std::vector<TraceRow>& rows,
                          const nlohmann::json& graph_info, int depth) {
  if (graph_info.is_null() || !graph_info.contains("instructions")) return;
  const auto& instructions = graph_info["instructions"];
  const auto& nodes = graph_info["nodes"];
  // Module per instruction: the longest common module path of its nodes.
  std::vector<std::string> module_of(instructions.size());
  for (size_t i = 0; i < instructions.size(); ++i) {
    std::vector<std::string> common;
    bool first = true;
    for (const auto& n : instructions[i]["nodes"]) {
      const std::vector<std::string> parts =
          split_module(nodes[n.get<size_t>()].value("module", ""));
      if (first) {
        common = parts;
        first = false;
        continue;
      }
      size_t k = 0;
      while (k < common.size() && k < parts.size() && common[k] == parts[k]) ++k;
      common.resize(k);
    }
    const bool single_leaf = instructions[i]["nodes"].size() == 1 && !common.empty();
    const size_t keep =
        depth > 0 ? static_cast<size_t>(depth) : common.size() - (single_leaf ? 1 : 0);
    module_of[i] = join_module(common, keep);
  }
  std::map<std::string, std::map<int, double>> per_module;  // module -> run -> ns
  std::map<int, double> wall;
  for (const TraceRow& r : rows) {
    if (r.kind == TraceRow::Kind::Execute) wall[r.run] += r.end_ns - r.start_ns;
    if (r.kind != TraceRow::Kind::Kernel && r.kind != TraceRow::Kind::DelegateCall) continue;
    if (r.instruction < 0 || static_cast<size_t>(r.instruction) >= module_of.size()) continue;
    per_module[module_of[r.instruction]][r.run] += r.end_ns - r.start_ns;
  }
  std::vector<double> walls;
  for (const auto& [run, w] : wall) walls.push_back(w);
  const double wall_median = median(walls);
  std::vector<std::pair<double, std::string>> sorted;
  for (const auto& [module, per_run] : per_module) {
    std::vector<double> v;
    for (const auto& [run, w] : wall) v.push_back(per_run.count(run) ? per_run.at(run) : 0.0);
    sorted.emplace_back(median(v), module);
  }
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  summary["by_module"] = nlohmann::json::array();
  for (const auto& [ns, module] : sorted) {
    summary["by_module"].push_back({{"module", module},
                                    {"total_ms", ns / 1e6},
                                    {"share", wall_median > 0 ? ns / wall_median : 0.0}});
  }
}

nlohmann::json program_graph_info(const HostProgram& program) {
  try {
    std::optional<std::string> info =
        compiler::read_named_data(program.program(), compiler::kGraphInfoKey);
    if (!info) return nullptr;
    nlohmann::json j = nlohmann::json::parse(*info, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::json(nullptr) : j;
  } catch (const std::exception&) {
    return nullptr;
  }
}

void print_trace_summary(const nlohmann::json& s, size_t top) {
  std::printf(
      "%zu run(s); per run (median): wall %.3f ms = events %.3f ms + not covered by any event "
      "%.3f ms (%.1f%%)\n",
      s["runs"].get<size_t>(), s["wall_ms"].get<double>(), s["covered_ms"].get<double>(),
      s["uncovered_ms"].get<double>(), 100 * s["uncovered_share"].get<double>());
  if (s.contains("by_where")) {
    std::printf("\n%-32s %12s %7s\n", "where", "ms/run", "share");
    for (const auto& w : s["by_where"]) {
      std::printf("%-32s %12.3f %6.1f%%\n", w["where"].get<std::string>().c_str(),
                  w["total_ms"].get<double>(), 100 * w["share"].get<double>());
    }
  }
  auto table = [top](const nlohmann::json& rows, const char* title) {
    if (rows.empty()) return;
    std::printf("\n%-40s %-9s %8s %12s %10s %7s\n", title, "where", "calls", "ms/run", "mean ms",
                "share");
    size_t shown = 0;
    for (const auto& r : rows) {
      if (shown++ == top) {
        std::printf("... %zu more (--top)\n", rows.size() - top);
        break;
      }
      std::printf("%-40s %-9s %8.0f %12.3f %10.4f %6.1f%%\n", r["name"].get<std::string>().c_str(),
                  r["where"].get<std::string>() == "kernel" ? "kernel" : "delegate",
                  r["calls"].get<double>(), r["total_ms"].get<double>(), r["mean_ms"].get<double>(),
                  100 * r["share"].get<double>());
    }
  };
  table(s["ops"], "op");
  table(s["inside_delegates"], "inside delegates");
  if (s.contains("by_module") && !s["by_module"].empty()) {
    std::printf("\n%-56s %12s %7s\n", "module", "ms/run", "share");
    size_t shown = 0;
    for (const auto& m : s["by_module"]) {
      if (shown++ == top) {
        std::printf("... %zu more (--top)\n", s["by_module"].size() - top);
        break;
      }
      std::printf("%-56.56s %12.3f %6.1f%%\n", m["module"].get<std::string>().c_str(),
                  m["total_ms"].get<double>(), 100 * m["share"].get<double>());
    }
  }
}

void inspect_trace(const HostProgram& program, const std::string& program_path,
                   const std::string& trace_path, size_t top, bool json) {
  std::ifstream f(trace_path, std::ios::binary);
  if (!f) throw UserError(trace_path + ": cannot open");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());
  std::vector<TraceRow> rows = rows_from_etdump(bytes, trace_path);
  auto method = load_method(program, program_path, "forward");
  const Method& m = method->method();
  for (TraceRow& r : rows) {
    if (r.kind != TraceRow::Kind::DelegateCall && r.kind != TraceRow::Kind::Kernel) continue;
    if (r.instruction < 0 || static_cast<size_t>(r.instruction) >= m.num_instructions()) {
      throw UserError(trace_path + ": instruction " + std::to_string(r.instruction) +
                      " is not in " + program_path + " (" + std::to_string(m.num_instructions()) +
                      " instructions): a trace of another program?");
    }
    r.name = m.instruction_name(static_cast<size_t>(r.instruction));
  }
  nlohmann::json summary = summarize_trace(rows);
  add_module_breakdown(summary, rows, program_graph_info(program), 0);
  summary["program"] = program_path;
  summary["trace"] = trace_path;
  if (json) {
    std::printf("%s\n", summary.dump(2).c_str());
    return;
  }
  print_trace_summary(summary, top);
}

}  // namespace pteron::cli
