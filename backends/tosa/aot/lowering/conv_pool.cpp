// Convolution (plain and depthwise) and max/average/global pooling.
#include <algorithm>
#include <cmath>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

// Shared tail of conv and linear: bias, CONV2D/DEPTHWISE_CONV2D, requantisation, activation.
TVal Lowerer::conv_core(const Node& n, const TVal& x_nhwc, const Weight& w,
                        const ir::Argument& bias_arg, bool depthwise, int64_t multiplier,
                        std::vector<int32_t> pad, std::vector<int32_t> stride,
                        std::vector<int32_t> dilation, std::vector<int64_t> out_nhwc,
                        const OutQuant* q) {
  const int64_t oc = w.sizes[0], kh = w.sizes[2], kw = w.sizes[3];
  const int64_t ic = w.sizes[1];
  const std::vector<double> b = bias(bias_arg, static_cast<size_t>(oc), x_nhwc.scale, w);
  std::string wname, bname;
  const std::string base_name = g_.value(n.outputs[0]).name;
  std::vector<int64_t> wshape;
  std::vector<double> wt;  // TOSA layout
  if (!depthwise) {
    wshape = {oc, kh, kw, ic};  // OHWI from OIHW
    if (!check_only_) wt.resize(static_cast<size_t>(numel(wshape)));
    for (int64_t o = 0; o < oc && !check_only_; ++o)
      for (int64_t i = 0; i < ic; ++i)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            wt[static_cast<size_t>(((o * kh + y) * kw + x) * ic + i)] =
                w.values[static_cast<size_t>(((o * ic + i) * kh + y) * kw + x)];
  } else {
    const int64_t c = oc / multiplier;
    wshape = {kh, kw, c, multiplier};  // [KH, KW, C, M] from [C*M, 1, KH, KW]
    if (!check_only_) wt.resize(static_cast<size_t>(numel(wshape)));
    for (int64_t ch = 0; ch < c && !check_only_; ++ch)
      for (int64_t m = 0; m < multiplier; ++m)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            wt[static_cast<size_t>(((y * kw + x) * c + ch) * multiplier + m)] =
                w.values[static_cast<size_t>(((ch * multiplier + m) * kh + y) * kw + x)];
  }
  TosaAttr a;
  a.pad = std::move(pad);
  a.stride = std::move(stride);
  a.dilation = std::move(dilation);
  const Op op = depthwise ? Op::DEPTHWISE_CONV2D : Op::CONV2D;
  if (is_int()) {
    std::vector<int8_t> w8(wt.begin(), wt.end());
    std::vector<int32_t> b32(b.begin(), b.end());
    wname = w_.const_i8(base_name + "_weight", wshape, w8).name;
    bname = w_.const_i32(base_name + "_bias", {oc}, b32).name;
    const std::string izp = zp_const(DType::INT8, x_nhwc.zp);
    const std::string wzp = zp_const(DType::INT8, w.zp);
    a.acc_type = DType::INT32;
    TVal acc = tensor(out_nhwc, DType::INT32, x_nhwc);
    acc.quant = false;
    w_.add_op(op, {x_nhwc.name, wname, bname, izp, wzp}, {acc.name}, a);
    std::vector<double> factors(static_cast<size_t>(oc));
    for (int64_t c = 0; c < oc; ++c)
      factors[static_cast<size_t>(c)] =
          x_nhwc.scale * w.scales[static_cast<size_t>(c)] / q->p.scale;
    bool same =
        std::all_of(factors.begin(), factors.end(), [&](double f) { return f == factors[0]; });
    if (same) factors.resize(1);
    TVal out = rescale(acc, factors, 0, static_cast<int32_t>(q->p.zp), DType::INT8);
    out.quant = true;
    out.scale = q->p.scale;
    out.zp = static_cast<int32_t>(q->p.zp);
    return clamp_i8(out, q->lo, q->hi);
  }
  std::vector<float> wf(wt.begin(), wt.end()), bf(b.begin(), b.end());
  wname = w_.const_f32(base_name + "_weight", wshape, wf).name;
  bname = w_.const_f32(base_name + "_bias", {oc}, bf).name;
  a.acc_type = DType::FP32;
  TVal out = tensor(out_nhwc, DType::FP32, x_nhwc);
  w_.add_op(op, {x_nhwc.name, wname, bname, zp_const(DType::FP32, 0), zp_const(DType::FP32, 0)},
            {out.name}, a);
  return out;
}

// Drops `rows` trailing rows and `cols` trailing columns of an NHWC tensor (inputs a strided
// window never reaches: TOSA wants the window to end exactly on the input's edge).
TVal Lowerer::crop_nhwc(const TVal& in, int64_t rows, int64_t cols) {
  if (rows <= 0 && cols <= 0) return in;
  std::vector<int64_t> size = {in.shape[0], in.shape[1] - std::max<int64_t>(rows, 0),
                               in.shape[2] - std::max<int64_t>(cols, 0), in.shape[3]};
  TVal t = tensor(size, in.dtype, in);
  const std::string start = w_.const_shape("start", {0, 0, 0, 0});
  const std::string sz = w_.const_shape("size", size);
  w_.add_op(Op::SLICE, {in.name, start, sz}, {t.name});
  return t;
}

Lowerer::Axis Lowerer::fit_axis(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil,
                                int64_t pad_a, int64_t pad_b) {
  // The last window's end, exclusive: (out - 1) * stride + (k - 1) * dil + 1 - pad_a.
  const int64_t need_b = (out - 1) * stride + (k - 1) * dil + 1 - pad_a - in;
  Axis ax{pad_a, need_b, 0};
  (void)pad_b;
  if (need_b < 0) {
    ax.pad_b = 0;
    ax.crop = -need_b;
  }
  return ax;
}

void Lowerer::conv(const Node& n) {
  const ir::TensorSpec& xs = g_.value(n.arg("input").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (xs.rank() != 4)
    refuse("convolution of a " + std::to_string(xs.rank()) + "-D input (TOSA CONV2D: 2-D only)");
  if (n.arg("transposed").get<bool>()) refuse("transposed convolution (not lowered)");
  const int64_t groups = n.arg("groups").to_int();
  const std::vector<int64_t> stride = pair_arg(n.arg("stride"), 1);
  const std::vector<int64_t> padding = pair_arg(n.arg("padding"), 0);
  const std::vector<int64_t> dilation = pair_arg(n.arg("dilation"), 1);
  for (int64_t p : int_list(n.arg("output_padding")))
    if (p != 0) refuse("output padding");
  const OutQuant* q = nullptr;
  OutQuant oq;
  if (is_int()) {
    oq = out_quant(n, true);
    q = &oq;
  }
  TVal x = operand(n.arg("input").tensor());
  const Weight w = weight(n.arg("weight").tensor());
  if (w.sizes.size() != 4) refuse("weight is not 4-D");
  const int64_t ic = xs.sizes[1], oc = w.sizes[0], kh = w.sizes[2], kw = w.sizes[3];
  bool depthwise = false;
  int64_t multiplier = 1;
  if (groups != 1) {
    if (groups != ic || w.sizes[1] != 1 || oc % ic != 0)
      refuse("grouped convolution with " + std::to_string(groups) +
             " groups (TOSA: plain or depthwise only)");
    depthwise = true;
    multiplier = oc / ic;
  } else if (w.sizes[1] != ic) {
    refuse("weight input channels differ from the input's");
  }
  if (kh > kMaxKernel || kw > kMaxKernel || stride[0] > kMaxKernel || stride[1] > kMaxKernel)
    refuse("kernel or stride beyond TOSA level 8K (8192)");
  if (stride[0] < 1 || stride[1] < 1 || dilation[0] < 1 || dilation[1] < 1)
    refuse("stride or dilation below 1");
  const Axis ay =
      fit_axis(xs.sizes[2], ys.sizes[2], kh, stride[0], dilation[0], padding[0], padding[0]);
  const Axis ax =
      fit_axis(xs.sizes[3], ys.sizes[3], kw, stride[1], dilation[1], padding[1], padding[1]);
  x = crop_nhwc(to_nhwc(x), ay.crop, ax.crop);
  TVal out = conv_core(n, x, w, n.arg("bias"), depthwise, multiplier,
                       {static_cast<int32_t>(ay.pad_a), static_cast<int32_t>(ay.pad_b),
                        static_cast<int32_t>(ax.pad_a), static_cast<int32_t>(ax.pad_b)},
                       {static_cast<int32_t>(stride[0]), static_cast<int32_t>(stride[1])},
                       {static_cast<int32_t>(dilation[0]), static_cast<int32_t>(dilation[1])},
                       to_nhwc_shape(ys.sizes), q);
  out.nhwc = true;
  bind(n, out, q);
}

void Lowerer::max_pool(const Node& n) {
  const ir::TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (xs.rank() != 4) refuse("max pool of a " + std::to_string(xs.rank()) + "-D input");
  const std::vector<int64_t> k = pair_arg(n.arg("kernel_size"), 1);
  std::vector<int64_t> stride = pair_arg(n.arg("stride"), 0);
  if (int_list(n.arg("stride")).empty()) stride = k;
  const std::vector<int64_t> padding = pair_arg(n.arg("padding"), 0);
  const std::vector<int64_t> dilation = pair_arg(n.arg("dilation"), 1);
  if (dilation[0] != 1 || dilation[1] != 1) refuse("dilated max pool (TOSA: no dilation)");
  if (!is_int())
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
        refuse("max pool indices are used");
  TVal x = to_nhwc(operand(n.arg("self").tensor()));
  const Axis ay = fit_axis(xs.sizes[2], ys.sizes[2], k[0], stride[0], 1, padding[0], padding[0]);
  const Axis ax = fit_axis(xs.sizes[3], ys.sizes[3], k[1], stride[1], 1, padding[1], padding[1]);
  if (ay.pad_a >= k[0] || ay.pad_b >= k[0] || ax.pad_a >= k[1] || ax.pad_b >= k[1])
    refuse("padding not smaller than the kernel (TOSA MAX_POOL2D)");
  x = crop_nhwc(x, ay.crop, ax.crop);
  TosaAttr a;
  a.kernel = {static_cast<int32_t>(k[0]), static_cast<int32_t>(k[1])};
  a.stride = {static_cast<int32_t>(stride[0]), static_cast<int32_t>(stride[1])};
  a.pad = {static_cast<int32_t>(ay.pad_a), static_cast<int32_t>(ay.pad_b),
           static_cast<int32_t>(ax.pad_a), static_cast<int32_t>(ax.pad_b)};
  TVal out = tensor(to_nhwc_shape(ys.sizes), x.dtype, x);
  w_.add_op(Op::MAX_POOL2D, {x.name}, {out.name}, a);
  bind_shared(n, out);
}

// AVG_POOL2D over an NHWC tensor. INT: the result at the quantize's parameters `q`. With
// the input's scale, int8 pooling straight to the output zero point; otherwise the input is
// first rescaled to int16 at (nearly) the output scale, so the pool's own rounding happens
// on a fine grid and the final RESCALE to int8 adds at most one more half step.
TVal Lowerer::avg_pool_op(TVal x, std::vector<int64_t> k, std::vector<int64_t> stride,
                          std::vector<int32_t> pad, std::vector<int64_t> out_nhwc,
                          const OutQuant* q) {
  TosaAttr a;
  a.kernel = {static_cast<int32_t>(k[0]), static_cast<int32_t>(k[1])};
  a.stride = {static_cast<int32_t>(stride[0]), static_cast<int32_t>(stride[1])};
  a.pad = std::move(pad);
  a.acc_type = is_int() ? DType::INT32 : DType::FP32;
  if (!is_int()) {
    TVal out = tensor(std::move(out_nhwc), x.dtype, x);
    const std::string zp = zp_const(x.dtype, 0);
    w_.add_op(Op::AVG_POOL2D, {x.name, zp, zp}, {out.name}, a);
    return out;
  }
  const int32_t out_zp = static_cast<int32_t>(q->p.zp);
  if (x.scale == q->p.scale) {
    TVal out = tensor(std::move(out_nhwc), DType::INT8, x);
    w_.add_op(Op::AVG_POOL2D, {x.name, zp_const(DType::INT8, x.zp), zp_const(DType::INT8, out_zp)},
              {out.name}, a);
    out.zp = out_zp;
    return clamp_i8(out, q->lo, q->hi);
  }
  // int16 headroom: |q - zp| <= 255 scaled by ratio * 2^bits must stay below 2^15.
  const double ratio = x.scale / q->p.scale;
  int bits = 0;
  while (bits < 14 && 255.0 * ratio * std::ldexp(1.0, bits + 1) < 32767.0) ++bits;
  TVal wide = rescale(x, {ratio * std::ldexp(1.0, bits)}, x.zp, 0, DType::INT16);
  TVal pooled = tensor(std::move(out_nhwc), DType::INT16, wide);
  const std::string zero = zp_const(DType::INT16, 0);
  w_.add_op(Op::AVG_POOL2D, {wide.name, zero, zero}, {pooled.name}, a);
  TVal out = rescale(pooled, {std::ldexp(1.0, -bits)}, 0, out_zp, DType::INT8);
  out.scale = q->p.scale;
  out.zp = out_zp;
  return clamp_i8(out, q->lo, q->hi);
}

// Global mean in INT: int32 sums over H and W, one RESCALE by in_scale / (out_scale * H * W).
TVal Lowerer::global_mean_int(const TVal& x, const OutQuant& q) {
  TVal acc = rescale(x, {1.0}, x.zp, 0, DType::INT32);
  TosaAttr a;
  a.axis = 1;
  TVal rows = tensor({x.shape[0], 1, x.shape[2], x.shape[3]}, DType::INT32, acc);
  w_.add_op(Op::REDUCE_SUM, {acc.name}, {rows.name}, a);
  a.axis = 2;
  TVal sum = tensor({x.shape[0], 1, 1, x.shape[3]}, DType::INT32, acc);
  w_.add_op(Op::REDUCE_SUM, {rows.name}, {sum.name}, a);
  const double n = static_cast<double>(x.shape[1] * x.shape[2]);
  TVal out =
      rescale(sum, {x.scale / (q.p.scale * n)}, 0, static_cast<int32_t>(q.p.zp), DType::INT8);
  out.scale = q.p.scale;
  out.zp = static_cast<int32_t>(q.p.zp);
  return clamp_i8(out, q.lo, q.hi);
}

void Lowerer::avg_pool(const Node& n) {
  const ir::TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (xs.rank() != 4) refuse("avg pool of a " + std::to_string(xs.rank()) + "-D input");
  const std::vector<int64_t> k = pair_arg(n.arg("kernel_size"), 1);
  std::vector<int64_t> stride = pair_arg(n.arg("stride"), 0);
  if (int_list(n.arg("stride")).empty()) stride = k;
  const std::vector<int64_t> padding = pair_arg(n.arg("padding"), 0);
  const bool count_include_pad = n.arg("count_include_pad").get<bool>();
  if (!n.arg("divisor_override").is_none()) refuse("divisor_override (TOSA divides by the window)");
  TVal x = to_nhwc(operand(n.arg("self").tensor()));
  int64_t ph = padding[0], pw = padding[1];
  int64_t ih = xs.sizes[2], iw = xs.sizes[3];
  if ((ph || pw) && count_include_pad) {
    // Pad explicitly (with the zero point: a float 0) so padding counts in the average.
    x = pad_nhwc(x, ph, ph, pw, pw);
    ih += 2 * ph;
    iw += 2 * pw;
    ph = pw = 0;
  }
  const Axis ay = fit_axis(ih, ys.sizes[2], k[0], stride[0], 1, ph, ph);
  const Axis ax = fit_axis(iw, ys.sizes[3], k[1], stride[1], 1, pw, pw);
  if (ay.pad_a >= k[0] || ay.pad_b >= k[0] || ax.pad_a >= k[1] || ax.pad_b >= k[1])
    refuse("padding not smaller than the kernel (TOSA AVG_POOL2D)");
  if (count_include_pad && (ay.pad_b > 0 || ax.pad_b > 0))
    refuse("ceil_mode windows past the edge with count_include_pad (torch counts them)");
  x = crop_nhwc(x, ay.crop, ax.crop);
  OutQuant q;
  if (is_int()) q = out_quant(n, false);
  if (is_int() && ys.sizes[2] == 1 && ys.sizes[3] == 1 && ay.pad_a == 0 && ay.pad_b == 0 &&
      ax.pad_a == 0 && ax.pad_b == 0 && x.shape[1] == k[0] && x.shape[2] == k[1]) {
    // One window over the whole map: a global mean (int32 sum, one rounding).
    return bind(n, global_mean_int(x, q), &q);
  }
  TVal out = avg_pool_op(x, k, stride,
                         {static_cast<int32_t>(ay.pad_a), static_cast<int32_t>(ay.pad_b),
                          static_cast<int32_t>(ax.pad_a), static_cast<int32_t>(ax.pad_b)},
                         to_nhwc_shape(ys.sizes), is_int() ? &q : nullptr);
  bind(n, out, is_int() ? &q : nullptr);
}

// Global average pooling: adaptive pool to 1x1, or mean over H and W.
void Lowerer::global_pool(const Node& n, const std::string& op) {
  const ir::TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (xs.rank() != 4) refuse("pooling/mean of a " + std::to_string(xs.rank()) + "-D input");
  if (op == ops::aten::mean_dim) {
    std::vector<int64_t> dims = int_list(n.arg("dim"));
    for (int64_t& d : dims) d = norm_dim(d, 4);
    std::sort(dims.begin(), dims.end());
    if (dims != std::vector<int64_t>{2, 3})
      refuse("mean over dims other than H and W (TOSA lowering: global average pool only)");
    if (!n.arg("dtype").is_none()) refuse("mean with a dtype");
  } else {
    const std::vector<int64_t> o = int_list(n.arg("output_size"));
    if (o != std::vector<int64_t>{1, 1})
      refuse("adaptive pool to " + shape_str(o) + " (TOSA lowering: to 1x1 only)");
  }
  TVal x = to_nhwc(operand(n.arg("self").tensor()));
  const int64_t h = xs.sizes[2], w = xs.sizes[3];
  OutQuant q;
  TVal out;
  if (is_int()) {
    q = out_quant(n, false);
    out = global_mean_int(x, q);
  } else {
    out = avg_pool_op(x, {h, w}, {1, 1}, {0, 0, 0, 0}, {xs.sizes[0], 1, 1, xs.sizes[1]}, nullptr);
  }
  if (ys.rank() != 4) out = reshape(out, ys.sizes);  // keepdim=False: [N, 1, 1, C] is [N, C]
  bind(n, out, is_int() ? &q : nullptr);
}

}  // namespace pteron::tosa_aot::detail
