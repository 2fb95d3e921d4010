#include "compiler/cost/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "compiler/compile_error.h"
#include "compiler/ir/work.h"

namespace pteron::compiler::cost {
namespace {

using json = nlohmann::json;

const ir::TensorSpec* tensor_arg(const ir::Graph& g, const ir::Node& n, size_t index) {
  if (index >= n.args.size() || !n.args[index].is_tensor()) return nullptr;
  return &g.value(n.args[index].tensor()).spec;
}

bool is_convolution(const std::string& op) {
  return is_direct_convolution(op) || op == "conv2d_winograd";
}

bool all_ones(const ir::Argument& a) {
  if (!a.is<std::vector<int64_t>>()) return false;
  for (int64_t v : a.get<std::vector<int64_t>>())
    if (v != 1) return false;
  return true;
}

// Convolutions read (input [N, Cin, H, W], weight [Cout, Cin / groups, kh, kw]) first, then
// (aten::convolution) bias, stride, padding, dilation, transposed; a Winograd convolution is a
// 3x3 stride-1 one.
OpClass convolution_class(const ir::Graph& g, const ir::Node& n) {
  if (n.op.name == "conv2d_winograd") return OpClass::kConv3x3;
  const ir::TensorSpec* x = tensor_arg(g, n, 0);
  const ir::TensorSpec* w = tensor_arg(g, n, 1);
  if (!x || !w || x->rank() != 4 || w->rank() != 4 || n.args.size() < 7) return OpClass::kOther;
  if (n.args[6].is<bool>() && n.args[6].get<bool>()) return OpClass::kOther;  // transposed
  const int64_t cin = x->sizes[1];
  if (w->sizes[1] == 1 && cin > 1 && w->sizes[0] % cin == 0) {
    const int64_t taps = w->sizes[2] * w->sizes[3];
    return taps <= 9 ? OpClass::kDepthwise
                     : (taps <= 25 ? OpClass::kDepthwise5x5 : OpClass::kDepthwiseLarge);
  }
  if (w->sizes[1] != cin) return OpClass::kOther;                      // grouped
  const bool unit_steps = all_ones(n.args[3]) && all_ones(n.args[5]);  // stride, dilation
  if (w->sizes[2] == 1 && w->sizes[3] == 1 && unit_steps) return OpClass::kPointwise;
  if (w->sizes[2] == 3 && w->sizes[3] == 3 && unit_steps) return OpClass::kConv3x3;
  return OpClass::kConv;
}

std::string format_ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns * 1e-6);
  return buf;
}

}  // namespace

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kConv3x3:
      return "conv3x3";
    case OpClass::kConv:
      return "conv";
    case OpClass::kPointwise:
      return "pointwise";
    case OpClass::kDepthwise:
      return "depthwise";
    case OpClass::kDepthwise5x5:
      return "depthwise_5x5";
    case OpClass::kDepthwiseLarge:
      return "depthwise_large";
    case OpClass::kLinear:
      return "linear";
    case OpClass::kOther:
      return "other";
  }
  return "?";
}

std::optional<WeighedNode> weigh(const ir::Graph& graph, const ir::Node& node) {
  const double macs = static_cast<double>(multiply_adds(graph, node));
  if (macs <= 0) return std::nullopt;
  const std::string& op = node.op.name;
  if (is_convolution(op)) return WeighedNode{convolution_class(graph, node), macs};
  if (op == "linear" || op == "linear_relu" || op == "mm" || op == "addmm" || op == "bmm" ||
      op == "matmul")
    return WeighedNode{OpClass::kLinear, macs};
  return WeighedNode{OpClass::kOther, macs};  // attention
}

std::string_view precision_of(const ir::Graph& graph, const ir::Node& node) {
  for (ir::ValueId v : node.inputs()) {
    const ir::NodeId p = graph.value(v).producer;
    if (p != ir::kNoNode && graph.node(p).op.name.rfind("dequantize", 0) == 0) return "int8";
  }
  return "f32";
}

std::optional<Rate> Calibration::rate(std::string_view engine, std::string_view precision,
                                      OpClass op_class) const {
  const auto e = rates.find(std::string(engine));
  if (e == rates.end()) return std::nullopt;
  const auto p = e->second.find(std::string(precision));
  if (p == e->second.end()) return std::nullopt;
  const auto c = p->second.find(std::string(op_class_name(op_class)));
  if (c == p->second.end()) return std::nullopt;
  return c->second;
}

namespace {

// engine -> precision -> figure: the figure, if measured.
std::optional<double> lookup(const std::map<std::string, std::map<std::string, double>>& figures,
                             std::string_view engine, std::string_view precision) {
  const auto e = figures.find(std::string(engine));
  if (e == figures.end()) return std::nullopt;
  const auto p = e->second.find(std::string(precision));
  if (p == e->second.end()) return std::nullopt;
  return p->second;
}

// j[key] (engine -> precision -> figure, absent: none) into `out`; a figure outside [0, limit)
// is a damaged file.
void read_figures(const json& j, const char* key, const char* what, double limit,
                  std::map<std::string, std::map<std::string, double>>* out) {
  const json figures = j.value(key, json::object());  // items() keeps a reference
  for (const auto& [engine, precisions] : figures.items())
    for (const auto& [precision, figure] : precisions.items()) {
      const double v = figure.get<double>();
      if (!(v >= 0 && v < limit))
        throw CompileError("calibration: " + engine + " " + precision + " has no usable " + what +
                           " (" + figure.dump() + ")");
      (*out)[engine][precision] = v;
    }
}

}  // namespace

std::optional<double> Calibration::program(std::string_view engine,
                                           std::string_view precision) const {
  return lookup(program_ns, engine, precision);
}

std::optional<double> Calibration::boundary(std::string_view engine,
                                            std::string_view precision) const {
  return lookup(boundary_ns_per_byte, engine, precision);
}

std::string Calibration::to_json() const {
  json r = json::object();
  for (const auto& [engine, precisions] : rates)
    for (const auto& [precision, classes] : precisions)
      for (const auto& [name, rate] : classes)
        r[engine][precision][name] = {{"ns_per_call", rate.ns_per_call},
                                      {"ns_per_mac", rate.ns_per_mac}};
  json j = {{"format", kFormat}, {"machine", machine}, {"threads", threads},
            {"pteron", pteron},  {"created", created}, {"rates", r}};
  if (!program_ns.empty()) j["program_ns"] = program_ns;
  if (!boundary_ns_per_byte.empty()) j["boundary_ns_per_byte"] = boundary_ns_per_byte;
  return j.dump(2) + "\n";
}

Calibration Calibration::from_json(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw CompileError("calibration: not a JSON object");
  if (j.value("format", 0) != kFormat)
    throw CompileError("calibration: format " + j.value("format", json(0)).dump() +
                       ", this pteron reads format " + std::to_string(kFormat) +
                       " (run `pteron tune` again)");
  Calibration c;
  try {
    c.machine = j.at("machine").get<std::string>();
    c.threads = j.at("threads").get<int>();
    c.pteron = j.value("pteron", std::string());
    c.created = j.value("created", std::string());
    for (const auto& [engine, precisions] : j.at("rates").items())
      for (const auto& [precision, classes] : precisions.items())
        for (const auto& [name, rate] : classes.items()) {
          const Rate r{rate.at("ns_per_call").get<double>(), rate.at("ns_per_mac").get<double>()};
          // Negative or absurd figures are a damaged file, not a measurement.
          if (!(r.ns_per_call >= 0 && r.ns_per_call < 1e9 && r.ns_per_mac > 0 &&
                r.ns_per_mac < 1e6))
            throw CompileError("calibration: " + engine + " " + precision + " " + name +
                               " has no usable rate (" + rate.dump() + ")");
          c.rates[engine][precision][name] = r;
        }
    read_figures(j, "program_ns", "program cost", 1e9, &c.program_ns);
    read_figures(j, "boundary_ns_per_byte", "boundary cost", 1e3, &c.boundary_ns_per_byte);
  } catch (const json::exception& e) {
    throw CompileError(std::string("calibration: ") + e.what());
  }
  return c;
}

std::optional<double> estimate_ns(const Calibration& calibration, const ir::Graph& graph,
                                  const std::vector<ir::NodeId>& nodes, std::string_view engine) {
  double total = 0;
  for (ir::NodeId id : nodes) {
    const ir::Node& n = graph.node(id);
    const std::optional<WeighedNode> w = weigh(graph, n);
    if (!w) continue;
    const std::optional<Rate> r = calibration.rate(engine, precision_of(graph, n), w->op_class);
    if (!r) return std::nullopt;
    total += r->ns(w->multiply_adds);
  }
  return total;
}

std::string kernel_engine_for(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                              const std::vector<std::string>& kernel_libraries) {
  bool int8 = false;
  for (ir::NodeId id : nodes) {
    const ir::Node& n = graph.node(id);
    if (weigh(graph, n) && precision_of(graph, n) == "int8") int8 = true;
  }
  const auto has = [&](const char* name) {
    return std::find(kernel_libraries.begin(), kernel_libraries.end(), name) !=
           kernel_libraries.end();
  };
  if (int8) return has("cortex-m") ? "cortex-m" : "";
  return has("optimized") ? "optimized" : "";
}

std::string RegionCost::describe() const {
  std::string text = "cost model: " + kernels + " kernels " + format_ms(kernels_ns) + ", " +
                     delegate + " " + format_ms(delegate_ns) +
                     " (the region's convolutions and matrix products, at this "
                     "machine's calibrated rates)";
  if (!kernels_leave.empty()) {
    text += "; " + kernels + " would leave";
    for (const std::string& op : kernels_leave) text += " " + op;
    text += " outside its own kernels (" + format_ms(kernels_leave_ns) + " of conversions)";
  }
  return text;
}

std::string RegionCost::to_json() const {
  return json{{"cost_model",
               {{"delegate", delegate},
                {"delegate_ms", delegate_ns * 1e-6},
                {"kernels", kernels},
                {"kernels_ms", kernels_ns * 1e-6},
                {"kernels_leave", kernels_leave},
                {"kernels_leave_ms", kernels_leave_ns * 1e-6},
                {"chosen", kernels_faster() ? kernels : delegate}}}}
      .dump();
}

double boundary_bytes(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  std::vector<bool> inside(graph.node_capacity(), false);
  for (ir::NodeId n : nodes) inside[n] = true;
  std::vector<bool> counted(graph.value_capacity(), false);
  double bytes = 0;
  auto count = [&](ir::ValueId v) {
    const ir::Value& value = graph.value(v);
    if (counted[v] || value.is_constant() || value.spec.rank() != 4) return;
    counted[v] = true;
    bytes += static_cast<double>(value.spec.nbytes());
  };
  for (ir::NodeId n : nodes) {
    const ir::Node& node = graph.node(n);
    for (ir::ValueId v : node.inputs()) {
      const ir::NodeId p = graph.value(v).producer;
      if (p == ir::kNoNode || !inside[p]) count(v);
    }
    for (ir::ValueId v : node.outputs) {
      if (v == ir::kNoValue) continue;
      bool read_outside = graph.is_output(v);
      for (ir::NodeId u : graph.value(v).users) read_outside = read_outside || !inside[u];
      if (read_outside) count(v);
    }
  }
  return bytes;
}

std::optional<RegionCost> compare_region(const Calibration& calibration, const ir::Graph& graph,
                                         const std::vector<ir::NodeId>& nodes,
                                         std::string_view delegate,
                                         const std::vector<std::string>& kernel_libraries) {
  const std::string kernels = kernel_engine_for(graph, nodes, kernel_libraries);
  if (kernels.empty()) return std::nullopt;
  const std::optional<double> d = estimate_ns(calibration, graph, nodes, delegate);
  const std::optional<double> k = estimate_ns(calibration, graph, nodes, kernels);
  if (!d || !k || *d <= 0) return std::nullopt;
  RegionCost cost{std::string(delegate), kernels, *d, *k};
  // What running the region in the delegate adds beyond its layers, against the kernels.
  const std::string precision = kernels == "cortex-m" ? "int8" : "f32";
  const std::optional<double> pd = calibration.program(cost.delegate, precision);
  const std::optional<double> pk = calibration.program(kernels, precision);
  if (pd && pk) cost.delegate_ns = std::max(0.0, cost.delegate_ns + *pd - *pk);
  const std::optional<double> bd = calibration.boundary(cost.delegate, precision);
  const std::optional<double> bk = calibration.boundary(kernels, precision);
  if (bd && bk)
    cost.delegate_ns = std::max(0.0, cost.delegate_ns + (*bd - *bk) * boundary_bytes(graph, nodes));
  return cost;
}

}  // namespace pteron::compiler::cost
