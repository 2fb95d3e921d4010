#include "compiler/passes/fuse_attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// Bounded dynamic shapes: `sizes` holds upper bounds, so two dimensions are known equal only
// when their bounds and their symbolic sizes agree (static dimensions have no symbol).
std::string symbol(const ir::TensorSpec& spec, size_t d) {
  const ir::SymExpr* e = spec.sym_size(d);
  return e != nullptr ? e->str() : std::string();
}

bool same_dim(const ir::TensorSpec& a, size_t da, const ir::TensorSpec& b, size_t db) {
  return a.sizes[da] == b.sizes[db] && symbol(a, da) == symbol(b, db);
}

bool same_sizes(const ir::TensorSpec& a, const ir::TensorSpec& b) {
  if (a.rank() != b.rank()) return false;
  for (size_t d = 0; d < a.rank(); ++d) {
    if (!same_dim(a, d, b, d)) return false;
  }
  return true;
}

bool is_static_dim(const ir::TensorSpec& spec, size_t d) { return symbol(spec, d).empty(); }

// Walks back through ops that only reshape (same elements, same order): view, reshape,
// expand to the same element count, clone. Returns the first value another op computes.
ir::ValueId skip_reshapes(const ir::Graph& g, ir::ValueId v, std::vector<ir::NodeId>* chain,
                          const std::vector<ir::NodeId>& also_read_by = {}) {
  for (;;) {
    const ir::Node* p = private_producer(g, v, also_read_by);
    if (p == nullptr) return v;
    const bool expand = ir::any_overload_of(*p, {ops::aten::expand});
    const bool reshape =
        expand || ir::any_overload_of(*p, {ops::aten::view, ops::aten::clone, ops::aten::alias});
    if (!reshape || p->args.empty() || !p->arg("self").is_tensor()) return v;
    const ir::TensorSpec& in = g.value(p->arg("self").tensor()).spec;
    const ir::TensorSpec& out = g.value(v).spec;
    if (in.numel() != out.numel()) return v;
    // A dynamic expand keeps the element count only when it changes nothing (equal bounds do
    // not prove equal run-time sizes); views, clones and aliases always keep it.
    if (expand && (in.is_dynamic() || out.is_dynamic()) && !same_sizes(in, out)) {
      return v;
    }
    chain->push_back(p->id);
    v = p->arg("self").tensor();
  }
}

bool is_float32(const ir::Graph& g, ir::ValueId v) {
  return g.value(v).spec.dtype == ScalarType::Float;
}

struct Match {
  std::vector<ir::NodeId> chain;  // nodes the fused op replaces, from bmm2 back to bmm1
  ir::ValueId q, k_t, v, mask = ir::kNoValue;
  double scale = 1.0;
  int64_t heads = 1;
  bool safe_softmax = false;
  std::vector<ir::NodeId> guard;  // the safe-softmax guard's nodes reading the softmax's in/out
};

// torch's _safe_softmax, as nn.MultiheadAttention's math path exports it:
//   where(logical_not(any(logical_not(eq(x, -inf)), -1, keepdim)), full_like(s, 0), s)
// with s = _softmax(x, -1): rows whose every score is -inf give 0 instead of NaN. Returns the
// _softmax node computing s when `v` is that guard, adding the guard's nodes to m->chain (and
// those that read x or s besides the chain's own steps to m->guard).
const ir::Node* match_safe_softmax(const ir::Graph& g, ir::ValueId v, Match* m) {
  const ir::Node* where = private_producer(g, v);
  if (!is_op(where, ops::aten::where_self) || where->args.size() != 3) return nullptr;
  for (const ir::Argument& a : where->args) {
    if (!a.is_tensor()) return nullptr;
  }
  const ir::ValueId s = where->arg("other").tensor();
  const ir::Node* zeros = private_producer(g, where->arg("self").tensor());
  if (!is_op(zeros, ops::aten::full_like) || zeros->args.size() < 2 ||
      !zeros->arg("self").is_tensor() || zeros->arg("self").tensor() != s ||
      constant_scalar(g, zeros->arg("fill_value")) != 0.0) {
    return nullptr;
  }
  const ir::Node* softmax = private_producer(g, s, {zeros->id});
  if (!is_op(softmax, ops::aten::_softmax)) return nullptr;
  const ir::ValueId x = softmax->arg("self").tensor();
  const int64_t last = static_cast<int64_t>(g.value(x).spec.rank()) - 1;
  const ir::Node* not_any = private_producer(g, where->arg("condition").tensor());
  if (!is_op(not_any, ops::aten::logical_not)) return nullptr;
  const ir::Node* any = private_producer(g, not_any->arg("self").tensor());
  if (!is_op(any, ops::aten::any_dim) || any->args.size() < 3 || !any->arg("keepdim").is<bool>() ||
      !any->arg("keepdim").get<bool>()) {
    return nullptr;
  }
  const int64_t dim = any->arg("dim").to_int();
  if (dim != -1 && dim != last) return nullptr;
  const ir::Node* not_inf = private_producer(g, any->arg("self").tensor());
  if (!is_op(not_inf, ops::aten::logical_not)) return nullptr;
  const ir::Node* eq = private_producer(g, not_inf->arg("self").tensor());
  if (!is_op(eq, ops::aten::eq_Scalar) || !eq->arg("self").is_tensor() ||
      eq->arg("self").tensor() != x) {
    return nullptr;
  }
  const std::optional<double> inf = constant_scalar(g, eq->arg("other"));
  if (!inf || !std::isinf(*inf) || *inf > 0) return nullptr;
  m->chain.insert(m->chain.end(),
                  {where->id, zeros->id, not_any->id, any->id, not_inf->id, eq->id});
  m->guard = {zeros->id, eq->id};
  m->safe_softmax = true;
  return softmax;
}

// The scores' shape where the mask is applied decides how the mask broadcasts: [B, H, Lq, Lk]
// (heads = H) or [N, Lq, Lk] (heads = N). The mask must broadcast to it without growing it.
// `heads` becomes a constant of the fused op, so the dimension it comes from must be static.
bool mask_fits(const ir::Graph& g, ir::ValueId mask, const ir::TensorSpec& scores,
               const ir::TensorSpec& q, Match* m) {
  const ir::TensorSpec& ms = g.value(mask).spec;
  if (ms.rank() > scores.rank() || ms.rank() > 4) return false;
  for (size_t i = 0; i < ms.rank(); ++i) {
    const size_t at = scores.rank() - ms.rank() + i;
    const bool broadcast = ms.sizes[i] == 1 && is_static_dim(ms, i);
    if (!broadcast && !same_dim(ms, i, scores, at)) return false;
  }
  if (scores.rank() == 4) {
    if (!is_static_dim(scores, 1) || scores.sizes[0] * scores.sizes[1] != q.sizes[0]) return false;
    m->heads = scores.sizes[1];
  } else if (scores.rank() == 3) {
    if (!is_static_dim(q, 0)) return false;
    m->heads = q.sizes[0];
  } else {
    return false;
  }
  return true;
}

// Matches the chain that ends in `bmm2` (the softmax(...) @ v product).
std::optional<Match> match_attention(const ir::Graph& g, const ir::Node& bmm2) {
  if (!bmm2.is(ops::aten::bmm)) return std::nullopt;
  Match m;
  m.v = bmm2.arg("mat2").tensor();
  const ir::ValueId probs = skip_reshapes(g, bmm2.arg("self").tensor(), &m.chain);
  const ir::Node* softmax = match_safe_softmax(g, probs, &m);
  if (softmax == nullptr) softmax = private_producer(g, probs);
  if (!is_op(softmax, ops::aten::_softmax)) return std::nullopt;
  m.chain.push_back(softmax->id);
  const ir::ValueId masked = softmax->arg("self").tensor();
  const int64_t rank = static_cast<int64_t>(g.value(masked).spec.rank());
  const int64_t dim = softmax->arg("dim").to_int();
  if ((dim != -1 && dim != rank - 1) || softmax->arg("half_to_float").get<bool>())
    return std::nullopt;

  // Optional mask.
  ir::ValueId scaled = masked;
  const ir::Node* p = private_producer(g, masked, m.guard);
  ir::ValueId mask = ir::kNoValue;
  if (p != nullptr && p->is(ops::aten::where_self)) {
    const std::optional<double> fill = constant_scalar(g, p->arg("self"));
    if (fill && std::isinf(*fill) && *fill < 0 && p->arg("other").is_tensor() &&
        g.value(p->arg("condition").tensor()).spec.dtype == ScalarType::Bool) {
      mask = p->arg("condition").tensor();
      scaled = p->arg("other").tensor();
    }
  } else if (p != nullptr && p->is(ops::aten::masked_fill_Scalar)) {
    const std::optional<double> fill = constant_scalar(g, p->arg("value"));
    if (fill && std::isinf(*fill) && *fill < 0) {
      mask = p->arg("mask").tensor();
      scaled = p->arg("self").tensor();
    }
  } else if (p != nullptr && p->is(ops::aten::add_Tensor) && p->arg("other").is_tensor() &&
             constant_scalar(g, p->arg("alpha")) == 1.0) {
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
  const ir::TensorSpec mask_point = g.value(scaled).spec;

  // Optional scale by a constant.
  ir::ValueId scores = scaled;
  p = private_producer(g, scaled, m.guard);
  if (p != nullptr) {
    const std::string op = p->op.str();
    const bool mul = op == ops::aten::mul_Tensor || op == ops::aten::mul_Scalar;
    const bool div = op == ops::aten::div_Tensor || op == ops::aten::div_Scalar;
    if (mul || div) {
      std::optional<double> c = constant_scalar(g, p->arg("other"));
      ir::ValueId x = p->arg("self").is_tensor() ? p->arg("self").tensor() : ir::kNoValue;
      if (!c && mul && p->arg("other").is_tensor()) {  // constant * scores
        c = constant_scalar(g, p->arg("self"));
        x = p->arg("other").tensor();
      }
      if (c && x != ir::kNoValue && same_sizes(g.value(x).spec, g.value(scaled).spec)) {
        m.scale = div ? 1.0 / *c : *c;
        scores = x;
        m.chain.push_back(p->id);
      }
    }
  }

  const ir::Node* bmm1 = private_producer(g, skip_reshapes(g, scores, &m.chain, m.guard), m.guard);
  if (bmm1 == nullptr || !bmm1->is(ops::aten::bmm)) return std::nullopt;
  m.chain.push_back(bmm1->id);
  m.q = bmm1->arg("self").tensor();
  m.k_t = bmm1->arg("mat2").tensor();
  const ir::TensorSpec& q = g.value(m.q).spec;
  const ir::TensorSpec& kt = g.value(m.k_t).spec;
  const ir::TensorSpec& v = g.value(m.v).spec;
  if (q.rank() != 3 || kt.rank() != 3 || v.rank() != 3) return std::nullopt;
  // The bmms already require these equal at run time; the value head size's bound must fit
  // the kernel's.
  if (!same_dim(kt, 0, q, 0) || !same_dim(v, 0, q, 0) || !same_dim(kt, 1, q, 2) ||
      !same_dim(v, 1, kt, 2) || v.sizes[2] > 512) {
    return std::nullopt;
  }
  for (ir::ValueId t : {m.q, m.k_t, m.v, bmm2.outputs[0]}) {
    if (!is_float32(g, t)) return std::nullopt;
  }
  if (mask != ir::kNoValue) {
    if (!mask_fits(g, mask, mask_point, q, &m)) return std::nullopt;
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
                                                 {"heads", "int"},
                                                 {"safe_softmax", "bool"}});
  return functional;
}

int fuse_attention(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    std::optional<Match> m = match_attention(graph, graph.node(id));
    if (!m) continue;
    bool touches_delegate = false;
    for (ir::NodeId n : m->chain) touches_delegate = touches_delegate || delegated.count(n) > 0;
    if (touches_delegate) continue;
    const ir::Argument mask =
        m->mask == ir::kNoValue ? ir::Argument(ir::None{}) : ir::Argument(ir::TensorRef{m->mask});
    graph.set_op(id, sdpa_schema(),
                 {ir::TensorRef{m->q}, ir::TensorRef{m->k_t}, ir::TensorRef{m->v}, mask, m->scale,
                  m->heads, m->safe_softmax});
    // The chain's nodes now have no users (each intermediate was read only by the next step).
    for (ir::NodeId n : m->chain) {
      if (!graph.has_node(n)) continue;
      const std::vector<ir::ValueId>& outs = graph.node(n).outputs;
      if (std::all_of(outs.begin(), outs.end(),
                      [&](ir::ValueId v) { return is_unused(graph, v); })) {
        graph.remove_node(n);
      }
    }
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
