// upsample_nearest2d / upsample_bilinear2d on int8 values: the cortex_m NHWC kernels over
// constant tables of torch's source positions.
#include "kernels/cortex_m/aot/lowering/lowering.h"
#include "kernels/cortex_m/aot/upsample_tables.h"

namespace pteron::cortex_m::aot::detail {

// upsample_nearest2d / upsample_bilinear2d (.vec: output_size or scale factors) on NCHW int8:
// the NHWC kernels over a constant table of torch's source positions (upsample_tables.h).
// Nearest copies bytes (a requantize follows when the output has its own qparams); bilinear
// requantises its Q22 sums by input_scale / (output_scale * 2^22).
bool Lowering::upsample(const Node& n, bool bilinear) {
  auto x = dequantized(g_, n.arg("input").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (out->p.qmin != -128 || out->p.qmax != 127) return keep("output range is not int8's");
  const std::vector<int64_t> is = g_.value(x->q).spec.sizes;
  if (is.size() != 4) return keep("input is not 4-D");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const std::vector<int64_t> os = g_.value(q_out).spec.sizes;
  if (os.size() != 4 || os[0] != is[0] || os[1] != is[1])
    return keep("output is not [N, C, OH, OW]");
  double scale_h = 0, scale_w = 0;
  const Argument& scales = n.arg("scale_factors");
  if (!scales.is_none()) {
    const auto& v = scales.get<std::vector<double>>();
    if (v.size() != 2) return keep("scale_factors is not [h, w]");
    scale_h = v[0], scale_w = v[1];
  }
  const UpsampleAxis ah{is[2], os[2], scale_h}, aw{is[3], os[3], scale_w};
  const std::vector<int64_t> nhwc = {os[0], os[2], os[3], os[1]};
  const bool same = same_qparams(x->p, out->p);
  const Requant to_out = bilinear ? quantize_multiplier(x->p.scale / (out->p.scale * 4194304.0))
                                  : quantize_multiplier(x->p.scale / out->p.scale);
  if ((bilinear || !same) && (to_out.shift > kMaxShift || to_out.shift < kMinShift)) {
    return keep("output scale out of range");
  }
  const NodeId before = out->quant;
  const ValueId xin = to_nhwc(x->q, n, before);
  ValueId y;
  if (bilinear) {
    const ValueId taps =
        add_constant(g_, n.debug.node_name + "_taps", ScalarType::Int, {os[2] + os[3], 3},
                     bilinear_table(ah, aw, n.arg("align_corners").get<bool>()));
    y = new_node("upsample_bilinear2d_nhwc",
                 {TensorRef{xin}, TensorRef{taps}, x->p.zp, out->p.zp, int64_t{to_out.multiplier},
                  int64_t{to_out.shift}},
                 int8_spec(nhwc), n, before);
  } else {
    const ValueId table = add_constant(g_, n.debug.node_name + "_indices", ScalarType::Int,
                                       {os[2] + os[3]}, nearest_table(ah, aw, false));
    y = new_node("upsample_nearest2d_nhwc", {TensorRef{xin}, TensorRef{table}}, int8_spec(nhwc), n,
                 before);
    if (!same) {
      y = new_node("requantize",
                   {TensorRef{y}, x->p.zp, out->p.zp, int64_t{to_out.multiplier},
                    int64_t{to_out.shift}, out->p.qmin, out->p.qmax},
                   int8_spec(nhwc), n, before);
    }
  }
  finish(*out, to_nchw(y, n, before));
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
