#include "compiler/passes/quantized_linear.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "compiler/compile_error.h"
#include "compiler/ir/constant_values.h"
#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

[[noreturn]] void refuse(const ir::Node& n, const std::string& why) {
  throw CompileError(n.describe() + ": " + why);
}

const ir::Node* producer_op(const ir::Graph& g, ir::ValueId v, ir::OpName op) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return nullptr;
  const ir::Node& p = g.node(value.producer);
  return p.is(op) ? &p : nullptr;
}

std::optional<int64_t> optional_int(const ir::Argument& a) {
  if (a.is_none()) return std::nullopt;
  return static_cast<int64_t>(a.to_double());
}

// The integer weights behind dequantize_affine(Wq, [1, G], scale, zp, int8, qmin, qmax) of a
// 2-D constant, checked against what the kernels run; nullopt when `dq` does not read a
// constant (nothing to rewrite), CompileError when it does but cannot be run.
std::optional<QuantizedMatrix> torchao_weight(const ir::Graph& g, const ir::Node& dq) {
  const ir::Value& wq = g.value(dq.arg("input").tensor());
  if (!wq.is_constant()) return std::nullopt;
  if (wq.spec.rank() != 2) refuse(dq, "only 2-d quantized weights are supported");
  const int64_t rows = wq.spec.sizes[0], cols = wq.spec.sizes[1];
  const auto& block = dq.arg("block_size").get<std::vector<int64_t>>();
  if (block.size() != 2 || block[0] != 1 || block[1] < 1 || cols % block[1] != 0) {
    refuse(dq, "block size must be [1, G] with G dividing the row length " + std::to_string(cols));
  }
  const int64_t G = block[1];
  if (wq.spec.dtype != ScalarType::Char || !dq.arg("input_dtype").is<ScalarType>() ||
      dq.arg("input_dtype").get<ScalarType>() != ScalarType::Char) {
    refuse(dq, "quantized weights must be stored as int8");
  }
  if (dq.arg("output_dtype").is<ScalarType>() &&
      dq.arg("output_dtype").get<ScalarType>() != ScalarType::Float) {
    refuse(dq, "only float32 output is supported");
  }
  const int64_t qmin = optional_int(dq.arg("quant_min")).value_or(-128);
  const int64_t qmax = optional_int(dq.arg("quant_max")).value_or(127);
  const int bits = qmin >= -8 && qmax <= 7 ? 4 : 8;
  if (qmin < -128 || qmax > 127) refuse(dq, "weight range beyond int8");
  if (bits == 4 && G % 32 != 0) {
    refuse(dq, "int4 group size " + std::to_string(G) + " is not a multiple of 32");
  }
  const ir::Value& scale = g.value(dq.arg("scale").tensor());
  const int64_t groups = rows * (cols / G);
  if (!scale.is_constant() || scale.spec.dtype != ScalarType::Float ||
      scale.spec.numel() != groups) {
    refuse(dq, "scales must be a float32 constant with one value per group (" +
                   std::to_string(groups) + ")");
  }
  if (dq.arg("zero_point").is_tensor()) {
    const auto zp = ir::constant_values<double>(g.value(dq.arg("zero_point").tensor()));
    if (!zp || static_cast<int64_t>(zp->size()) != groups) {
      refuse(dq, "zero points must be a constant with one value per group");
    }
    for (double z : *zp) {
      if (z != 0.0) refuse(dq, "asymmetric weights (non-zero zero points) are not supported");
    }
  }
  QuantizedMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.group = G;
  m.bits = bits;
  m.q.resize(static_cast<size_t>(rows * cols));
  std::memcpy(m.q.data(), wq.constant->bytes.data(), m.q.size());
  for (int8_t q : m.q) {
    if (q < qmin || q > qmax) refuse(dq, "a weight lies outside [quant_min, quant_max]");
  }
  m.scales.resize(static_cast<size_t>(groups));
  std::memcpy(m.scales.data(), scale.constant->bytes.data(), m.scales.size() * sizeof(float));
  return m;
}

// The float input x of torchao's dynamic per-token int8 activation chain ending in `v`
// (dequantize_affine(quantize_affine(x, ...), ...) with choose_qparams_affine(x, ...)), and
// its eps; nullopt when `v` is not produced by dequantize_affine. CompileError for a chain of
// another kind.
struct DynamicActivation {
  ir::ValueId x;
  double eps;
};

std::optional<DynamicActivation> torchao_dynamic_activation(const ir::Graph& g, ir::ValueId v) {
  const ir::Node* dq = producer_op(g, v, ops::torchao::dequantize_affine);
  if (dq == nullptr) return std::nullopt;
  const ir::Node* q = producer_op(g, dq->arg("input").tensor(), ops::torchao::quantize_affine);
  if (q == nullptr || !q->arg("scale").is_tensor() || !q->arg("zero_point").is_tensor()) {
    refuse(*dq, "quantized activations must come from quantize_affine with a scale and zero point");
  }
  const ir::Value& s = g.value(q->arg("scale").tensor());
  const ir::Value& z = g.value(q->arg("zero_point").tensor());
  const ir::Node* cq =
      producer_op(g, q->arg("scale").tensor(), ops::torchao::choose_qparams_affine);
  const ir::ValueId x = q->arg("input").tensor();
  if (cq == nullptr || !z.is_intermediate() || z.producer != cq->id || s.producer_output != 0 ||
      z.producer_output != 1 || !cq->arg("input").is_tensor() || cq->arg("input").tensor() != x ||
      dq->arg("scale").tensor() != q->arg("scale").tensor() || !dq->arg("zero_point").is_tensor() ||
      dq->arg("zero_point").tensor() != q->arg("zero_point").tensor()) {
    refuse(*dq, "activation scale and zero point must be choose_qparams_affine of the same input");
  }
  const ir::Value& xv = g.value(x);
  if (xv.spec.dtype != ScalarType::Float || xv.spec.rank() < 1) {
    refuse(*dq, "dynamically quantized activations must be float32");
  }
  const int64_t K = xv.spec.sizes.back();
  std::vector<int64_t> per_token(xv.spec.rank(), 1);
  per_token.back() = K;
  for (const ir::Node* n : {cq, q, dq}) {
    if (n->arg("block_size").get<std::vector<int64_t>>() != per_token) {
      refuse(*n, "only per-token activation quantization (block [1, ..., 1, K]) is supported");
    }
  }
  if (!cq->arg("mapping_type").is<std::string>() ||
      cq->arg("mapping_type").get<std::string>() != "ASYMMETRIC") {
    refuse(*cq, "only ASYMMETRIC dynamic activations are supported");
  }
  auto range_is_int8 = [&](const ir::Node& n, std::string_view dtype_arg) {
    return n.arg(dtype_arg).is<ScalarType>() &&
           n.arg(dtype_arg).get<ScalarType>() == ScalarType::Char &&
           optional_int(n.arg("quant_min")).value_or(-128) == -128 &&
           optional_int(n.arg("quant_max")).value_or(127) == 127;
  };
  if (!range_is_int8(*cq, "target_dtype") || !range_is_int8(*q, "output_dtype") ||
      !range_is_int8(*dq, "input_dtype")) {
    refuse(*dq, "dynamic activations must be int8 in [-128, 127]");
  }
  if (!cq->arg("scale_dtype").is_none() &&
      cq->arg("scale_dtype").get<ScalarType>() != ScalarType::Float) {
    refuse(*cq, "activation scales must be float32");
  }
  const double eps =
      cq->arg("eps").is_none() ? static_cast<double>(FLT_MIN) : cq->arg("eps").to_double();
  if (!(eps > 0.0)) refuse(*cq, "eps must be positive");
  return DynamicActivation{x, eps};
}

std::vector<uint8_t> pack_int4(const QuantizedMatrix& m) {
  std::vector<uint8_t> out(static_cast<size_t>(m.rows * m.cols / 2));
  for (int64_t r = 0; r < m.rows; ++r) {
    const int8_t* q = m.q.data() + r * m.cols;
    uint8_t* dst = out.data() + r * m.cols / 2;
    for (int64_t b = 0; b < m.cols / 32; ++b) {
      for (int j = 0; j < 16; ++j) {
        const int lo = q[b * 32 + j] + 8, hi = q[b * 32 + 16 + j] + 8;
        dst[b * 16 + j] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
  return out;
}

// 8da4w weights in panels of 16 output channels (kernels/optimized/qlinear/qlinear_kernels.h):
// per panel and block of 8 weights along K, 64 bytes where byte 4c + i holds q(c, 8b + i) + 8
// (low nibble) and q(c, 8b + 4 + i) + 8 (high nibble); the last panel padded with q = 0. The
// scales [panels][groups][16], padded with 0.
constexpr int64_t kPanel = 16;

std::vector<uint8_t> pack_int4_panels(const QuantizedMatrix& m) {
  const int64_t panels = (m.rows + kPanel - 1) / kPanel, blocks = m.cols / 8;
  std::vector<uint8_t> out(static_cast<size_t>(panels * blocks * 64), 0x88);
  for (int64_t n = 0; n < m.rows; ++n) {
    const int8_t* q = m.q.data() + n * m.cols;
    uint8_t* panel = out.data() + (n / kPanel) * blocks * 64 + (n % kPanel) * 4;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < 4; ++i) {
        const int lo = q[b * 8 + i] + 8, hi = q[b * 8 + 4 + i] + 8;
        panel[b * 64 + i] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
  return out;
}

std::vector<float> panel_scales(const QuantizedMatrix& m) {
  const int64_t panels = (m.rows + kPanel - 1) / kPanel, groups = m.cols / m.group;
  std::vector<float> out(static_cast<size_t>(panels * groups * kPanel), 0.0f);
  for (int64_t n = 0; n < m.rows; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      out[static_cast<size_t>(((n / kPanel) * groups + g) * kPanel + n % kPanel)] =
          m.scales[static_cast<size_t>(n * groups + g)];
    }
  }
  return out;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// sum_k q_k * scale(k) per output channel: 8da4w's zero-point correction of the activations.
std::vector<float> weight_sums(const QuantizedMatrix& m) {
  std::vector<float> sums(static_cast<size_t>(m.rows));
  const int64_t groups = m.cols / m.group;
  for (int64_t r = 0; r < m.rows; ++r) {
    double s = 0.0;
    for (int64_t g = 0; g < groups; ++g) {
      int64_t qs = 0;
      for (int64_t k = g * m.group; k < (g + 1) * m.group; ++k)
        qs += m.q[static_cast<size_t>(r * m.cols + k)];
      s += static_cast<double>(m.scales[static_cast<size_t>(r * groups + g)]) *
           static_cast<double>(qs);
    }
    sums[static_cast<size_t>(r)] = static_cast<float>(s);
  }
  return sums;
}

// The kernels' constants for `matrices` of one shape (a linear's one, or an expert each),
// stacked: each tensor is `lead` followed by one matrix's layout (op_linear_quantized.cpp).
struct QuantizedConstants {
  ir::ValueId weight, scales, sums = ir::kNoValue;  // sums: 8da4w only
};

QuantizedConstants add_quantized_constants(ir::Graph& graph, const std::string& base,
                                           const std::vector<const QuantizedMatrix*>& matrices,
                                           QLinearKind kind, const std::vector<int64_t>& lead) {
  const QuantizedMatrix& m0 = *matrices.front();
  const int64_t groups = m0.cols / m0.group, panels = (m0.rows + kPanel - 1) / kPanel;
  std::vector<uint8_t> weight, scales, sums;
  for (const QuantizedMatrix* m : matrices) {
    const std::vector<uint8_t> w = kind == QLinearKind::A8W4  ? pack_int4_panels(*m)
                                   : kind == QLinearKind::Q4W ? pack_int4(*m)
                                                              : bytes_of(m->q);  // int8 rows
    const std::vector<uint8_t> s =
        bytes_of(kind == QLinearKind::A8W4 ? panel_scales(*m) : m->scales);
    weight.insert(weight.end(), w.begin(), w.end());
    scales.insert(scales.end(), s.begin(), s.end());
    if (kind == QLinearKind::A8W4) {
      const std::vector<uint8_t> ws = bytes_of(weight_sums(*m));
      sums.insert(sums.end(), ws.begin(), ws.end());
    }
  }
  auto shape = [&](std::initializer_list<int64_t> dims) {
    std::vector<int64_t> out = lead;
    out.insert(out.end(), dims);
    return out;
  };
  auto add = [&](const char* suffix, ScalarType dtype, std::vector<int64_t> sizes,
                 std::vector<uint8_t> bytes) {
    const std::string name = graph.unique_name(base + suffix);
    return graph.add_constant(name, ir::TensorSpec::contiguous(dtype, std::move(sizes)),
                              ir::ConstantData::owned(std::move(bytes), name));
  };
  QuantizedConstants c;
  switch (kind) {
    case QLinearKind::Q8W:
    case QLinearKind::A8W8:
      c.weight = add("_q8", ScalarType::Char, shape({m0.rows, m0.cols}), std::move(weight));
      break;
    case QLinearKind::Q4W:
      c.weight = add("_q4", ScalarType::Byte, shape({m0.rows, m0.cols / 2}), std::move(weight));
      break;
    case QLinearKind::A8W4:
      c.weight = add("_q4p", ScalarType::Byte, shape({panels, m0.cols / 8, 64}), std::move(weight));
      c.sums = add("_sums", ScalarType::Float, shape({m0.rows}), std::move(sums));
      break;
  }
  c.scales =
      add("_scales", ScalarType::Float,
          kind == QLinearKind::A8W4 ? shape({panels, groups, kPanel}) : shape({m0.rows, groups}),
          std::move(scales));
  return c;
}

}  // namespace

namespace {

const ir::OpSchema& linear_weight_only_schema(const char* name) {
  return register_single_output_op(name, {{"input", "Tensor"},
                                          {"weight", "Tensor"},
                                          {"scales", "Tensor"},
                                          {"bias", "Tensor?"},
                                          {"group_size", "int"}});
}

}  // namespace

const ir::OpSchema& linear_q8w_schema() {
  static const ir::OpSchema& s = linear_weight_only_schema("pteron::linear_q8w");
  return s;
}

const ir::OpSchema& linear_q4w_schema() {
  static const ir::OpSchema& s = linear_weight_only_schema("pteron::linear_q4w");
  return s;
}

const ir::OpSchema& linear_8da4w_schema() {
  static const ir::OpSchema& s =
      register_single_output_op("pteron::linear_8da4w", {{"input", "Tensor"},
                                                         {"weight", "Tensor"},
                                                         {"scales", "Tensor"},
                                                         {"weight_sums", "Tensor"},
                                                         {"bias", "Tensor?"},
                                                         {"group_size", "int"},
                                                         {"eps", "float"}});
  return s;
}

const ir::OpSchema& linear_8da8w_schema() {
  static const ir::OpSchema& s =
      register_single_output_op("pteron::linear_8da8w", {{"input", "Tensor"},
                                                         {"weight", "Tensor"},
                                                         {"scales", "Tensor"},
                                                         {"bias", "Tensor?"},
                                                         {"group_size", "int"},
                                                         {"eps", "float"}});
  return s;
}

const ir::OpSchema& grouped_mm_weight_only_schema(bool int4) {
  auto make = [](const char* name) {
    return &register_single_output_op(name, {{"input", "Tensor"},
                                             {"weight", "Tensor"},
                                             {"scales", "Tensor"},
                                             {"offs", "Tensor"},
                                             {"group_size", "int"}});
  };
  static const ir::OpSchema* q8 = make("pteron::grouped_mm_q8w");
  static const ir::OpSchema* q4 = make("pteron::grouped_mm_q4w");
  return int4 ? *q4 : *q8;
}

const ir::OpSchema& grouped_mm_8da4w_schema() {
  static const ir::OpSchema& s =
      register_single_output_op("pteron::grouped_mm_8da4w", {{"input", "Tensor"},
                                                             {"weight", "Tensor"},
                                                             {"scales", "Tensor"},
                                                             {"weight_sums", "Tensor"},
                                                             {"offs", "Tensor"},
                                                             {"group_size", "int"},
                                                             {"eps", "float"}});
  return s;
}

const ir::OpSchema& embedding_quantized_schema(bool int4) {
  static const ir::OpSchema& q8 = register_single_output_op(
      "pteron::embedding_q8w",
      {{"weight", "Tensor"}, {"scales", "Tensor"}, {"indices", "Tensor"}, {"group_size", "int"}});
  static const ir::OpSchema& q4 = register_single_output_op(
      "pteron::embedding_q4w",
      {{"weight", "Tensor"}, {"scales", "Tensor"}, {"indices", "Tensor"}, {"group_size", "int"}});
  return int4 ? q4 : q8;
}

QuantizedMatrix quantize_symmetric(const float* w, int64_t rows, int64_t cols, int64_t group,
                                   int bits) {
  if (group < 1 || cols % group != 0) {
    throw CompileError("group size " + std::to_string(group) + " does not divide the row length " +
                       std::to_string(cols));
  }
  if (bits == 4 && group % 32 != 0) {
    throw CompileError("int4 group size " + std::to_string(group) + " is not a multiple of 32");
  }
  const int qmin = bits == 4 ? -8 : -128, qmax = bits == 4 ? 7 : 127;
  const float half_range = static_cast<float>(qmax - qmin) / 2.0f;
  QuantizedMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.group = group;
  m.bits = bits;
  m.q.resize(static_cast<size_t>(rows * cols));
  m.scales.resize(static_cast<size_t>(rows * (cols / group)));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g0 = 0; g0 < cols; g0 += group) {
      const float* x = w + r * cols + g0;
      float lo = 0.0f, hi = 0.0f;
      for (int64_t k = 0; k < group; ++k) {
        lo = x[k] < lo ? x[k] : lo;
        hi = x[k] > hi ? x[k] : hi;
      }
      float scale = (-lo > hi ? -lo : hi) / half_range;
      scale = scale < FLT_MIN ? FLT_MIN : scale;
      m.scales[static_cast<size_t>(r * (cols / group) + g0 / group)] = scale;
      const float inv = 1.0f / scale;
      for (int64_t k = 0; k < group; ++k) {
        float q = std::nearbyint(x[k] * inv);
        q = q < static_cast<float>(qmin)
                ? static_cast<float>(qmin)
                : (q > static_cast<float>(qmax) ? static_cast<float>(qmax) : q);
        m.q[static_cast<size_t>(r * cols + g0 + k)] = static_cast<int8_t>(q);
      }
    }
  }
  return m;
}

void rewrite_as_quantized_linear(ir::Graph& graph, ir::NodeId linear, ir::ValueId input,
                                 const QuantizedMatrix& m, const ir::Argument& bias,
                                 QLinearKind kind, double eps) {
  const std::string base = graph.value(graph.node(linear).outputs[0]).name + "_weight";
  const QuantizedConstants c = add_quantized_constants(graph, base, {&m}, kind, {});
  if (kind == QLinearKind::A8W8) {
    graph.set_op(linear, linear_8da8w_schema(),
                 {ir::TensorRef{input}, ir::TensorRef{c.weight}, ir::TensorRef{c.scales}, bias,
                  m.group, eps});
    return;
  }
  if (kind != QLinearKind::A8W4) {
    graph.set_op(
        linear, kind == QLinearKind::Q4W ? linear_q4w_schema() : linear_q8w_schema(),
        {ir::TensorRef{input}, ir::TensorRef{c.weight}, ir::TensorRef{c.scales}, bias, m.group});
    return;
  }
  graph.set_op(linear, linear_8da4w_schema(),
               {ir::TensorRef{input}, ir::TensorRef{c.weight}, ir::TensorRef{c.scales},
                ir::TensorRef{c.sums}, bias, m.group, eps});
}

void rewrite_as_quantized_grouped_mm(ir::Graph& graph, ir::NodeId grouped, ir::ValueId input,
                                     ir::ValueId offs, const std::vector<QuantizedMatrix>& experts,
                                     QLinearKind kind, double eps) {
  if (kind == QLinearKind::A8W8) {  // no grouped kernel: no caller asks for one
    throw CompileError(graph.node(grouped).describe() + ": experts have no 8da8w kernel");
  }
  const std::string base = graph.value(graph.node(grouped).outputs[0]).name + "_experts";
  std::vector<const QuantizedMatrix*> matrices;
  for (const QuantizedMatrix& m : experts) matrices.push_back(&m);
  const int64_t count = static_cast<int64_t>(experts.size()), group = experts.front().group;
  const QuantizedConstants c = add_quantized_constants(graph, base, matrices, kind, {count});
  if (kind != QLinearKind::A8W4) {
    graph.set_op(grouped, grouped_mm_weight_only_schema(kind == QLinearKind::Q4W),
                 {ir::TensorRef{input}, ir::TensorRef{c.weight}, ir::TensorRef{c.scales},
                  ir::TensorRef{offs}, group});
    return;
  }
  graph.set_op(grouped, grouped_mm_8da4w_schema(),
               {ir::TensorRef{input}, ir::TensorRef{c.weight}, ir::TensorRef{c.scales},
                ir::TensorRef{c.sums}, ir::TensorRef{offs}, group, eps});
}

void rewrite_as_quantized_embedding(ir::Graph& graph, ir::NodeId embedding, ir::ValueId indices,
                                    const QuantizedMatrix& m) {
  const std::string base = graph.value(graph.node(embedding).outputs[0]).name + "_table";
  const QuantizedConstants c = add_quantized_constants(
      graph, base, {&m}, m.bits == 4 ? QLinearKind::Q4W : QLinearKind::Q8W, {});
  graph.set_op(embedding, embedding_quantized_schema(m.bits == 4),
               {ir::TensorRef{c.weight}, ir::TensorRef{c.scales}, ir::TensorRef{indices}, m.group});
}

int quantized_linear(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int rewritten = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    const ir::Node& node = graph.node(id);
    const std::string op = node.op.str();
    const bool is_linear = op == ops::aten::linear;
    const bool is_embedding = op == ops::aten::embedding;
    if (!is_linear && !is_embedding) continue;
    if (!node.arg("weight").is_tensor()) continue;  // linear and embedding both call it weight
    const ir::Node* dqw =
        producer_op(graph, node.arg("weight").tensor(), ops::torchao::dequantize_affine);
    if (dqw == nullptr || delegated.count(dqw->id)) continue;
    std::optional<QuantizedMatrix> m = torchao_weight(graph, *dqw);
    if (!m) continue;
    const ir::Value& out = graph.value(node.outputs[0]);
    if (out.spec.dtype != ScalarType::Float)
      refuse(node, "quantized weights need a float32 output");
    if (is_embedding) {
      const ir::ValueId indices = node.arg("indices").tensor();
      if (m->bits == 4 && m->cols % 32 != 0)
        refuse(node, "int4 table rows must be a multiple of 32");
      rewrite_as_quantized_embedding(graph, id, indices, *m);
      ++rewritten;
      continue;
    }
    const ir::Argument bias = node.arg("bias");
    std::optional<DynamicActivation> act =
        torchao_dynamic_activation(graph, node.arg("input").tensor());
    QLinearKind kind = m->bits == 4 ? QLinearKind::Q4W : QLinearKind::Q8W;
    ir::ValueId input = node.arg("input").tensor();
    // With the default decompositions the linear reads view(dequantize_affine(...), [M, K]):
    // the view then reads the float activations instead (per-token rows are the same rows).
    ir::NodeId row_view = ir::kNoNode;
    if (!act) {
      const ir::Value& in = graph.value(input);
      if (in.is_intermediate() && in.users.size() == 1) {
        const ir::Node& v = graph.node(in.producer);
        const std::string vop = v.op.str();
        if (vop == ops::aten::view && v.arg("self").is_tensor() && in.spec.rank() >= 1 &&
            graph.value(v.arg("self").tensor()).spec.rank() >= 1 &&
            graph.value(v.arg("self").tensor()).spec.sizes.back() == in.spec.sizes.back()) {
          act = torchao_dynamic_activation(graph, v.arg("self").tensor());
          if (act) row_view = v.id;
        }
      }
    }
    if (act) {
      kind = m->bits == 4 ? QLinearKind::A8W4 : QLinearKind::A8W8;
      if (row_view != ir::kNoNode) {
        graph.set_arg(row_view, 0, ir::TensorRef{act->x});
      } else {
        input = act->x;
      }
    }
    if (graph.value(input).spec.dtype != ScalarType::Float)
      refuse(node, "the input must be float32");
    rewrite_as_quantized_linear(graph, id, input, *m, bias, kind, act ? act->eps : FLT_MIN);
    ++rewritten;
  }
  if (rewritten > 0) remove_dead_code(graph);  // the int8 weights and the torchao chains
  return rewritten;
}

}  // namespace pteron::compiler
