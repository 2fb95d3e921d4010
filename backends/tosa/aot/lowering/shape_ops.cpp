// Data movement: views, permutes, cat, pad, split and resize.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

TVal Lowerer::pad_nhwc(const TVal& x, int64_t top, int64_t bottom, int64_t left, int64_t right) {
  return pad_tensor(x, {0, 0, top, bottom, left, right, 0, 0}, 0.0);
}

// PAD with (before, after) per TOSA dim; `value` in the logical (float) domain.
TVal Lowerer::pad_tensor(const TVal& x, const std::vector<int64_t>& padding, double value) {
  std::vector<int64_t> shape = x.shape;
  for (size_t d = 0; d < shape.size(); ++d) shape[d] += padding[2 * d] + padding[2 * d + 1];
  TVal out = tensor(shape, x.dtype, x);
  const std::string p = w_.const_shape("padding", padding);
  std::string c;
  if (x.dtype == DType::INT8) {
    const double qv = std::nearbyint(value / x.scale) + x.zp;
    if (qv < -128 || qv > 127) refuse("pad value outside the int8 range");
    c = w_.const_i8("pad_const", {1}, {static_cast<int8_t>(qv)}).name;
  } else {
    c = w_.const_f32("pad_const", {1}, {static_cast<float>(value)}).name;
  }
  w_.add_op(Op::PAD, {x.name, p, c}, {out.name});
  return out;
}

void Lowerer::view(const Node& n) {
  const ValueId xv = n.inputs()[0];
  const ir::TensorSpec& xs = g_.value(xv).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (n.is(ops::aten::_to_copy) && xs.dtype != ys.dtype) refuse("dtype conversion (not lowered)");
  TVal x = operand(xv);
  // NHWC with H = W = 1 orders the elements like NCHW: no transpose needed.
  if (x.nhwc && !(xs.sizes[2] == 1 && xs.sizes[3] == 1)) x = to_logical(x);
  if (x.nhwc && ys.sizes == xs.sizes) return bind_shared(n, x);
  TVal out = reshape(x, ys.sizes);
  if (out.name == x.name) {
    out = tensor(ys.sizes, x.dtype, x);
    w_.add_op(Op::IDENTITY, {x.name}, {out.name});
  }
  out.nhwc = false;
  bind_shared(n, out);
}

void Lowerer::permute(const Node& n, const std::string& op) {
  const ValueId xv = n.arg("self").tensor();
  const ir::TensorSpec& xs = g_.value(xv).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  const size_t r = xs.rank();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
  if (op.find("permute") != std::string::npos) {
    perm = int_list(n.arg("dims"));
    for (int64_t& d : perm) d = norm_dim(d, r);
  } else if (op.find("transpose") != std::string::npos) {
    std::swap(perm[static_cast<size_t>(norm_dim(n.arg("dim0").to_int(), r))],
              perm[static_cast<size_t>(norm_dim(n.arg("dim1").to_int(), r))]);
  } else if (r == 2) {
    std::swap(perm[0], perm[1]);
  }
  TVal x = operand(xv);
  std::vector<int32_t> tosa_perm(r);
  for (size_t i = 0; i < r; ++i)
    tosa_perm[i] = x.nhwc ? kNhwcPos[perm[i]] : static_cast<int32_t>(perm[i]);
  TVal out = transpose(x, tosa_perm, ys.sizes, false);
  bind_shared(n, out);
}

void Lowerer::cat(const Node& n) {
  const std::vector<ValueId>& ids = n.arg("tensors").get<ir::TensorList>().ids;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  const int64_t dim = norm_dim(n.arg("dim").to_int(), ys.rank());
  std::vector<TVal> parts;
  bool all_nhwc = true;
  for (ValueId v : ids) {
    if (g_.value(v).spec.numel() == 0) continue;  // torch allows empty pieces
    parts.push_back(operand(v));
    all_nhwc = all_nhwc && parts.back().nhwc;
  }
  OutQuant q;
  if (is_int()) q = out_quant(n, false);
  std::vector<std::string> names;
  for (TVal& p : parts) {
    if (!all_nhwc) p = to_logical(p);
    if (is_int()) p = requantize(p, q.p.scale, static_cast<int32_t>(q.p.zp));
    names.push_back(p.name);
  }
  TosaAttr a;
  a.axis = all_nhwc ? kNhwcPos[dim] : static_cast<int32_t>(dim);
  TVal out = tensor(all_nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes, parts[0].dtype, parts[0]);
  out.nhwc = all_nhwc;
  w_.add_op(Op::CONCAT, names, {out.name}, a);
  if (is_int()) {
    out = clamp_i8(out, q.lo, q.hi);
    return bind(n, out, &q);
  }
  bind(n, out, nullptr);
}

TVal Lowerer::slice_axis(const TVal& x, size_t axis, int64_t begin, int64_t size) {
  std::vector<int64_t> start(x.shape.size(), 0), sizes = x.shape;
  start[axis] = begin;
  sizes[axis] = size;
  TVal t = tensor(sizes, x.dtype, x);
  const std::string b = w_.const_shape("start", start);
  const std::string sz = w_.const_shape("size", sizes);
  w_.add_op(Op::SLICE, {x.name, b, sz}, {t.name});
  return t;
}

// Reflection (mirror around the edge element, without it) or replication (the edge element
// repeated) of `before` / `after` elements on TOSA axis `axis`: TOSA 1.0's PAD has no such
// modes, so SLICEs of single rows (reflect) or of the edge row, named once per copy
// (replicate), are CONCATenated around x. Data movement only: INT values keep their bits.
TVal Lowerer::pad_edges(const TVal& x, size_t axis, int64_t before, int64_t after, bool reflect) {
  if (before <= 0 && after <= 0) return x;
  const int64_t size = x.shape[axis];
  std::vector<std::string> names;
  if (reflect) {
    for (int64_t i = before; i >= 1; --i) names.push_back(slice_axis(x, axis, i, 1).name);
  } else if (before > 0) {
    names.insert(names.end(), before, slice_axis(x, axis, 0, 1).name);
  }
  names.push_back(x.name);
  if (reflect) {
    for (int64_t i = 1; i <= after; ++i) names.push_back(slice_axis(x, axis, size - 1 - i, 1).name);
  } else if (after > 0) {
    names.insert(names.end(), after, slice_axis(x, axis, size - 1, 1).name);
  }
  std::vector<int64_t> shape = x.shape;
  shape[axis] += std::max<int64_t>(before, 0) + std::max<int64_t>(after, 0);
  TVal out = tensor(shape, x.dtype, x);
  TosaAttr a;
  a.axis = static_cast<int32_t>(axis);
  w_.add_op(Op::CONCAT, names, {out.name}, a);
  return out;
}

// constant_pad_nd (TOSA PAD), reflection_pad1d/2d/3d and replication_pad1d/2d/3d (SLICE +
// CONCAT, pad_edges). As torch, a negative pad crops that side: the positive pads are applied
// first (a reflection may reach into rows a crop on the other side removes), then a SLICE keeps
// what the negative ones leave.
void Lowerer::pad(const Node& n, PadMode mode) {
  const ValueId xv = n.arg("self").tensor();
  const ir::TensorSpec& xs = g_.value(xv).spec;
  const std::vector<int64_t> p = int_list(n.arg(mode == PadMode::Constant ? "pad" : "padding"));
  const size_t r = xs.rank();
  if (p.size() % 2 || p.size() / 2 > r) refuse("malformed padding list");
  TVal x = operand(xv);
  std::vector<int64_t> padding(2 * r, 0);  // TOSA order: (before, after) per TOSA axis
  for (size_t i = 0; i < p.size() / 2; ++i) {
    const size_t d = r - 1 - i;  // torch pads the last dim first
    const size_t pos = x.nhwc ? static_cast<size_t>(kNhwcPos[d]) : d;
    padding[2 * pos] = p[2 * i];
    padding[2 * pos + 1] = p[2 * i + 1];
    if (mode == PadMode::Reflect && (p[2 * i] >= xs.sizes[d] || p[2 * i + 1] >= xs.sizes[d]))
      refuse("reflection padding not smaller than the padded dim");
  }
  std::vector<int64_t> positive(2 * r);
  for (size_t i = 0; i < 2 * r; ++i) positive[i] = std::max<int64_t>(padding[i], 0);
  TVal y = x;
  if (mode == PadMode::Constant) {
    if (std::any_of(positive.begin(), positive.end(), [](int64_t v) { return v > 0; })) {
      y = pad_tensor(x, positive, n.arg("value").is_none() ? 0.0 : n.arg("value").to_double());
    }
  } else {
    for (size_t axis = 0; axis < r; ++axis) {
      y = pad_edges(y, axis, positive[2 * axis], positive[2 * axis + 1], mode == PadMode::Reflect);
    }
  }
  for (size_t axis = 0; axis < r; ++axis) {
    const int64_t crop_a = std::max<int64_t>(-padding[2 * axis], 0);
    const int64_t crop_b = std::max<int64_t>(-padding[2 * axis + 1], 0);
    if (crop_a == 0 && crop_b == 0) continue;
    if (crop_a + crop_b >= y.shape[axis]) refuse("padding crops the whole dim");
    y = slice_axis(y, axis, crop_a, y.shape[axis] - crop_a - crop_b);
  }
  bind_shared(n, y);
}

// PyTorch's source coordinate as a fraction: bilinear half-pixel (o + 0.5) * in/out - 0.5
// (a negative coordinate reads row 0 either way: TOSA clamps both taps to the edge),
// bilinear align_corners o * (in - 1)/(out - 1), and nearest floor(o * in/out), which TOSA's
// round-half-up of o * in/out - 0.5 gives.
Lowerer::ResizeAxis Lowerer::resize_axis(int64_t in, int64_t out, bool bilinear, bool align) {
  int64_t n = 2 * out, d = 2 * in, off = bilinear ? in - out : -out;
  if (bilinear && align) {
    if (in < 2 || out < 2) refuse("align_corners resize of a 1-pixel axis");
    n = out - 1, d = in - 1, off = 0;
  }
  const int64_t g = std::gcd(std::gcd(n, d), off < 0 ? -off : off);
  n /= g, d /= g, off /= g;
  // TOSA 1.0 limits (8K level): scale n <= 2048 (int8 bilinear sums fit int32), the ratio at
  // most 256 up and 16 down, offset in [-n, 16n), border in [-16n, n).
  const int64_t border = (out - 1) * d - (in - 1) * n + off;
  if (n > 2048 || n > 256 * d || d >= 16 * n || off < -n || off >= 16 * n || border < -16 * n ||
      border >= n)
    refuse("resize " + std::to_string(in) + " -> " + std::to_string(out) +
           " is outside TOSA RESIZE's scale, offset or border limits");
  return {n, d, off, border};
}

void Lowerer::resize(const Node& n, bool bilinear) {
  const ValueId xv = n.arg("input").tensor();
  const ir::TensorSpec& xs = g_.value(xv).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (xs.rank() != 4) refuse("resize of a " + std::to_string(xs.rank()) + "-D input");
  const bool align = bilinear && n.arg("align_corners").get<bool>();
  const ir::Argument& factors = n.arg("scale_factors");
  double scale[2] = {0.0, 0.0};
  if (!factors.is_none()) {
    const auto sf = factors.get<std::vector<double>>();
    for (size_t i = 0; i < 2 && i < sf.size(); ++i) {
      // torch then maps by 1/scale_factor, not in/out: equal only when out = in * factor.
      if (double(xs.sizes[2 + i]) * sf[i] != double(ys.sizes[2 + i]))
        refuse("resize by a scale factor that does not give the output size exactly");
      scale[i] = sf[i];
    }
  }
  ResizeAxis ax[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t in = xs.sizes[2 + i], out = ys.sizes[2 + i];
    if (!bilinear) {
      // torch's kernel picks min(floorf(o * float scale), in - 1): the same rows as the exact
      // floor(o * in / out) except where float rounding disagrees; those are refused.
      const float s = scale[i] > 0 ? float(1.0 / scale[i]) : float(in) / float(out);
      for (int64_t o = 0; o < out; ++o) {
        const int64_t src =
            out == 2 * in ? o >> 1 : std::min<int64_t>(int64_t(std::floor(float(o) * s)), in - 1);
        if (src != o * in / out)
          refuse("nearest resize whose float index arithmetic picks other rows");
      }
    }
    ax[i] = resize_axis(in, out, bilinear, align);
  }
  TVal x = to_nhwc(operand(xv));
  const std::vector<int64_t> out_shape = {ys.sizes[0], ys.sizes[2], ys.sizes[3], ys.sizes[1]};
  const bool int_bilinear = is_int() && bilinear;
  TVal y = tensor(out_shape, int_bilinear ? DType::INT32 : x.dtype, x);
  y.nhwc = true;
  const std::string sc = w_.const_shape("scale", {ax[0].n, ax[0].d, ax[1].n, ax[1].d});
  const std::string of = w_.const_shape("offset", {ax[0].offset, ax[1].offset});
  const std::string bo = w_.const_shape("border", {ax[0].border, ax[1].border});
  TosaAttr a;
  a.resize_mode = bilinear ? tosa::ResizeMode::BILINEAR : tosa::ResizeMode::NEAREST;
  w_.add_op(Op::RESIZE, {x.name, sc, of, bo}, {y.name}, a);
  if (!int_bilinear) return bind_shared(n, y);
  // int8 BILINEAR interpolates the raw int8 values with weights summing to N = n_y * n_x:
  // y = N * (q_in interpolated), so q_out = (y - N * zp_in) * s_in / (N * s_out) + zp_out.
  const OutQuant q = out_quant(n, false);
  const int64_t weight_sum = ax[0].n * ax[1].n;
  if (x.zp != 0) {
    TVal centred = tensor(out_shape, DType::INT32, y);
    const std::string c =
        w_.const_i32("zp_sum", {1, 1, 1, 1}, {static_cast<int32_t>(weight_sum * x.zp)}).name;
    w_.add_op(Op::SUB, {y.name, c}, {centred.name});
    y = centred;
  }
  TVal t = rescale(y, {x.scale / (double(weight_sum) * q.p.scale)}, 0, static_cast<int32_t>(q.p.zp),
                   DType::INT8);
  t = clamp_i8(t, q.lo, q.hi);
  bind(n, t, &q);
}

// split / split_with_sizes: one SLICE per used output.
void Lowerer::split(const Node& n) {
  fp_only("split");
  const ir::TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
  const int64_t dim = norm_dim(n.arg("dim").to_int(), xs.rank());
  TVal x = to_logical(get(n.arg("self").tensor()));
  const bool chunks = n.is(ops::aten::split_Tensor) || n.is(ops::aten::split_copy_Tensor);
  const ir::Argument& split_arg = n.arg(chunks ? "split_size" : "split_sizes");
  std::vector<int64_t> sizes = int_list(split_arg);
  if (split_arg.is<int64_t>()) {  // split.Tensor: chunks of split_size, the last smaller
    const int64_t chunk = split_arg.to_int(), total = xs.sizes[static_cast<size_t>(dim)];
    sizes.clear();
    for (int64_t at = 0; at < total; at += chunk) sizes.push_back(std::min(chunk, total - at));
  }
  if (sizes.size() != n.outputs.size()) refuse("split sizes do not match the outputs");
  int64_t start = 0;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const ValueId out = n.outputs[i];
    std::vector<int64_t> begin(xs.rank(), 0);
    begin[static_cast<size_t>(dim)] = start;
    start += sizes[i];
    if (out == ir::kNoValue) continue;
    const std::vector<int64_t>& size = g_.value(out).spec.sizes;
    TVal t = tensor(size, DType::FP32, x);
    const std::string b = w_.const_shape("start", begin);
    const std::string s = w_.const_shape("size", size);
    w_.add_op(Op::SLICE, {x.name, b, s}, {t.name});
    vals_[out] = t;
  }
}

}  // namespace pteron::tosa_aot::detail
