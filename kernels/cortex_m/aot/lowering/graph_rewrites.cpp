// Rewrites of the lowered graph: pads folded into convolutions, transposes sunk through
// elementwise ops and cancelled, requantize pairs folded, the remaining Q/DQ made cortex_m ops.
#include <algorithm>

#include "compiler/passes/passes.h"
#include "kernels/cortex_m/aot/cortex_m_schemas.h"
#include "kernels/cortex_m/aot/lowering/lowering.h"
#include "kernels/cortex_m/util/broadcast_rows.h"

namespace pteron::cortex_m::aot::detail {

// pad (NCHW, H/W only, with the input's zero point) -> transpose to NHWC -> conv/depthwise conv
// becomes transpose -> conv with the pad's top/left added to the conv's padding and its extra
// bottom/right row taken by the kernel's bounds checks (TensorFlow SAME padding for stride 2,
// e.g. MobileNet's): no padded copy, and the transposes around it can then cancel.
void Lowering::fold_pads_into_convs() {
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id)) continue;
    const Node& conv = g_.node(id);
    const bool depthwise = conv.is(kQuantizedDepthwiseConv2d);
    if (!depthwise && !conv.is(kQuantizedConv2d)) continue;
    const ir::Value& nhwc = g_.value(conv.arg("input").tensor());
    if (!nhwc.is_intermediate() || nhwc.users.size() != 1) continue;
    const Node& t = g_.node(nhwc.producer);
    if (t.op.str() != "cortex_m::transpose.default" ||
        t.arg("perm").get<std::vector<int64_t>>() != std::vector<int64_t>{0, 2, 3, 1})
      continue;
    const ir::Value& padded = g_.value(t.arg("input").tensor());
    if (!padded.is_intermediate() || padded.users.size() != 1) continue;
    const Node& pad = g_.node(padded.producer);
    if (pad.op.str() != "cortex_m::pad.default") continue;
    const auto& pre = pad.arg("pre_pad").get<std::vector<int64_t>>();
    const auto& post = pad.arg("post_pad").get<std::vector<int64_t>>();
    const int64_t zero_point = -conv.arg("input_offset").to_int();
    if (pre.size() != 4 || pre[0] || pre[1] || post[0] || post[1] ||
        pad.arg("pad_value").to_int() != zero_point)
      continue;
    const auto& w = g_.value(conv.arg("weight").tensor()).spec.sizes;  // [O|1, kH, kW, I|C]
    std::vector<int64_t> padding = pair_arg(conv.arg("padding"), 0);
    bool ok = true;
    for (int d = 0; d < 2; ++d) {
      const int64_t extra = post[2 + d] - pre[2 + d];
      ok = ok && (extra == 0 || (extra == 1 && w[1 + d] > 1));
      padding[d] += pre[2 + d];
    }
    if (!ok) continue;
    const ValueId source = pad.arg("input").tensor();
    const auto& s = g_.value(source).spec.sizes;
    const NodeId transpose = t.id;
    g_.set_arg(transpose, 0, TensorRef{source});
    g_.set_spec(nhwc.id, int8_spec({s[0], s[2], s[3], s[1]}));
    g_.set_arg(id, 4, padding);
  }
  compiler::remove_dead_code(g_);
}

// add/mul of two inputs transposed the same way (NHWC conv outputs brought back to NCHW for a
// residual add) computes the same bytes on the untransposed inputs: the add moves before the
// transposes, one transpose follows it, and the transposes around it can then cancel. A unary
// op (a table, a clamp) of a transposed input moves the same way (a SiLU's sigmoid table, then
// its multiply, stay NHWC between two convolutions).
void Lowering::sink_transposes_through_elementwise() {
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id)) continue;
    const Node n = g_.node(id);  // a copy: adding nodes may move the graph's node storage
    const std::string op = n.op.str();
    const bool lut = op == "cortex_m::quantized_lut.default";
    if (lut || op == "cortex_m::quantized_clamp.default") {
      const ir::Value& v = g_.value(n.arg("input").tensor());
      if (!v.is_intermediate()) continue;
      const Node& t = g_.node(v.producer);
      if (t.op.str() != "cortex_m::transpose.default") continue;
      const std::vector<int64_t> perm = t.arg("perm").get<std::vector<int64_t>>();
      const ValueId source = t.arg("input").tensor();
      std::vector<Argument> args = n.args;
      args[n.arg_index("input")] = TensorRef{source};
      const ValueId out = n.outputs[0];
      const ValueId moved = new_node(lut ? "quantized_lut" : "quantized_clamp", std::move(args),
                                     int8_spec(g_.value(source).spec.sizes), n, id);
      const ValueId back =
          new_node("transpose", {TensorRef{moved}, perm}, g_.value(out).spec, n, id);
      g_.replace_all_uses(out, back);
      continue;
    }
    const bool add = op == "cortex_m::quantized_add.default";
    if (!add && op != "cortex_m::quantized_mul.default") continue;
    const size_t a = n.arg_index("self"), b = n.arg_index("other");
    std::vector<int64_t> perm;
    ValueId sources[2] = {ir::kNoValue, ir::kNoValue};
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
      const ir::Value& v = g_.value(n.args[k == 0 ? a : b].tensor());
      ok = v.is_intermediate();  // other users keep the transpose (or cancel it later)
      if (!ok) break;
      const Node& t = g_.node(v.producer);
      ok = t.op.str() == "cortex_m::transpose.default";
      if (!ok) break;
      const auto& p = t.arg("perm").get<std::vector<int64_t>>();
      ok = k == 0 || p == perm;
      perm = p;
      sources[k] = t.arg("input").tensor();
    }
    if (!ok) continue;
    // Add takes same-shape operands; mul also the second broadcast as rows, which the layout
    // change must keep (a squeeze-excite's [N, C, 1, 1] against [N, C, H, W] stays one in NHWC).
    const std::vector<int64_t>& full = g_.value(sources[0]).spec.sizes;
    const std::vector<int64_t>& second = g_.value(sources[1]).spec.sizes;
    BroadcastRows rows;
    if (add ? full != second
            : !broadcast_rows(full.data(), static_cast<int32_t>(full.size()), second.data(),
                              static_cast<int32_t>(second.size()), &rows))
      continue;
    std::vector<Argument> args = n.args;
    args[a] = TensorRef{sources[0]};
    args[b] = TensorRef{sources[1]};
    const ValueId out = n.outputs[0];
    const ValueId moved = new_node(add ? "quantized_add" : "quantized_mul", std::move(args),
                                   int8_spec(g_.value(sources[0]).spec.sizes), n, id);
    const ValueId back = new_node("transpose", {TensorRef{moved}, perm}, g_.value(out).spec, n, id);
    g_.replace_all_uses(out, back);
  }
  compiler::remove_dead_code(g_);
}

namespace {

// The int8 function of one int8 value that a chain of tables, clamps and requantizes computes,
// as its 256 results (entry c + 128 for code c), and the value the chain starts from.
struct UnaryChain {
  ValueId source;
  std::vector<int8_t> table;  // identity when the value is not such a chain's output
  int ops = 0;
};

UnaryChain unary_chain(const Graph& g, ValueId y) {
  std::vector<const Node*> chain;  // from y back to the source
  while (g.value(y).is_intermediate()) {
    const Node& n = g.node(g.value(y).producer);
    const std::string op = n.op.str();
    if (op == "cortex_m::quantized_lut.default") {
      const ir::Value& t = g.value(n.arg("table").tensor());
      if (!t.is_constant() || t.constant->bytes.size() != 256) break;
    } else if (op != "cortex_m::quantized_clamp.default" && op != "cortex_m::requantize.default") {
      break;
    }
    chain.push_back(&n);
    y = n.arg("input").tensor();
  }
  UnaryChain c{y, std::vector<int8_t>(256), static_cast<int>(chain.size())};
  for (int code = -128; code < 128; ++code) c.table[code + 128] = static_cast<int8_t>(code);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Node& n = **it;
    const auto arg = [&](const char* name) { return static_cast<int32_t>(n.arg(name).to_int()); };
    const std::string op = n.op.str();
    for (int8_t& v : c.table) {
      if (op == "cortex_m::quantized_lut.default") {
        v = static_cast<int8_t>(g.value(n.arg("table").tensor()).constant->bytes[v + 128]);
      } else if (op == "cortex_m::quantized_clamp.default") {
        v = static_cast<int8_t>(clamp_i32(v, arg("activation_min"), arg("activation_max")));
      } else {  // requantize.out's arithmetic
        const int32_t r = requantize(v - arg("input_zero_point"), arg("multiplier"), arg("shift")) +
                          arg("output_zero_point");
        v = static_cast<int8_t>(clamp_i32(r, arg("activation_min"), arg("activation_max")));
      }
    }
  }
  return c;
}

}  // namespace

// Functions of one int8 value that several kernels compute become one table (entry per code,
// computed with the kernels' own integer arithmetic, so bit for bit theirs):
// - quantized_mul(f(x), g(x)), f and g chains of tables, clamps and requantizes of x (or x
//   itself): PT2E quantizes a SiLU's sigmoid before its multiply (EfficientNet-B0 has 49), and
//   a hardswish comes as x times a table and two clamps;
// - a chain of two or more tables, clamps and requantizes (the hardswish's divide after it).
// Each was two to five kernels, each a pass over the tensor.
int Lowering::fold_int8_functions_into_tables() {
  int folded = 0;
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id)) continue;
    const Node n = g_.node(id);  // a copy: adding nodes may move the graph's node storage
    const std::string op = n.op.str();
    if (op == "cortex_m::quantized_lut.default" || op == "cortex_m::quantized_clamp.default" ||
        op == "cortex_m::requantize.default") {
      const UnaryChain chain = unary_chain(g_, n.outputs[0]);
      if (chain.ops < 2) continue;
      const ValueId values = add_constant(g_, g_.value(n.outputs[0]).name + "_table",
                                          ScalarType::Char, {256}, chain.table);
      g_.replace_all_uses(n.outputs[0],
                          new_node("quantized_lut", {TensorRef{chain.source}, TensorRef{values}},
                                   g_.value(n.outputs[0]).spec, n, id));
      ++folded;
      continue;
    }
    if (op != "cortex_m::quantized_mul.default") continue;
    const ValueId a = n.arg("self").tensor(), b = n.arg("other").tensor();
    if (g_.value(a).spec.sizes != g_.value(b).spec.sizes) continue;  // a broadcast multiply
    const UnaryChain f = unary_chain(g_, a), h = unary_chain(g_, b);
    if (f.source != h.source || f.ops + h.ops == 0) continue;
    const auto arg = [&](const char* name) { return static_cast<int32_t>(n.arg(name).to_int()); };
    const int32_t zp_a = arg("self_zero_point"), zp_b = arg("other_zero_point");
    std::vector<int8_t> table(256);
    for (size_t c = 0; c < 256; ++c) {
      const int32_t r = requantize((f.table[c] - zp_a) * (h.table[c] - zp_b),
                                   arg("output_multiplier"), arg("output_shift")) +
                        arg("output_zero_point");
      table[c] = static_cast<int8_t>(clamp_i32(r, kInt8Min, kInt8Max));
    }
    const ValueId values =
        add_constant(g_, g_.value(n.outputs[0]).name + "_table", ScalarType::Char, {256}, table);
    const ValueId y = new_node("quantized_lut", {TensorRef{f.source}, TensorRef{values}},
                               g_.value(n.outputs[0]).spec, n, id);
    g_.replace_all_uses(n.outputs[0], y);
    ++folded;
  }
  compiler::remove_dead_code(g_);
  return folded;
}

// transpose(transpose(x, p1), p2) with p1[p2[d]] == d is x: the NHWC round trips between
// neighbouring convolutions and pools disappear.
int Lowering::cancel_transposes() {
  int removed = 0;
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id)) continue;
    const Node& t2 = g_.node(id);
    if (t2.op.str() != "cortex_m::transpose.default") continue;
    const ir::Value& in = g_.value(t2.arg("input").tensor());
    if (!in.is_intermediate()) continue;
    const Node& t1 = g_.node(in.producer);
    if (t1.op.str() != "cortex_m::transpose.default") continue;
    const auto& p1 = t1.arg("perm").get<std::vector<int64_t>>();
    const auto& p2 = t2.arg("perm").get<std::vector<int64_t>>();
    bool identity = p1.size() == p2.size();
    for (size_t d = 0; identity && d < p2.size(); ++d) identity = p1[p2[d]] == int64_t(d);
    if (!identity) continue;
    const ValueId source = t1.arg("input").tensor();
    const ValueId result = t2.outputs[0];
    const bool is_output =
        std::find(g_.outputs().begin(), g_.outputs().end(), result) != g_.outputs().end();
    if (is_output) continue;  // outputs keep their own memory
    g_.replace_all_uses(result, source);
    g_.remove_node(id);
    ++removed;
  }
  compiler::remove_dead_code(g_);
  return removed;
}

// quantize(dequantize(q)) with the same qparams is q; with others it is an int8 requantize.
void Lowering::fold_requantize_pairs() {
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id) || near_delegated(id)) continue;
    const Node q = g_.node(id);
    if (!is_op(q, kQuant)) continue;
    auto x = dequantized(g_, q.arg("input").tensor());
    auto p = per_tensor_qparams(q);
    if (!x || !p) continue;
    const ValueId out = q.outputs[0];
    if (std::find(g_.outputs().begin(), g_.outputs().end(), out) != g_.outputs().end()) continue;
    if (x->p.zp == p->zp && x->p.scale == p->scale && x->p.qmin <= p->qmin &&
        x->p.qmax >= p->qmax) {
      g_.replace_all_uses(out, x->q);
      continue;
    }
    const Requant r = quantize_multiplier(x->p.scale / p->scale);
    if (r.shift > kMaxShift || r.shift < kMinShift) continue;
    const ValueId y = new_node("requantize",
                               {TensorRef{x->q}, x->p.zp, p->zp, int64_t{r.multiplier},
                                int64_t{r.shift}, p->qmin, p->qmax},
                               int8_spec(g_.value(out).spec.sizes), q, id);
    g_.replace_all_uses(out, y);
  }
  compiler::remove_dead_code(g_);
}

// The per-tensor int8 Q/DQ that remain (graph boundaries, around float ops) run as cortex_m
// kernels; ops with the same arguments.
int Lowering::convert_quant_nodes() {
  int converted = 0;
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (delegated_.count(id)) continue;
    const Node& n = g_.node(id);
    const bool q = is_op(n, kQuant), dq = is_op(n, kDequant);
    if ((!q && !dq) || !per_tensor_qparams(n)) continue;
    if (dq && n.args.size() > 6 && !n.arg("out_dtype").is_none() &&
        !(n.arg("out_dtype").is<ScalarType>() &&
          n.arg("out_dtype").get<ScalarType>() == ScalarType::Float)) {
      continue;
    }
    std::vector<Argument> args(n.args.begin(), n.args.begin() + 6);
    g_.set_op(id, cortex_m_op(q ? "quantize_per_tensor" : "dequantize_per_tensor"),
              std::move(args));
    ++converted;
  }
  return converted;
}

}  // namespace pteron::cortex_m::aot::detail
