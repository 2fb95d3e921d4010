// Convolutions (plain and depthwise) and max/average/global pools onto the NHWC int8 kernels.
#include <algorithm>

#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {

bool Lowering::conv(const Node& n) {
  auto x = dequantized(g_, n.arg("input").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, true);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (n.arg("transposed").get<bool>()) return keep("transposed convolution");
  const int64_t groups = n.arg("groups").get<int64_t>();
  auto w = quantized_weight(g_, n.arg("weight").tensor());
  if (!w || w->sizes.size() != 4) return keep("weight is not a dequantized int8 constant");
  if (w->zp != 0) return keep("weights are not symmetric (zero point != 0)");
  const std::vector<int64_t> in_sizes = g_.value(x->q).spec.sizes;
  if (in_sizes.size() != 4) return keep("input is not 4-D");
  const int64_t cin = in_sizes[1], cout = w->sizes[0], kh = w->sizes[2], kw = w->sizes[3];
  const bool depthwise = groups > 1 && groups == cin && w->sizes[1] == 1 && cout % cin == 0;
  if (groups != 1 && !depthwise) return keep("grouped convolution");
  auto bias = quantized_bias(g_, n.arg("bias"), x->p.scale, *w);
  if (!bias) return keep("bias is not a float or int32 constant");
  auto rq = channel_requant(x->p.scale, w->scales, out->p.scale);
  if (!rq) return keep("requantisation scale out of range");
  const auto stride = pair_arg(n.arg("stride"), 1), padding = pair_arg(n.arg("padding"), 0),
             dilation = pair_arg(n.arg("dilation"), 1);

  // Weights in the kernels' layouts: OHWI, or [1, kH, kW, Cout] for depthwise.
  std::vector<int8_t> wt(w->data.size());
  const int64_t ci = w->sizes[1];
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < ci; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xx = 0; xx < kw; ++xx) {
          const int8_t v = w->data[((o * ci + i) * kh + y) * kw + xx];
          if (depthwise)
            wt[(y * kw + xx) * cout + o] = v;
          else
            wt[((o * kh + y) * kw + xx) * ci + i] = v;
        }
  const std::string base = n.debug.node_name.empty() ? "conv" : n.debug.node_name;
  const ValueId wv = add_constant(
      g_, base + "_weight_q", ScalarType::Char,
      depthwise ? std::vector<int64_t>{1, kh, kw, cout} : std::vector<int64_t>{cout, kh, kw, ci},
      wt);
  Argument bias_arg = ir::None{};
  if (!bias->empty())
    bias_arg = TensorRef{add_constant(g_, base + "_bias_q", ScalarType::Int, {cout}, *bias)};
  const ValueId mv = add_constant(g_, base + "_multipliers", ScalarType::Int, {cout}, rq->first);
  const ValueId sv = add_constant(g_, base + "_shifts", ScalarType::Int, {cout}, rq->second);

  const std::vector<int64_t> out_sizes = g_.value(g_.node(out->quant).outputs[0]).spec.sizes;
  const NodeId before = out->quant;
  const ValueId xin = to_nhwc(x->q, n, before);
  std::vector<Argument> args = {TensorRef{xin}, TensorRef{wv}, bias_arg, stride, padding, dilation};
  if (depthwise) args.push_back(cout / cin);
  args.insert(args.end(), {Argument(-x->p.zp), Argument(out->p.zp), Argument(TensorRef{mv}),
                           Argument(TensorRef{sv}), Argument(out->act_min), Argument(out->act_max),
                           Argument(ir::None{})});
  const ValueId y = new_node(
      depthwise ? "quantized_depthwise_conv2d_nhwc" : "quantized_conv2d_nhwc", std::move(args),
      int8_spec({out_sizes[0], out_sizes[2], out_sizes[3], out_sizes[1]}), n, before);
  finish(*out, to_nchw(y, n, before));
  return true;
}

bool Lowering::max_pool(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, true);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
  if (n.arg("ceil_mode").get<bool>()) return keep("ceil_mode");
  if (g_.value(x->q).spec.rank() != 4) return keep("input is not 4-D");
  const auto kernel = pair_arg(n.arg("kernel_size"), 1);
  std::vector<int64_t> stride = pair_arg(n.arg("stride"), 0);
  if (stride[0] == 0) stride = kernel;
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const std::vector<int64_t> os = g_.value(q_out).spec.sizes;
  const NodeId before = out->quant;
  const ValueId xin = to_nhwc(x->q, n, before);
  const ValueId y = new_node(
      "quantized_max_pool2d_nhwc",
      {TensorRef{xin}, kernel, stride, pair_arg(n.arg("padding"), 0),
       pair_arg(n.arg("dilation"), 1), false, x->p.zp, out->p.zp, out->act_min, out->act_max},
      int8_spec({os[0], os[2], os[3], os[1]}), n, before);
  finish(*out, to_nchw(y, n, before));
  return true;
}

bool Lowering::avg_pool(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  // The mean keeps the input's qparams; a requantize follows when the output has its own.
  const bool same = same_qparams(x->p, out->p);
  const Requant to_out = quantize_multiplier(x->p.scale / out->p.scale);
  if (!same && (to_out.shift > kMaxShift || to_out.shift < kMinShift)) {
    return keep("output scale out of range");
  }
  const std::vector<int64_t> is = g_.value(x->q).spec.sizes;
  if (is.size() != 4) return keep("input is not 4-D");
  const std::string op = n.op.str();
  std::vector<int64_t> kernel, stride, padding = {0, 0};
  bool pad_explicitly = false;
  if (op == ops::aten::avg_pool2d) {
    kernel = pair_arg(n.arg("kernel_size"), 1);
    stride = pair_arg(n.arg("stride"), 0);
    if (stride[0] == 0) stride = kernel;
    padding = pair_arg(n.arg("padding"), 0);
    if (n.arg("ceil_mode").get<bool>()) return keep("ceil_mode");
    if (!n.arg("divisor_override").is_none()) return keep("divisor_override");
    pad_explicitly = n.arg("count_include_pad").get<bool>() && (padding[0] || padding[1]);
  } else if (op == ops::aten::mean_dim) {
    // mean over H and W: a global average pool ([N, C] without keepdim, the same bytes as the
    // pool's NHWC [N, 1, 1, C]).
    if (!n.arg("dim").is<std::vector<int64_t>>()) return keep("mean over every dim");
    const auto& dims = n.arg("dim").get<std::vector<int64_t>>();
    std::vector<int64_t> d;
    for (int64_t v : dims) d.push_back(v < 0 ? v + 4 : v);
    std::sort(d.begin(), d.end());
    if (d != std::vector<int64_t>{2, 3}) return keep("not a global pool");
    kernel = stride = {is[2], is[3]};
  } else {
    const auto size = n.arg("output_size").get<std::vector<int64_t>>();
    if (size != std::vector<int64_t>{1, 1}) return keep("adaptive pool to more than 1x1");
    kernel = stride = {is[2], is[3]};
  }
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const std::vector<int64_t> os = g_.value(q_out).spec.sizes;
  const bool flat = os.size() == 2;  // a mean without keepdim: [N, C]
  const std::vector<int64_t> nhwc = flat ? std::vector<int64_t>{os[0], 1, 1, os[1]}
                                         : std::vector<int64_t>{os[0], os[2], os[3], os[1]};
  const NodeId before = out->quant;
  ValueId src = x->q;
  if (pad_explicitly) {  // torch counts the padding: pad with the zero point (real 0)
    const std::vector<int64_t> pads = {0, 0, padding[0], padding[1]};
    src = new_node("pad", {TensorRef{src}, pads, pads, x->p.zp},
                   int8_spec({is[0], is[1], is[2] + 2 * padding[0], is[3] + 2 * padding[1]}), n,
                   before);
    padding = {0, 0};
  }
  const ValueId xin = to_nhwc(src, n, before);
  const Requant r = quantize_multiplier(x->p.scale);
  ValueId y = new_node("quantized_avg_pool2d_nhwc",
                       {TensorRef{xin}, kernel, stride, padding, false, x->p.zp,
                        int64_t{r.multiplier}, int64_t{r.shift}, ir::None{}},
                       int8_spec(nhwc), n, before);
  if (!same) {
    y = new_node("requantize",
                 {TensorRef{y}, x->p.zp, out->p.zp, int64_t{to_out.multiplier},
                  int64_t{to_out.shift}, out->p.qmin, out->p.qmax},
                 int8_spec(nhwc), n, before);
  }
  if (!flat) {
    finish(*out, to_nchw(y, n, before));
    return true;
  }
  const NodeId view = g_.add_node(
      *ir::OpSchemaRegistry::global().find(ops::aten::view_copy), {TensorRef{y}, os},
      {NewValue{g_.unique_name(g_.value(q_out).name + "_int8"), int8_spec(os)}}, n.debug, before);
  finish(*out, g_.node(view).outputs[0]);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
