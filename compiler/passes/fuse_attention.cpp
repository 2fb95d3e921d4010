#include "compiler/passes/fuse_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "compiler/passes/custom_op_schema.h"

namespace pteron::compiler {
namespace {

bool is_graph_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

// The node computing `v` when the chain may absorb it: v is an intermediate read only by the
// next step of the chain and not a graph output.
const ir::Node* private_producer(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate() || value.users.size() != 1 || is_graph_output(g, v)) return nullptr;
  return &g.node(value.producer);
}

// Walks back through ops that only reshape (same elements, same order): view, reshape,
// expand to the same element count, clone. Returns the first value another op computes.
ir::ValueId skip_reshapes(const ir::Graph& g, ir::ValueId v, std::vector<ir::NodeId>* chain) {
  for (;;) {
    const ir::Node* p = private_producer(g, v);
    if (p == nullptr) return v;
    const std::string name = p->op.ns + "::" + p->op.name;
    const bool reshape = name == "aten::view" || name == "aten::_unsafe_view" ||
                         name == "aten::reshape" || name == "aten::expand" ||
                         name == "aten::clone" || name == "aten::alias";
    if (!reshape || p->args.empty() || !p->args[0].is_tensor()) return v;
    if (g.value(p->args[0].tensor()).spec.numel() != g.value(v).spec.numel()) return v;
    chain->push_back(p->id);
    v = p->args[0].tensor();
  }
}

// A one-element float32 constant's value, or a Scalar/number argument's.
std::optional<double> constant_scalar(const ir::Graph& g, const ir::Argument& a) {
  if (a.is<ir::Scalar>() || a.is<double>() || a.is<int64_t>()) return a.to_double();
  if (!a.is_tensor()) return std::nullopt;
  const ir::Value& v = g.value(a.tensor());
  if (!v.is_constant() || v.spec.numel() != 1 || v.spec.dtype != ScalarType::Float ||
      v.constant->bytes.size() < sizeof(float)) {
    return std::nullopt;
  }
  float f;
  std::memcpy(&f, v.constant->bytes.data(), sizeof(f));
  return f;
}

bool is_float32(const ir::Graph& g, ir::ValueId v) {
  return g.value(v).spec.dtype == ScalarType::Float;
}

struct Match {
  std::vector<ir::NodeId> chain;  // nodes the fused op replaces, from bmm2 back to bmm1
  ir::ValueId q, k_t, v, mask = ir::kNoValue;
  double scale = 1.0;
  int64_t heads = 1;
};

// The scores' shape where the mask is applied decides how the mask broadcasts: [B, H, Lq, Lk]
// (heads = H) or [N, Lq, Lk] (heads = N). The mask must broadcast to it without growing it.
bool mask_fits(const ir::Graph& g, ir::ValueId mask, const std::vector<int64_t>& scores, int64_t n,
               Match* m) {
  const std::vector<int64_t>& ms = g.value(mask).spec.sizes;
  if (ms.size() > scores.size() || ms.size() > 4) return false;
  for (size_t i = 0; i < ms.size(); ++i) {
    const int64_t s = scores[scores.size() - ms.size() + i];
    if (ms[i] != s && ms[i] != 1) return false;
  }
  if (scores.size() == 4) {
    if (scores[0] * scores[1] != n) return false;
    m->heads = scores[1];
  } else if (scores.size() == 3) {
    m->heads = n;
  } else {
    return false;
  }
  return true;
}

// Matches the chain that ends in `bmm2` (the softmax(...) @ v product).
std::optional<Match> match_attention(const ir::Graph& g, const ir::Node& bmm2) {
  if (bmm2.op.str() != "aten::bmm.default") return std::nullopt;
  Match m;
  m.v = bmm2.args[1].tensor();
  const ir::Node* softmax = private_producer(g, skip_reshapes(g, bmm2.args[0].tensor(), &m.chain));
  if (softmax == nullptr || softmax->op.str() != "aten::_softmax.default") return std::nullopt;
  m.chain.push_back(softmax->id);
  const ir::ValueId masked = softmax->args[0].tensor();
  const int64_t rank = static_cast<int64_t>(g.value(masked).spec.rank());
  const int64_t dim = softmax->args[1].to_int();
  if ((dim != -1 && dim != rank - 1) || softmax->args[2].get<bool>()) return std::nullopt;

  // Optional mask.
  ir::ValueId scaled = masked;
  const ir::Node* p = private_producer(g, masked);
  ir::ValueId mask = ir::kNoValue;
  if (p != nullptr && p->op.str() == "aten::where.self") {
    const std::optional<double> fill = constant_scalar(g, p->args[1]);
    if (fill && std::isinf(*fill) && *fill < 0 && p->args[2].is_tensor() &&
        g.value(p->args[0].tensor()).spec.dtype == ScalarType::Bool) {
      mask = p->args[0].tensor();
      scaled = p->args[2].tensor();
    }
  } else if (p != nullptr && p->op.str() == "aten::masked_fill.Scalar") {
    const std::optional<double> fill = constant_scalar(g, p->args[2]);
    if (fill && std::isinf(*fill) && *fill < 0) {
      mask = p->args[1].tensor();
      scaled = p->args[0].tensor();
    }
  } else if (p != nullptr && p->op.str() == "aten::add.Tensor" && p->args[1].is_tensor() &&
             constant_scalar(g, p->args[2]) == 1.0) {
    // Either operand may be the scores: the other one must not lead back to a bmm.
    for (int side = 0; side < 2; ++side) {
      const ir::ValueId s = p->args[static_cast<size_t>(side)].tensor();
      const ir::ValueId other = p->args[static_cast<size_t>(1 - side)].tensor();
      if (!is_float32(g, other) || g.value(s).spec != g.value(masked).spec) continue;
      if (private_producer(g, s) == nullptr) continue;
      mask = other;
      scaled = s;
      break;
    }
  }
  if (mask != ir::kNoValue) m.chain.push_back(p->id);
  const std::vector<int64_t> mask_point = g.value(scaled).spec.sizes;

  // Optional scale by a constant.
  ir::ValueId scores = scaled;
  p = private_producer(g, scaled);
  if (p != nullptr) {
    const std::string op = p->op.str();
    const bool mul = op == "aten::mul.Tensor" || op == "aten::mul.Scalar";
    const bool div = op == "aten::div.Tensor" || op == "aten::div.Scalar";
    if (mul || div) {
      std::optional<double> c = constant_scalar(g, p->args[1]);
      ir::ValueId x = p->args[0].is_tensor() ? p->args[0].tensor() : ir::kNoValue;
      if (!c && mul && p->args[1].is_tensor()) {  // constant * scores
        c = constant_scalar(g, p->args[0]);
        x = p->args[1].tensor();
      }
      if (c && x != ir::kNoValue && g.value(x).spec.sizes == g.value(scaled).spec.sizes) {
        m.scale = div ? 1.0 / *c : *c;
        scores = x;
        m.chain.push_back(p->id);
      }
    }
  }

  const ir::Node* bmm1 = private_producer(g, skip_reshapes(g, scores, &m.chain));
  if (bmm1 == nullptr || bmm1->op.str() != "aten::bmm.default") return std::nullopt;
  m.chain.push_back(bmm1->id);
  m.q = bmm1->args[0].tensor();
  m.k_t = bmm1->args[1].tensor();
  const auto& q = g.value(m.q).spec.sizes;
  const auto& kt = g.value(m.k_t).spec.sizes;
  const auto& v = g.value(m.v).spec.sizes;
  if (q.size() != 3 || kt.size() != 3 || v.size() != 3) return std::nullopt;
  if (kt[0] != q[0] || v[0] != q[0] || kt[1] != q[2] || v[1] != kt[2] || v[2] > 512) {
    return std::nullopt;
  }
  for (ir::ValueId t : {m.q, m.k_t, m.v, bmm2.outputs[0]}) {
    if (!is_float32(g, t)) return std::nullopt;
  }
  if (mask != ir::kNoValue) {
    if (!mask_fits(g, mask, mask_point, q[0], &m)) return std::nullopt;
    m.mask = mask;
  }
  return m;
}

}  // namespace

const ir::OpSchema& sdpa_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::sdpa", {{"q", "Tensor"},
                                                 {"k_t", "Tensor"},
                                                 {"v", "Tensor"},
                                                 {"mask", "Tensor?"},
                                                 {"scale", "float"},
                                                 {"heads", "int"}});
  return functional;
}

int fuse_attention(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    if (graph.is_dynamic_node(id)) continue;  // sizes are upper bounds, not exact
    std::optional<Match> m = match_attention(graph, graph.node(id));
    if (!m) continue;
    bool touches_delegate = false;
    for (ir::NodeId n : m->chain) touches_delegate = touches_delegate || delegated.count(n) > 0;
    if (touches_delegate) continue;
    const ir::Argument mask =
        m->mask == ir::kNoValue ? ir::Argument(ir::None{}) : ir::Argument(ir::TensorRef{m->mask});
    graph.set_op(id, sdpa_schema(),
                 {ir::TensorRef{m->q}, ir::TensorRef{m->k_t}, ir::TensorRef{m->v}, mask, m->scale,
                  m->heads});
    // The chain's nodes now have no users (each intermediate was read only by the next step).
    for (ir::NodeId n : m->chain) {
      if (!graph.has_node(n)) continue;
      bool used = false;
      for (ir::ValueId out : graph.node(n).outputs) {
        used = used || (out != ir::kNoValue &&
                        (!graph.value(out).users.empty() || is_graph_output(graph, out)));
      }
      if (!used) graph.remove_node(n);
    }
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
