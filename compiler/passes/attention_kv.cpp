#include "compiler/passes/attention_kv.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

bool is_graph_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

// The node computing `v` when v is an intermediate read only by one node (the chain's next
// step) and not a graph output; nullptr otherwise.
const ir::Node* private_producer(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate() || is_graph_output(g, v) || value.users.size() != 1) return nullptr;
  return &g.node(value.producer);
}

bool is_one_of(const ir::Node* n, std::initializer_list<ir::OpName> ops) {
  if (n == nullptr) return false;
  for (const ir::OpName o : ops) {
    if (n->is(o)) return true;
  }
  return false;
}

// Walks back through ops that keep the elements and their order (views, reshapes, clones).
ir::ValueId skip_views(const ir::Graph& g, ir::ValueId v,
                       const std::unordered_set<ir::NodeId>& delegated) {
  for (;;) {
    const ir::Node* p = private_producer(g, v);
    if (!is_one_of(p, {ops::aten::view, ops::aten::clone, ops::aten::alias}) ||
        delegated.count(p->id) || p->args.empty() || !p->arg("self").is_tensor() ||
        g.value(p->arg("self").tensor()).spec.numel() != g.value(v).spec.numel()) {
      return v;
    }
    v = p->arg("self").tensor();
  }
}

// x * c (or c * x) for a constant c: returns x and multiplies *scale by c; nullopt otherwise.
std::optional<ir::ValueId> constant_multiple(const ir::Graph& g, ir::ValueId v, double* scale,
                                             const std::unordered_set<ir::NodeId>& delegated) {
  const ir::Node* p = private_producer(g, v);
  if (!is_one_of(p, {ops::aten::mul_Scalar, ops::aten::mul_Tensor}) || delegated.count(p->id)) {
    return std::nullopt;
  }
  for (int side = 0; side < 2; ++side) {
    const ir::Argument& x = p->args[static_cast<size_t>(side)];
    const std::optional<double> c = constant_scalar(g, p->args[static_cast<size_t>(1 - side)]);
    if (c && x.is_tensor() && g.value(x.tensor()).spec.sizes == g.value(v).spec.sizes) {
      *scale *= *c;
      return x.tensor();
    }
  }
  return std::nullopt;
}

// A cache [B, Hkv, L, D] (float32, contiguous, static) read as [B, Hkv * rep, L, D] through
// expand(unsqueeze(cache, 2)) (transformers' repeat_kv), or directly (rep = 1). `v` is the
// repeated value (or a view of it with the same elements).
struct Cache {
  ir::ValueId value = ir::kNoValue;
  int64_t rep = 1;
};

std::optional<Cache> repeated_cache(const ir::Graph& g, ir::ValueId v,
                                    const std::unordered_set<ir::NodeId>& delegated) {
  auto usable = [&](ir::ValueId c) {
    const ir::TensorSpec& s = g.value(c).spec;
    return s.rank() == 4 && s.dtype == ScalarType::Float && s.is_contiguous() && !s.is_dynamic();
  };
  const ir::Node* expand = private_producer(g, v);
  if (is_one_of(expand, {ops::aten::expand, ops::aten::expand_copy}) &&
      !delegated.count(expand->id) && expand->arg("self").is_tensor()) {
    const ir::TensorSpec& out = g.value(v).spec;
    const ir::ValueId in = expand->arg("self").tensor();
    const ir::TensorSpec& ins = g.value(in).spec;
    // [B, Hkv, 1, L, D] -> [B, Hkv, rep, L, D]
    if (out.rank() != 5 || ins.rank() != 5 || ins.sizes[2] != 1 || out.is_dynamic() ||
        ins.sizes[0] != out.sizes[0] || ins.sizes[1] != out.sizes[1] ||
        ins.sizes[3] != out.sizes[3] || ins.sizes[4] != out.sizes[4]) {
      return std::nullopt;
    }
    const ir::Node* unsq = private_producer(g, in);
    if (!is_one_of(unsq, {ops::aten::unsqueeze, ops::aten::unsqueeze_copy, ops::aten::view}) ||
        delegated.count(unsq->id) || !unsq->arg("self").is_tensor()) {
      return std::nullopt;
    }
    const ir::ValueId cache = unsq->arg("self").tensor();
    const ir::TensorSpec& cs = g.value(cache).spec;
    if (!usable(cache) || cs.sizes[0] != ins.sizes[0] || cs.sizes[1] != ins.sizes[1] ||
        cs.sizes[2] != ins.sizes[3] || cs.sizes[3] != ins.sizes[4]) {
      return std::nullopt;
    }
    return Cache{cache, out.sizes[2]};
  }
  if (usable(v)) return Cache{v, 1};
  return std::nullopt;
}

struct Match {
  ir::ValueId k = ir::kNoValue, v = ir::kNoValue;
  int64_t heads = 0;
  double scale = 1.0;
  // q's constant scale, folded: the node reading the scaled q and the unscaled q it reads now.
  ir::NodeId q_reader = ir::kNoNode;
  size_t q_arg = 0;
  ir::ValueId q_unscaled = ir::kNoValue;
};

std::optional<Match> match(const ir::Graph& g, const ir::Node& sdpa,
                           const std::unordered_set<ir::NodeId>& delegated) {
  if (sdpa.op.str() != "pteron::sdpa.default" || sdpa.args.size() != 7) return std::nullopt;
  Match m;
  m.scale = sdpa.arg("scale").to_double();
  const ir::TensorSpec& q = g.value(sdpa.arg("q").tensor()).spec;     // [B * H, Lq, D]
  const ir::TensorSpec& kt = g.value(sdpa.arg("k_t").tensor()).spec;  // [B * H, D, Lk]

  // Keys: view(mul?(permute(view(repeat(cache)))) or mul? before the permute.
  ir::ValueId x = skip_views(g, sdpa.arg("k_t").tensor(), delegated);
  if (auto scaled = constant_multiple(g, x, &m.scale, delegated))
    x = skip_views(g, *scaled, delegated);
  const ir::Node* permute = private_producer(g, x);
  if (!is_one_of(permute, {ops::aten::permute, ops::aten::permute_copy}) ||
      delegated.count(permute->id)) {
    return std::nullopt;
  }
  const auto& dims = permute->arg("dims").get<std::vector<int64_t>>();
  if (dims != std::vector<int64_t>{0, 1, 3, 2} && dims != std::vector<int64_t>{0, 1, -1, -2}) {
    return std::nullopt;
  }
  x = skip_views(g, permute->arg("self").tensor(), delegated);
  if (auto scaled = constant_multiple(g, x, &m.scale, delegated))
    x = skip_views(g, *scaled, delegated);
  const std::optional<Cache> k = repeated_cache(g, x, delegated);
  if (!k) return std::nullopt;

  // Values: view(repeat(cache)).
  const std::optional<Cache> v =
      repeated_cache(g, skip_views(g, sdpa.arg("v").tensor(), delegated), delegated);
  if (!v) return std::nullopt;

  const ir::TensorSpec& ks = g.value(k->value).spec;  // [B, Hkv, Lk, D]
  const ir::TensorSpec& vs = g.value(v->value).spec;  // [B, Hkv, Lk, Dv]
  const int64_t B = ks.sizes[0], Hkv = ks.sizes[1], heads = Hkv * k->rep;
  if (k->rep != v->rep || vs.sizes[0] != B || vs.sizes[1] != Hkv || vs.sizes[2] != ks.sizes[2] ||
      vs.sizes[3] > 512 || q.rank() != 3 || kt.rank() != 3 || q.sym_size(0) != nullptr ||
      q.sizes[0] != B * heads || q.sizes[2] != ks.sizes[3] || kt.sizes[2] != ks.sizes[2]) {
    return std::nullopt;
  }
  // pteron::sdpa's heads say how its mask broadcasts ([N / heads, heads, Lq, Lk]); the same
  // split as the caches' or a mask that does not depend on the head.
  const int64_t sdpa_heads = sdpa.arg("heads").to_int();
  if (!sdpa.arg("mask").is_none() && sdpa_heads != heads) {
    const ir::TensorSpec& mask = g.value(sdpa.arg("mask").tensor()).spec;
    if (mask.rank() >= 3 && mask.sizes[mask.rank() - 3] != 1) return std::nullopt;
  }
  m.k = k->value;
  m.v = v->value;
  m.heads = heads;

  // q: a constant scale right before its views folds in too.
  ir::NodeId reader = sdpa.id;
  size_t arg = 0;
  ir::ValueId qv = sdpa.arg("q").tensor();
  for (;;) {  // the node reading the value just below the views
    const ir::Node* p = private_producer(g, qv);
    if (!is_one_of(p, {ops::aten::view, ops::aten::clone, ops::aten::alias}) ||
        delegated.count(p->id)) {
      break;
    }
    reader = p->id;
    arg = 0;
    qv = p->arg("self").tensor();
  }
  double q_scale = 1.0;
  if (auto unscaled = constant_multiple(g, qv, &q_scale, delegated)) {
    m.scale *= q_scale;
    m.q_reader = reader;
    m.q_arg = arg;
    m.q_unscaled = *unscaled;
  }
  return m;
}

}  // namespace

const ir::OpSchema& sdpa_kv_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::sdpa_kv", {{"q", "Tensor"},
                                                    {"k", "Tensor"},
                                                    {"v", "Tensor"},
                                                    {"mask", "Tensor?"},
                                                    {"scale", "float"},
                                                    {"heads", "int"},
                                                    {"safe_softmax", "bool"}});
  return functional;
}

int attention_kv(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int rewritten = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    const std::optional<Match> m = match(graph, graph.node(id), delegated);
    if (!m) continue;
    const ir::Node& sdpa = graph.node(id);
    std::vector<ir::Argument> args = {
        sdpa.arg("q"), ir::TensorRef{m->k},     ir::TensorRef{m->v}, sdpa.arg("mask"), m->scale,
        m->heads,      sdpa.arg("safe_softmax")};
    if (m->q_reader != ir::kNoNode)
      graph.set_arg(m->q_reader, m->q_arg, ir::TensorRef{m->q_unscaled});
    if (m->q_reader == id) args[0] = ir::TensorRef{m->q_unscaled};
    graph.set_op(id, sdpa_kv_schema(), std::move(args));
    ++rewritten;
  }
  if (rewritten > 0) remove_dead_code(graph);  // the copies of the caches and the scales
  return rewritten;
}

}  // namespace pteron::compiler
