// Report format (version 1):
//   {"version": 1, "backends": [...], "nodes": N, "delegated_nodes": D, "kernel_nodes": K
//    (D + K = N), "instructions": I, "runs_on": {backend or library: nodes},
//    "ops": [{"op", "delegated", "not_delegated", "runs_on": {where: nodes}}],
//    "regions": {"count", "per_backend": {backend: regions},
//                "list": [{"index", "backend", "nodes", "inputs", "outputs", "bytes_in",
//                "bytes_out"}]},
//    "boundaries": {"crossings", "bytes"},
//    "flops": {"total", "delegated", "optimized", "portable", "share": {same three, 0..1}},
//    "portable_nodes": [{"name", "op", "module", "source", "reasons": [...]}],
//    "library_nodes": [{"name", "op", "module", "source", "runs_on", "reasons": [...]}]}
// library_nodes: nodes on a kernel library other than portable that a backend refused, with its
// reasons (e.g. "xnnpack: optimized kernel faster: SGEMM 128x768x3072 ...").
// A boundary crossing is a change of engine between consecutive instructions (the kernels or
// one delegate region; two different regions back to back count once); its bytes are the
// tensors entering and leaving delegate regions. "optimized" is every kernel library other
// than portable.
#include "compiler/report/delegation_report.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "compiler/report/graph_info.h"
#include "schema/program_generated.h"

namespace pteron::compiler {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char s[32];
  std::snprintf(s, sizeof(s), u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return s;
}

namespace {

using nlohmann::json;

std::string human_flops(double f) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (f >= 1000 && u < 4) {
    f /= 1000;
    ++u;
  }
  char s[32];
  std::snprintf(s, sizeof(s), u ? "%.2f %sFLOP" : "%.0f %sFLOP", f, units[u]);
  return s;
}

json parse_graph_info(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error("graph info is not valid JSON");
  if (j.value("version", 0) != 1) {
    throw std::runtime_error("graph info version " + std::to_string(j.value("version", 0)) +
                             " is not supported (this pteron reads version 1)");
  }
  return j;
}

std::string where(const json& node) {
  std::string m = node.value("module", ""), s = node.value("source", "");
  if (m.empty()) return s;
  return s.empty() ? m : m + " @ " + s;
}

std::string shape_text(const json& spec) {
  if (spec.is_null()) return "-";
  std::string s = spec.value("dtype", "?") + "[";
  bool first = true;
  for (const auto& d : spec["shape"]) {
    s += (first ? "" : ", ") + std::to_string(d.get<int64_t>());
    first = false;
  }
  return s + "]";
}

}  // namespace

std::optional<std::string> read_named_data(const Program& program, const char* key) {
  const auto* named = program.flatbuffer()->named_data();
  if (named == nullptr) return std::nullopt;
  for (const fb::NamedData* entry : *named) {
    if (entry->key() == nullptr || entry->key()->str() != key) continue;
    auto segment = program.load_segment(entry->segment_index());
    if (!segment.ok()) {
      throw std::runtime_error(std::string("named data '") + key + "' refers to segment " +
                               std::to_string(entry->segment_index()) + ", which cannot be read");
    }
    return std::string(static_cast<const char*>(segment->data()), segment->size());
  }
  return std::nullopt;
}

std::string delegation_report(const std::string& graph_info) {
  const json g = parse_graph_info(graph_info);
  const json& nodes = g["nodes"];
  json r;
  r["version"] = 1;
  r["backends"] = g["backends"];
  r["nodes"] = nodes.size();
  r["instructions"] = g["instructions"].size();

  size_t delegated = 0;
  uint64_t flops_total = 0, flops_delegated = 0, flops_optimized = 0, flops_portable = 0;
  std::map<std::string, size_t> runs_on;
  std::map<std::string, json> ops;
  json portable_nodes = json::array(), library_nodes = json::array();
  for (const json& n : nodes) {
    const std::string op = n.value("op", "?"), on = n.value("runs_on", "?");
    const uint64_t flops = n.value("flops", uint64_t{0});
    const bool is_delegated = n.contains("region");
    json& o = ops[op];
    if (o.is_null())
      o = {{"op", op}, {"delegated", 0}, {"not_delegated", 0}, {"runs_on", json::object()}};
    o[is_delegated ? "delegated" : "not_delegated"] =
        o[is_delegated ? "delegated" : "not_delegated"].get<size_t>() + 1;
    o["runs_on"][on] = o["runs_on"].value(on, 0) + 1;
    ++runs_on[on];
    flops_total += flops;
    if (is_delegated) {
      ++delegated;
      flops_delegated += flops;
    } else if (on == "alias" || on == "control flow") {
      // A memory view: no instruction, no kernel, no FLOPs (compiler/memory/memory_views.h);
      // control flow: jumps around subgraphs compiled on their own.
    } else if (on == "portable") {
      flops_portable += flops;
      portable_nodes.push_back({{"name", n.value("name", "")},
                                {"op", op},
                                {"module", n.value("module", "")},
                                {"source", n.value("source", "")},
                                {"reasons", n.value("reasons", json::array())}});
    } else {
      flops_optimized += flops;
      const json reasons = n.value("reasons", json::array());
      const bool refused =
          !reasons.empty() && !(reasons.size() == 1 && reasons[0].is_string() &&
                                reasons[0].get<std::string>() == kNoPartitionerReason);
      if (refused) {
        library_nodes.push_back({{"name", n.value("name", "")},
                                 {"op", op},
                                 {"module", n.value("module", "")},
                                 {"source", n.value("source", "")},
                                 {"runs_on", on},
                                 {"reasons", reasons}});
      }
    }
  }
  r["delegated_nodes"] = delegated;
  r["kernel_nodes"] = nodes.size() - delegated;
  r["runs_on"] = runs_on;
  r["ops"] = json::array();
  for (auto& [_, o] : ops) r["ops"].push_back(o);

  json regions = json::array();
  std::map<std::string, size_t> per_backend;
  uint64_t crossing_bytes = 0;
  for (size_t i = 0; i < g["regions"].size(); ++i) {
    const json& region = g["regions"][i];
    uint64_t in = 0, out = 0;
    for (const auto& v : region["inputs"]) in += v.value("bytes", uint64_t{0});
    for (const auto& v : region["outputs"]) out += v.value("bytes", uint64_t{0});
    crossing_bytes += in + out;
    ++per_backend[region.value("backend", "?")];
    regions.push_back({{"index", i},
                       {"backend", region.value("backend", "?")},
                       {"nodes", region["nodes"].size()},
                       {"inputs", region["inputs"].size()},
                       {"outputs", region["outputs"].size()},
                       {"bytes_in", in},
                       {"bytes_out", out}});
    if (region.contains("report")) regions.back()["report"] = region["report"];
  }
  r["regions"] = {{"count", regions.size()}, {"per_backend", per_backend}, {"list", regions}};

  // Engine per instruction: -1 for the kernels, else the region index.
  size_t crossings = 0;
  int64_t previous = -1;
  for (const json& ins : g["instructions"]) {
    const int64_t engine = ins.value("region", int64_t{-1});
    if (engine != previous) ++crossings;
    previous = engine;
  }
  if (previous != -1) ++crossings;  // back to the caller's side after a trailing region
  r["boundaries"] = {{"crossings", crossings}, {"bytes", crossing_bytes}};

  const auto share = [&](uint64_t part) {
    return flops_total ? static_cast<double>(part) / flops_total : 0.0;
  };
  r["flops"] = {{"total", flops_total},
                {"delegated", flops_delegated},
                {"optimized", flops_optimized},
                {"portable", flops_portable},
                {"share",
                 {{"delegated", share(flops_delegated)},
                  {"optimized", share(flops_optimized)},
                  {"portable", share(flops_portable)}}}};
  r["portable_nodes"] = std::move(portable_nodes);
  r["library_nodes"] = std::move(library_nodes);
  return r.dump();
}

std::string delegation_summary(const std::string& report) {
  const json r = json::parse(report);
  std::string out;
  char line[512];
  std::string backends;
  for (const auto& b : r["backends"])
    backends += (backends.empty() ? "" : ",") + b.get<std::string>();
  std::snprintf(line, sizeof(line),
                "delegation (compiled for %s): %zu node(s), %zu instruction(s)\n", backends.c_str(),
                r["nodes"].get<size_t>(), r["instructions"].get<size_t>());
  out += line;
  std::string where_list;
  for (const auto& [on, count] : r["runs_on"].items()) {
    where_list += (where_list.empty() ? "" : ", ") + on + " " + std::to_string(count.get<size_t>());
  }
  std::snprintf(line, sizeof(line), "  nodes: %zu delegated, %zu on kernels; by engine: %s\n",
                r["delegated_nodes"].get<size_t>(), r["kernel_nodes"].get<size_t>(),
                where_list.c_str());
  out += line;
  std::string per;
  for (const auto& [b, c] : r["regions"]["per_backend"].items()) {
    per += (per.empty() ? "" : ", ") + b + " " + std::to_string(c.get<size_t>());
  }
  std::snprintf(line, sizeof(line), "  delegate regions: %zu%s%s%s\n",
                r["regions"]["count"].get<size_t>(), per.empty() ? "" : " (", per.c_str(),
                per.empty() ? "" : ")");
  out += line;
  std::snprintf(line, sizeof(line), "  backend boundaries crossed: %zu, %s crossing\n",
                r["boundaries"]["crossings"].get<size_t>(),
                human_bytes(r["boundaries"]["bytes"].get<double>()).c_str());
  out += line;
  const json& f = r["flops"];
  std::snprintf(
      line, sizeof(line),
      "  FLOPs: %s: delegates %.1f%%, optimized kernels %.1f%%, portable kernels %.1f%%\n",
      human_flops(f["total"].get<double>()).c_str(), 100 * f["share"]["delegated"].get<double>(),
      100 * f["share"]["optimized"].get<double>(), 100 * f["share"]["portable"].get<double>());
  out += line;

  size_t width = 2;
  for (const auto& o : r["ops"]) width = std::max(width, o["op"].get<std::string>().size());
  std::snprintf(line, sizeof(line), "\n  %-*s %9s %13s  runs on\n", static_cast<int>(width), "op",
                "delegated", "not delegated");
  out += line;
  for (const auto& o : r["ops"]) {
    std::string on;
    for (const auto& [w, c] : o["runs_on"].items())
      on += (on.empty() ? "" : ", ") + w + " " + std::to_string(c.get<size_t>());
    std::snprintf(line, sizeof(line), "  %-*s %9zu %13zu  %s\n", static_cast<int>(width),
                  o["op"].get<std::string>().c_str(), o["delegated"].get<size_t>(),
                  o["not_delegated"].get<size_t>(), on.c_str());
    out += line;
  }
  if (r["regions"]["count"].get<size_t>() > 0) {
    out += "\n  regions:\n";
    for (const auto& reg : r["regions"]["list"]) {
      std::snprintf(
          line, sizeof(line), "    #%zu %s: %zu node(s), %zu input(s) (%s), %zu output(s) (%s)\n",
          reg["index"].get<size_t>(), reg["backend"].get<std::string>().c_str(),
          reg["nodes"].get<size_t>(), reg["inputs"].get<size_t>(),
          human_bytes(reg["bytes_in"].get<double>()).c_str(), reg["outputs"].get<size_t>(),
          human_bytes(reg["bytes_out"].get<double>()).c_str());
      out += line;
      // A backend's own estimate (the Ethos-U's Vela figures) when its lowering gave one.
      const json rep = reg.value("report", json::object());
      if (rep.contains("cost_model")) {  // compiler/cost/cost_model.h: why the region was kept
        const json& c = rep["cost_model"];
        std::snprintf(line, sizeof(line),
                      "       cost model: %s %.3f ms, %s kernels %.3f ms (this machine's "
                      "calibration)\n",
                      c.value("delegate", "?").c_str(), c.value("delegate_ms", 0.0),
                      c.value("kernels", "?").c_str(), c.value("kernels_ms", 0.0));
        out += line;
        const json leave = c.value("kernels_leave", json::array());
        if (!leave.empty()) {
          out += "       " + c.value("kernels", std::string("?")) + " would leave";
          for (const json& op : leave) out += " " + op.get<std::string>();
          std::snprintf(line, sizeof(line), " outside its own kernels (%.3f ms of conversions)\n",
                        c.value("kernels_leave_ms", 0.0));
          out += line;
        }
      }
      if (rep.contains("npu_cycles")) {
        std::snprintf(
            line, sizeof(line), "       %s (%s, %s): %llu NPU cycles, SRAM %s, flash %s, DRAM %s\n",
            rep.value("accelerator", "?").c_str(), rep.value("system_config", "?").c_str(),
            rep.value("memory_mode", "?").c_str(),
            static_cast<unsigned long long>(rep.value("npu_cycles", uint64_t{0})),
            human_bytes(rep.value("sram_bytes", 0.0)).c_str(),
            human_bytes(rep.value("off_chip_flash_bytes", 0.0)).c_str(),
            human_bytes(rep.value("dram_bytes", 0.0)).c_str());
        out += line;
      }
    }
  }
  // One line per (where, op, reasons): large models repeat the same refusal per layer.
  const auto grouped = [&out](const json& nodes, bool say_where) {
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
    for (const auto& n : nodes) {
      std::string reasons;
      for (const auto& why : n["reasons"])
        reasons += (reasons.empty() ? "" : "; ") + why.get<std::string>();
      const std::string where = say_where ? " on " + n.value("runs_on", std::string("?")) : "";
      groups[{n["op"].get<std::string>() + where, reasons}].push_back(n["name"].get<std::string>());
    }
    for (const auto& [key, names] : groups) {
      std::string listed;
      for (size_t i = 0; i < names.size() && i < 4; ++i) listed += (i ? ", " : "") + names[i];
      if (names.size() > 4) listed += ", ... (" + std::to_string(names.size()) + " nodes)";
      out += "    " + key.first + " [" + listed +
             "]: " + (key.second.empty() ? "no reason recorded" : key.second) + "\n";
    }
  };
  const json& left = r["portable_nodes"];
  if (!left.empty()) {
    std::snprintf(line, sizeof(line), "\n  left on portable kernels: %zu node(s)\n", left.size());
    out += line;
    grouped(left, false);
  }
  const json library = r.value("library_nodes", json::array());
  if (!library.empty()) {
    std::snprintf(line, sizeof(line), "\n  on other kernel libraries, not delegated: %zu node(s)\n",
                  library.size());
    out += line;
    grouped(library, true);
  }
  return out;
}

std::string graph_view(const std::string& graph_info) {
  const json g = parse_graph_info(graph_info);
  const json& nodes = g["nodes"];
  std::string out;
  const auto node_line = [&](size_t i, const char* indent) {
    const json& n = nodes[i];
    std::string outputs, inputs;
    for (const auto& o : n["outputs"]) outputs += (outputs.empty() ? "" : ", ") + shape_text(o);
    for (const auto& p : n["inputs"]) {
      const std::string name =
          p.is_string() ? p.get<std::string>() : nodes[p.get<size_t>()]["name"].get<std::string>();
      inputs += (inputs.empty() ? "" : ", ") + ("%" + name);
    }
    std::string line = std::string(indent) + "%" + n.value("name", "?") + " = " +
                       n.value("op", "?") + "(" + inputs + ") -> " + outputs;
    if (!n.contains("region")) line += "  [" + n.value("runs_on", "?") + "]";
    const std::string w = where(n);
    if (!w.empty()) line += "  # " + w;
    out += line + "\n";
  };
  std::string inputs;
  for (const auto& in : g["inputs"])
    inputs += (inputs.empty() ? "" : ", ") + in.value("name", "?") + ": " + shape_text(in);
  out += "graph(" + inputs + "): " + std::to_string(nodes.size()) + " node(s), " +
         std::to_string(g["regions"].size()) + " delegate region(s), " +
         std::to_string(g["instructions"].size()) + " instruction(s)\n";
  // Memory views have no instruction: each is listed before the first instruction whose
  // nodes come after it in graph order, so the listing stays in execution order.
  size_t next_alias = 0;
  const auto aliases_before = [&](size_t limit) {
    for (; next_alias < nodes.size() && next_alias < limit; ++next_alias) {
      if (nodes[next_alias].value("runs_on", "") == "alias") node_line(next_alias, "  ");
    }
  };
  for (const json& ins : g["instructions"]) {
    if (!ins["nodes"].empty()) aliases_before(ins["nodes"][0].get<size_t>());
    if (ins.contains("region")) {
      const size_t r = ins["region"].get<size_t>();
      const json& region = g["regions"][r];
      std::string rin, rout;
      for (const auto& v : region["inputs"])
        rin += (rin.empty() ? "" : ", ") + v.value("name", "?");
      for (const auto& v : region["outputs"])
        rout += (rout.empty() ? "" : ", ") + v.value("name", "?");
      out += "  region #" + std::to_string(r) + " [" + region.value("backend", "?") + "] (" + rin +
             ") -> (" + rout + "): " + std::to_string(region["nodes"].size()) + " node(s) {\n";
      for (const auto& n : ins["nodes"]) node_line(n.get<size_t>(), "      ");
      out += "  }\n";
    } else {
      for (const auto& n : ins["nodes"]) node_line(n.get<size_t>(), "  ");
    }
  }
  aliases_before(nodes.size());
  std::string outputs;
  for (const auto& o : g["outputs"]) {
    const int64_t k = o.get<int64_t>();
    outputs += (outputs.empty() ? "" : ", ") +
               (k < 0 ? std::string("%input") : "%" + nodes[k]["name"].get<std::string>());
  }
  out += "  return (" + outputs + ")\n";
  return out;
}

}  // namespace pteron::compiler
