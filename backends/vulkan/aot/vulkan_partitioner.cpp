#include "backends/vulkan/aot/vulkan_partitioner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "backends/vulkan/aot/payload_builder.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {
namespace {

using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

enum class Kind {
  Linear,
  AddMm,
  Mm,
  Add,
  Sub,
  Mul,
  Relu,
  Clamp,
  Hardtanh,
  Softmax,
  Conv,
  LayerNorm,
  Mean,
  Reshape,
  Permute,
  Bmm
};

// The support table: op -> what the payload runs it as. Everything fp32, contiguous.
const std::map<std::string, Kind>& table() {
  static const std::map<std::string, Kind> t = {
      {"aten::linear.default", Kind::Linear},
      {"aten::addmm.default", Kind::AddMm},
      {"aten::mm.default", Kind::Mm},
      {"aten::add.Tensor", Kind::Add},
      {"aten::sub.Tensor", Kind::Sub},
      {"aten::mul.Tensor", Kind::Mul},
      {"aten::relu.default", Kind::Relu},
      {"aten::clamp.default", Kind::Clamp},
      {"aten::hardtanh.default", Kind::Hardtanh},
      {"aten::_softmax.default", Kind::Softmax},
      {"aten::convolution.default", Kind::Conv},
      {"aten::native_layer_norm.default", Kind::LayerNorm},
      {"aten::mean.dim", Kind::Mean},
      {"aten::view.default", Kind::Reshape},
      {"aten::view_copy.default", Kind::Reshape},
      {"aten::_unsafe_view.default", Kind::Reshape},
      {"aten::reshape.default", Kind::Reshape},
      {"aten::permute.default", Kind::Permute},
      {"aten::bmm.default", Kind::Bmm},
      {"aten::permute_copy.default", Kind::Permute},
  };
  return t;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// fp32, contiguous, 1..6 dims of size >= 1 (rank 0 allowed), small enough for 32-bit indices.
std::string check_tensor(const Graph& g, ValueId v, const char* what) {
  const TensorSpec& s = g.value(v).spec;
  if (s.dtype != ScalarType::Float) {
    return std::string(what) + " is " + compiler::ir::dtype_name(s.dtype) +
           " (the Vulkan delegate runs fp32 only)";
  }
  if (s.rank() > kMaxDims) {
    return std::string(what) + " has rank " + std::to_string(s.rank()) + " (at most 6)";
  }
  for (int64_t d : s.sizes) {
    if (d < 1) return std::string(what) + " has an empty dimension " + shape_str(s.sizes);
  }
  if (!s.is_contiguous()) {
    return std::string(what) + " is not contiguous (the Vulkan delegate takes row-major tensors)";
  }
  if (s.nbytes() > (uint64_t{1} << 27)) {
    return std::string(what) + " is larger than 128 MiB (a storage buffer's range on lavapipe)";
  }
  return {};
}

std::string check_node(const Graph& g, const Node& n) {
  const auto it = table().find(n.op.str());
  if (it == table().end()) return "op " + n.op.str() + " is not in the Vulkan support table";
  const Kind kind = it->second;
  if (n.outputs.empty() || n.outputs[0] == compiler::ir::kNoValue) return "no output";
  // Extra outputs (layer norm's mean and rstd) must be unused: the delegate does not make them.
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    const ValueId v = n.outputs[k];
    if (v == compiler::ir::kNoValue) continue;
    const auto& outs = g.outputs();
    if (!g.value(v).users.empty() || std::find(outs.begin(), outs.end(), v) != outs.end()) {
      return "output " + std::to_string(k) + " is used (the delegate computes only output 0)";
    }
  }
  for (ValueId v : n.inputs()) {
    if (std::string why = check_tensor(g, v, "an input"); !why.empty()) return why;
  }
  if (std::string why = check_tensor(g, n.outputs[0], "the output"); !why.empty()) return why;
  const TensorSpec& out = g.value(n.outputs[0]).spec;
  switch (kind) {
    case Kind::Linear: {
      const TensorSpec& w = g.value(n.args[1].tensor()).spec;
      if (w.rank() != 2) return "linear weight must be 2-D, got " + shape_str(w.sizes);
      if (g.value(n.args[0].tensor()).spec.rank() < 1) return "linear input is a scalar";
      if (!n.args[2].is_none() && g.value(n.args[2].tensor()).spec.rank() != 1) {
        return "linear bias must be 1-D";
      }
      return {};
    }
    case Kind::AddMm: {
      const TensorSpec& bias = g.value(n.args[0].tensor()).spec;
      const int64_t cols = out.sizes.back();
      if (!(bias.rank() == 1 || (bias.rank() == 2 && bias.sizes[0] == 1)) ||
          bias.sizes.back() != cols) {
        return "addmm bias " + shape_str(bias.sizes) +
               " is not [N] or [1, N] (N = " + std::to_string(cols) + ")";
      }
      if (n.args[3].to_double() != 1.0 || n.args[4].to_double() != 1.0) {
        return "addmm with beta or alpha other than 1";
      }
      return {};
    }
    case Kind::Mm:
    case Kind::Bmm:
      return {};
    case Kind::Add:
    case Kind::Sub:
      if (!std::isfinite(n.args[2].to_double())) return "alpha is not finite";
      [[fallthrough]];
    case Kind::Mul: {
      // Outputs exactly the broadcast shape (checked again by the runtime's verifier).
      for (int k = 0; k < 2; ++k) {
        if (!n.args[k].is_tensor()) return "a scalar operand (only tensor-tensor)";
        if (g.value(n.args[k].tensor()).spec.rank() > out.rank()) return "input rank > output";
      }
      return {};
    }
    case Kind::Relu:
      return {};
    case Kind::Clamp:
    case Kind::Hardtanh:
      for (int k = 1; k < 3; ++k) {
        if (!n.args[k].is_none() && std::isnan(n.args[k].to_double())) return "NaN bound";
      }
      if (!n.args[1].is_none() && !n.args[2].is_none() &&
          n.args[1].to_double() > n.args[2].to_double()) {
        return "min > max";
      }
      return {};
    case Kind::Conv: {
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
      if (x.rank() != 4) return "convolution is not 2-D (input " + shape_str(x.sizes) + ")";
      if (n.args[6].get<bool>()) return "transposed convolution";
      if (!g.value(n.args[1].tensor()).is_constant()) return "convolution weight is not constant";
      for (size_t k : {3, 4, 5}) {
        const auto& v = n.args[k].get<std::vector<int64_t>>();
        if (v.size() != 2) return "stride/padding/dilation must have 2 entries";
      }
      const auto& pad = n.args[4].get<std::vector<int64_t>>();
      if (pad[0] < 0 || pad[1] < 0) return "negative padding";
      return {};
    }
    case Kind::LayerNorm: {
      const auto& shape = n.args[1].get<std::vector<int64_t>>();
      if (shape.size() != 1) return "layer norm over more than the last dim";
      if (n.args[2].is_none() && !n.args[3].is_none()) return "layer norm with bias but no weight";
      return {};
    }
    case Kind::Mean: {
      if (n.args.size() > 3 && !n.args[3].is_none()) return "mean with a dtype";
      const int64_t rank = static_cast<int64_t>(g.value(n.args[0].tensor()).spec.rank());
      if (n.args[1].is_none()) return {};  // over everything
      std::vector<bool> reduced(static_cast<size_t>(rank), false);
      for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
        const int64_t dd = d < 0 ? d + rank : d;
        if (dd < 0 || dd >= rank) return "mean dim out of range";
        reduced[static_cast<size_t>(dd)] = true;
      }
      // The reduced dims must be trailing (a contiguous block per output element).
      bool seen = false;
      for (int64_t d = 0; d < rank; ++d) {
        if (seen && !reduced[static_cast<size_t>(d)]) return "mean over dims that are not trailing";
        seen = seen || reduced[static_cast<size_t>(d)];
      }
      return {};
    }
    case Kind::Reshape:
      return {};
    case Kind::Permute: {
      const int64_t rank = static_cast<int64_t>(out.rank());
      for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
        if (d < -rank || d >= rank) return "permute dim out of range";
      }
      return {};
    }
    case Kind::Softmax: {
      const int64_t dim = n.args[1].get<int64_t>();
      const int64_t rank = static_cast<int64_t>(out.rank());
      if (dim != -1 && dim != rank - 1) return "softmax over a dim other than the last";
      if (n.args[2].get<bool>()) return "softmax with half_to_float";
      return {};
    }
  }
  return "unhandled op";
}

std::vector<uint32_t> dims_of(const Graph& g, ValueId v) {
  std::vector<uint32_t> d;
  for (int64_t s : g.value(v).spec.sizes) d.push_back(static_cast<uint32_t>(s));
  return d;
}

// Lowers one region. Throws on anything unexpected (lower() turns it into a refusal).
std::vector<uint8_t> build_payload(const Graph& g, const Region& region) {
  PayloadBuilder b;
  std::unordered_map<ValueId, uint32_t> ids;
  uint32_t arg = 0;
  for (ValueId v : region.inputs) ids[v] = b.add_input(dims_of(g, v), arg++);
  for (ValueId v : region.outputs) ids[v] = b.add_output(dims_of(g, v), arg++);
  const auto tensor = [&](ValueId v) -> uint32_t {
    if (auto it = ids.find(v); it != ids.end()) return it->second;
    const Value& val = g.value(v);
    uint32_t id;
    if (val.is_constant()) {
      const auto& bytes = val.constant->bytes;
      id = b.add_constant(dims_of(g, v),
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)));
    } else {
      id = b.add_tensor(dims_of(g, v));
    }
    ids[v] = id;
    return id;
  };
  // A [1, N] addmm bias becomes a constant [N] (same bytes); a non-constant one is refused.
  const auto bias_1d = [&](ValueId v) -> uint32_t {
    const Value& val = g.value(v);
    if (val.spec.rank() == 1) return tensor(v);
    if (!val.is_constant()) throw std::runtime_error("addmm bias [1, N] is not a constant");
    const auto& bytes = val.constant->bytes;
    return b.add_constant({static_cast<uint32_t>(val.spec.sizes.back())},
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)));
  };
  const auto transposed_constant = [&](const Value& w) -> uint32_t {
    const size_t rows = static_cast<size_t>(w.spec.sizes[0]);
    const size_t cols = static_cast<size_t>(w.spec.sizes[1]);
    const float* src = reinterpret_cast<const float*>(w.constant->bytes.data());
    std::vector<float> t(rows * cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) t[c * rows + r] = src[r * cols + c];
    }
    return b.add_constant({static_cast<uint32_t>(cols), static_cast<uint32_t>(rows)}, t);
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (NodeId id : region.nodes) {
    const Node& n = g.node(id);
    const Kind kind = table().at(n.op.str());
    const uint32_t out = tensor(n.outputs[0]);
    const auto in = [&](size_t k) { return tensor(n.args[k].tensor()); };
    switch (kind) {
      case Kind::Linear: {
        // A constant weight [N, K] is stored transposed, [K, N], and run as a MatMul: the
        // shaders then read W rows contiguously along N, the dimension neighbouring
        // invocations cover (contiguous vector loads instead of gathers on CPU devices).
        const Value& w = g.value(n.args[1].tensor());
        const bool transpose = w.is_constant() && !ids.count(w.id);
        std::vector<uint32_t> ins = {in(0), transpose ? transposed_constant(w) : in(1)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        b.add_node(transpose ? fb::OpType::MatMul : fb::OpType::Linear, ins, out);
        break;
      }
      case Kind::AddMm:
        b.add_node(fb::OpType::MatMul, {in(1), in(2), bias_1d(n.args[0].tensor())}, out);
        break;
      case Kind::Mm:
        b.add_node(fb::OpType::MatMul, {in(0), in(1)}, out);
        break;
      case Kind::Bmm:
        b.add_node(fb::OpType::BatchMatMul, {in(0), in(1)}, out);
        break;
      case Kind::Add:
      case Kind::Sub:
        b.add_node(kind == Kind::Add ? fb::OpType::Add : fb::OpType::Sub, {in(0), in(1)}, out,
                   {.alpha = static_cast<float>(n.args[2].to_double())});
        break;
      case Kind::Mul:
        b.add_node(fb::OpType::Mul, {in(0), in(1)}, out);
        break;
      case Kind::Relu:
        b.add_node(fb::OpType::Clamp, {in(0)}, out, {.output_min = 0.0f, .output_max = inf});
        break;
      case Kind::Clamp:
      case Kind::Hardtanh: {
        const float lo = n.args[1].is_none() ? -inf : static_cast<float>(n.args[1].to_double());
        const float hi = n.args[2].is_none() ? inf : static_cast<float>(n.args[2].to_double());
        b.add_node(fb::OpType::Clamp, {in(0)}, out, {.output_min = lo, .output_max = hi});
        break;
      }
      case Kind::Softmax:
        b.add_node(fb::OpType::Softmax, {in(0)}, out);
        break;
      case Kind::Conv: {
        const auto pair = [&](size_t k) {
          const auto& v = n.args[k].get<std::vector<int64_t>>();
          return std::vector<uint32_t>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
        };
        std::vector<uint32_t> ins = {in(0), in(1)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        b.add_node(fb::OpType::Conv2d, ins, out,
                   {.stride = pair(3),
                    .padding = pair(4),
                    .dilation = pair(5),
                    .groups = static_cast<uint32_t>(n.args[8].get<int64_t>())});
        break;
      }
      case Kind::Mean:
        b.add_node(fb::OpType::Mean, {in(0)}, out);
        break;
      case Kind::Reshape:
        b.add_node(fb::OpType::Reshape, {in(0)}, out);
        break;
      case Kind::Permute: {
        std::vector<uint32_t> perm;
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
          perm.push_back(static_cast<uint32_t>(d < 0 ? d + rank : d));
        }
        b.add_node(fb::OpType::Permute, {in(0)}, out, {.perm = perm});
        break;
      }
      case Kind::LayerNorm: {
        std::vector<uint32_t> ins = {in(0)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        if (!n.args[3].is_none()) ins.push_back(in(3));
        b.add_node(fb::OpType::LayerNorm, ins, out,
                   {.eps = static_cast<float>(n.args[4].to_double()),
                    .has_weight = !n.args[2].is_none(),
                    .has_bias = !n.args[3].is_none()});
        break;
      }
    }
  }
  return b.build();
}

const bool g_registered =
    compiler::register_partitioner("vulkan", [] { return std::make_unique<VulkanPartitioner>(); });

}  // namespace

std::string VulkanPartitioner::backend_id() const { return kBackendId; }

SupportDecision VulkanPartitioner::supports(const Graph& graph, const Node& node) const {
  try {
    const std::string why = check_node(graph, node);
    return why.empty() ? SupportDecision::yes() : SupportDecision::no(why);
  } catch (const std::exception& e) {
    return SupportDecision::no(std::string("cannot read the node: ") + e.what());
  }
}

double region_work(const Graph& graph, const Region& region) {
  double work = 0.0;
  for (NodeId id : region.nodes) {
    const Node& n = graph.node(id);
    const TensorSpec& out = graph.value(n.outputs[0]).spec;
    const double numel = static_cast<double>(out.numel());
    const std::string op = n.op.str();
    if (op == "aten::linear.default" || op == "aten::mm.default" || op == "aten::addmm.default" ||
        op == "aten::bmm.default") {
      const size_t a = op == "aten::addmm.default" ? 1 : 0;
      work += numel * static_cast<double>(graph.value(n.args[a].tensor()).spec.sizes.back());
    } else if (op == "aten::convolution.default") {
      const TensorSpec& w = graph.value(n.args[1].tensor()).spec;  // [OC, C / groups, KH, KW]
      work += numel * static_cast<double>(w.numel() / w.sizes[0]);
    } else {
      work += numel;
    }
  }
  return work;
}

SupportDecision VulkanPartitioner::worth_delegating(const Graph& graph,
                                                    const Region& region) const {
  const double work = region_work(graph, region);
  if (work >= kMinRegionWork) return SupportDecision::yes();
  char why[160];
  snprintf(why, sizeof(why),
           "region of %zu node(s) does %.0f multiply-adds/elements, under the %.0f that repay a "
           "GPU submit and its copies",
           region.nodes.size(), work, kMinRegionWork);
  return SupportDecision::no(why);
}

LoweredRegion VulkanPartitioner::lower(const Graph& graph, const Region& region) const {
  LoweredRegion r;
  try {
    r.payload = build_payload(graph, region);
    r.ok = true;
  } catch (const std::exception& e) {
    r.reason = std::string("lowering failed: ") + e.what();
  }
  return r;
}

}  // namespace pteron::vulkan
