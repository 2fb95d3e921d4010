#include "backends/tosa/aot/tosa_lowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backends/tosa/aot/tosa_quant.h"
#include "backends/tosa/aot/tosa_writer.h"
#include "compiler/compile_error.h"
#include "compiler/passes/activation_bounds.h"

namespace pteron::tosa_aot {
namespace {

using compiler::activation_bounds;

namespace ir = compiler::ir;
using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::ScalarType;
using ir::ValueId;
using tosa::DType;
using tosa::Op;

constexpr char kQuant[] = "quantized_decomposed::quantize_per_tensor.default";
constexpr char kDequant[] = "quantized_decomposed::dequantize_per_tensor.default";
constexpr char kDequantChannel[] = "quantized_decomposed::dequantize_per_channel.default";

// TOSA 1.0 level 8K: tensors of rank 6 at most, kernels and strides up to 8192.
constexpr size_t kMaxRank = 6;
constexpr int64_t kMaxKernel = 8192;

// Why a node (or region) cannot be lowered; caught at the API boundary.
struct Refusal {
  std::string why;
};
[[noreturn]] void refuse(std::string why) { throw Refusal{std::move(why)}; }

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// NCHW logical dim d sits at this position of an NHWC tensor.
constexpr int kNhwcPos[4] = {0, 3, 1, 2};

// A TOSA tensor standing for an IR value. `nhwc`: the IR value is 4-D NCHW and the TOSA tensor
// holds it as NHWC. `quant`: the IR value is float (or int8) and the tensor holds its int8
// quantization with (scale, zp).
struct TVal {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::FP32;
  bool nhwc = false;
  bool quant = false;
  double scale = 1;
  int32_t zp = 0;
};

struct QParams {
  double scale = 1;
  int64_t zp = 0;
  int64_t qmin = -128, qmax = 127;
};

bool is_op(const Node& n, const char* name) { return n.op.str() == name; }

// (scale, zero point) of a per-tensor int8 quantize/dequantize (.default overload).
std::optional<QParams> per_tensor_qparams(const Node& n) {
  if (n.args.size() < 6 || !n.args[1].is<double>() || !n.args[2].is<int64_t>()) return {};
  if (!n.args[5].is<ScalarType>() || n.args[5].get<ScalarType>() != ScalarType::Char) return {};
  QParams p{n.args[1].get<double>(), n.args[2].get<int64_t>(), n.args[3].get<int64_t>(),
            n.args[4].get<int64_t>()};
  if (!(p.scale > 0) || !std::isfinite(p.scale) || p.zp < -128 || p.zp > 127 || p.qmin < -128 ||
      p.qmax > 127 || p.qmin > p.qmax)
    return {};
  return p;
}

std::string qdq_reason(const Node& n) {
  if (n.args.size() >= 6 && n.args[5].is<ScalarType>() &&
      n.args[5].get<ScalarType>() != ScalarType::Char)
    return "quantization to " + ir::dtype_name(n.args[5].get<ScalarType>()) +
           " (the INT profile lowering takes int8)";
  return "quantization parameters are not a valid int8 per-tensor scale and zero point";
}

// Elements of a constant in logical (row-major) order as doubles, whatever its dim order.
std::vector<double> constant_numbers(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_constant()) refuse("'" + value.name + "' is not a constant");
  const ir::TensorSpec& s = value.spec;
  const std::vector<int64_t> strides = s.strides();
  const uint8_t* base = value.constant->bytes.data();
  const size_t n = static_cast<size_t>(s.numel());
  if (value.constant->bytes.size() < s.nbytes()) refuse("constant '" + value.name + "' is short");
  std::vector<double> out(n);
  std::vector<int64_t> idx(s.rank(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < s.rank(); ++d) off += idx[d] * strides[d];
    const uint8_t* p = base + static_cast<size_t>(off) * ir::dtype_size(s.dtype);
    switch (s.dtype) {
      case ScalarType::Float: {
        float x;
        std::memcpy(&x, p, 4);
        out[i] = x;
        break;
      }
      case ScalarType::Double: {
        double x;
        std::memcpy(&x, p, 8);
        out[i] = x;
        break;
      }
      case ScalarType::Char:
        out[i] = static_cast<int8_t>(*p);
        break;
      case ScalarType::Bool:
        out[i] = *p != 0;
        break;
      case ScalarType::Int: {
        int32_t x;
        std::memcpy(&x, p, 4);
        out[i] = x;
        break;
      }
      case ScalarType::Long: {
        int64_t x;
        std::memcpy(&x, p, 8);
        out[i] = static_cast<double>(x);
        break;
      }
      default:
        refuse("constant '" + value.name + "' has dtype " + ir::dtype_name(s.dtype));
    }
    for (size_t d = s.rank(); d-- > 0;) {
      if (++idx[d] < s.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> int_list(const ir::Argument& a) {
  if (a.is<std::vector<int64_t>>()) return a.get<std::vector<int64_t>>();
  if (a.is<int64_t>()) return {a.get<int64_t>()};
  return {};
}

std::vector<int64_t> pair_arg(const ir::Argument& a, int64_t fill) {
  std::vector<int64_t> v = int_list(a);
  if (v.empty()) return {fill, fill};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

std::vector<uint8_t> f32_bytes(float x) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &x, 4);
  return b;
}

int8_t quantize_value(double x, double scale, int64_t zp) {
  const double q = std::nearbyint(x / scale) + static_cast<double>(zp);
  return static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
}

bool is_view_op(const std::string& op) {
  static const std::unordered_set<std::string> kViews = {
      "aten::view.default",         "aten::view_copy.default", "aten::_unsafe_view.default",
      "aten::reshape.default",      "aten::squeeze.dim",       "aten::squeeze.dims",
      "aten::squeeze.default",      "aten::squeeze_copy.dim",  "aten::squeeze_copy.dims",
      "aten::squeeze_copy.default", "aten::unsqueeze.default", "aten::unsqueeze_copy.default",
      "aten::flatten.using_ints",   "aten::clone.default",     "aten::alias.default",
      "aten::alias_copy.default",   "aten::_to_copy.default",  "aten::contiguous.default",
  };
  return kViews.count(op) != 0;
}

bool is_permute_op(const std::string& op) {
  return op == "aten::permute.default" || op == "aten::permute_copy.default" ||
         op == "aten::transpose.int" || op == "aten::transpose_copy.int" ||
         op == "aten::t.default" || op == "aten::t_copy.default";
}

// Ops whose INT lowering ends in a RESCALE from int32, so a relu/hardtanh/clamp after them
// becomes the clamp of that RESCALE's int8 result.
bool fuses_activation(const std::string& op) {
  return op == "aten::convolution.default" || op == "aten::conv2d.default" ||
         op == "aten::linear.default" || op == "aten::add.Tensor" || op == "aten::mul.Tensor";
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

class Lowerer {
 public:
  // `check_only`: the support checker's run; weights are not read or written and nothing is
  // serialized (a big linear layer is checked without copying its weights).
  Lowerer(const Graph& g, const std::vector<NodeId>& nodes, TosaProfile profile, bool check_only)
      : g_(g),
        nodes_(nodes),
        profile_(profile),
        in_region_(nodes.begin(), nodes.end()),
        check_only_(check_only) {
    w_.set_check_only(check_only);
  }

  TosaLowering run() {
    TosaLowering out;
    compiler::Region region;
    region.nodes = nodes_;
    compiler::compute_region_boundary(g_, region);
    for (ValueId v : region.inputs) out.inputs.push_back(add_region_input(v));
    for (NodeId id : nodes_) {
      if (consumed_.count(id)) continue;
      const Node& n = g_.node(id);
      current_ = &n;
      lower_node(n);
    }
    for (ValueId v : region.outputs) out.outputs.push_back(add_region_output(v));
    out.tosa_ops = w_.op_count();
    if (!check_only_) out.tosa = w_.finish();
    out.ok = true;
    return out;
  }

  const Node* current() const { return current_; }

 private:
  bool is_int() const { return profile_ == TosaProfile::Int; }

  // ---- region boundary -------------------------------------------------------------------

  TosaIo add_region_input(ValueId v) {
    const ir::Value& value = g_.value(v);
    const ir::TensorSpec& s = value.spec;
    check_rank(s.sizes, "input '" + value.name + "'");
    TosaIo io;
    io.value = v;
    io.value_name = value.name;
    io.dtype = s.dtype;
    TVal t;
    t.nhwc = s.rank() == 4;
    t.shape = t.nhwc ? to_nhwc_shape(s.sizes) : s.sizes;
    if (is_int()) {
      if (s.dtype != ScalarType::Char)
        refuse("region input '" + value.name + "' is " + ir::dtype_name(s.dtype) +
               " (INT profile regions take int8: the quantize stays outside)");
      t.dtype = DType::INT8;
      for (NodeId u : value.users) {
        const Node& user = g_.node(u);
        if (is_op(user, kDequant) && in_region_.count(u)) {
          if (auto p = per_tensor_qparams(user)) {
            t.quant = true;
            t.scale = p->scale;
            t.zp = static_cast<int32_t>(p->zp);
            break;
          }
        }
      }
    } else {
      if (s.dtype != ScalarType::Float)
        refuse("region input '" + value.name + "' is " + ir::dtype_name(s.dtype) +
               " (the FP profile lowering takes f32)");
      t.dtype = DType::FP32;
    }
    const TosaTensorInfo info = w_.add_input("in", t.shape, t.dtype);
    t.name = info.name;
    vals_[v] = t;
    input_names_.insert(t.name);
    io.tosa_name = t.name;
    io.shape = t.shape;
    io.dim_order = t.nhwc ? std::vector<uint8_t>{0, 2, 3, 1} : ir::identity_dim_order(s.rank());
    io.quantized = t.quant;
    io.scale = t.scale;
    io.zero_point = t.zp;
    return io;
  }

  TosaIo add_region_output(ValueId v) {
    const ir::Value& value = g_.value(v);
    auto it = vals_.find(v);
    if (it == vals_.end()) refuse("region output '" + value.name + "' was not lowered");
    TVal t = it->second;
    if (is_int() && value.spec.dtype != ScalarType::Char)
      refuse("region output '" + value.name + "' is " + ir::dtype_name(value.spec.dtype) +
             " (INT profile regions produce int8: the dequantize stays outside)");
    // Every graph output is a tensor of its own, defined by an operator.
    if (output_names_.count(t.name) || is_input_name(t.name)) {
      const TosaTensorInfo id = w_.add_tensor("out", t.shape, t.dtype);
      w_.add_op(Op::IDENTITY, {t.name}, {id.name});
      t.name = id.name;
    }
    output_names_.insert(t.name);
    w_.mark_output(t.name);
    TosaIo io;
    io.tosa_name = t.name;
    io.value = v;
    io.value_name = value.name;
    io.shape = t.shape;
    io.dtype = value.spec.dtype;
    io.dim_order =
        t.nhwc ? std::vector<uint8_t>{0, 2, 3, 1} : ir::identity_dim_order(t.shape.size());
    io.quantized = t.quant;
    io.scale = t.scale;
    io.zero_point = t.zp;
    return io;
  }

  bool is_input_name(const std::string& name) const { return input_names_.count(name) != 0; }

  // ---- helpers ---------------------------------------------------------------------------

  static std::vector<int64_t> to_nhwc_shape(const std::vector<int64_t>& s) {
    return {s[0], s[2], s[3], s[1]};
  }

  void check_rank(const std::vector<int64_t>& s, const std::string& what) {
    if (s.size() > kMaxRank)
      refuse(what + " has rank " + std::to_string(s.size()) + " (TOSA 1.0: at most 6)");
    if (s.empty()) refuse(what + " is a 0-d tensor (not lowered)");
    for (int64_t d : s)
      if (d < 1) refuse(what + " has an empty dimension " + shape_str(s));
  }

  std::string base() const {
    return current_ && !current_->outputs.empty() && current_->outputs[0] != ir::kNoValue
               ? g_.value(current_->outputs[0]).name
               : std::string("t");
  }

  TVal tensor(std::vector<int64_t> shape, DType dtype, const TVal& like) {
    TVal t = like;
    const TosaTensorInfo info = w_.add_tensor(base(), shape, dtype);
    t.name = info.name;
    t.shape = std::move(shape);
    t.dtype = dtype;
    return t;
  }

  TVal get(ValueId v) {
    auto it = vals_.find(v);
    if (it != vals_.end()) return it->second;
    const ir::Value& value = g_.value(v);
    if (is_int() && value.is_intermediate() && in_region_.count(value.producer)) {
      // dequantize(int8 constant) read as an operand (not as a weight): an int8 CONST.
      const Node& dq = g_.node(value.producer);
      const ir::Value& c = g_.value(dq.args[0].tensor());
      auto p = per_tensor_qparams(dq);
      if (is_op(dq, kDequant) && c.is_constant() && c.spec.dtype == ScalarType::Char && p) {
        const std::vector<int64_t> shape =
            c.spec.rank() == 0 ? std::vector<int64_t>{1} : c.spec.sizes;
        check_rank(shape, "constant '" + c.name + "'");
        std::vector<int8_t> data;
        for (double x : constant_numbers(g_, c.id)) data.push_back(static_cast<int8_t>(x));
        TVal t;
        t.name = w_.const_i8(c.name, shape, data).name;
        t.shape = shape;
        t.dtype = DType::INT8;
        t.quant = true;
        t.scale = p->scale;
        t.zp = static_cast<int32_t>(p->zp);
        return vals_[v] = t;
      }
    }
    if (value.is_constant()) {
      if (is_int())
        refuse("'" + value.name +
               "' is a constant operand (the INT lowering takes constants "
               "only as weights and biases)");
      // 0-d constants (scalars torch lifted) become [1]; binary ops broadcast them.
      const std::vector<int64_t> shape =
          value.spec.rank() == 0 ? std::vector<int64_t>{1} : value.spec.sizes;
      check_rank(shape, "constant '" + value.name + "'");
      TVal t;
      t.shape = shape;
      if (value.spec.dtype == ScalarType::Bool) {
        std::vector<uint8_t> bytes;
        for (double x : constant_numbers(g_, v)) bytes.push_back(x != 0 ? 1 : 0);
        t.name = w_.add_const(value.name, shape, DType::BOOL, bytes).name;
        t.dtype = DType::BOOL;
        return vals_[v] = t;
      }
      // A 0-d integer constant is a Python scalar torch lifted: it promotes to f32.
      if (value.spec.dtype != ScalarType::Float && value.spec.rank() != 0)
        refuse("constant '" + value.name + "' is " + ir::dtype_name(value.spec.dtype));
      std::vector<float> data;
      for (double x : constant_numbers(g_, v)) data.push_back(static_cast<float>(x));
      t.name = w_.const_f32(value.name, shape, data).name;
      t.dtype = DType::FP32;
      return vals_[v] = t;
    }
    if (value.is_intermediate() && !in_region_.count(value.producer))
      refuse("'" + value.name + "' comes from outside the region");
    refuse("'" + value.name + "' (made by " + g_.node(value.producer).describe() +
           ") was not lowered to TOSA");
  }

  // An activation operand in the profile's form: INT needs int8 with quantization parameters.
  TVal operand(ValueId v) {
    TVal t = get(v);
    if (is_int() && !(t.quant && t.dtype == DType::INT8))
      refuse("operand '" + g_.value(v).name +
             "' is not an int8 quantized activation (no dequantize in front)");
    return t;
  }

  TVal transpose(const TVal& in, const std::vector<int32_t>& perms, std::vector<int64_t> out_shape,
                 bool out_nhwc) {
    TVal t = tensor(std::move(out_shape), in.dtype, in);
    t.nhwc = out_nhwc;
    TosaAttr a;
    a.perms = perms;
    w_.add_op(Op::TRANSPOSE, {in.name}, {t.name}, a);
    return t;
  }

  TVal to_nhwc(const TVal& in) {
    if (in.nhwc) return in;
    if (in.shape.size() != 4) refuse("expected a 4-D activation, got " + shape_str(in.shape));
    return transpose(in, {0, 2, 3, 1}, to_nhwc_shape(in.shape), true);
  }

  TVal to_logical(const TVal& in) {
    if (!in.nhwc) return in;
    const auto& s = in.shape;
    return transpose(in, {0, 3, 1, 2}, {s[0], s[3], s[1], s[2]}, false);
  }

  TVal reshape(const TVal& in, const std::vector<int64_t>& shape) {
    if (in.shape == shape) return in;
    TVal t = tensor(shape, in.dtype, in);
    t.nhwc = false;
    const std::string s = w_.const_shape("shape", shape);
    w_.add_op(Op::RESHAPE, {in.name, s}, {t.name});
    return t;
  }

  std::string zp_const(DType dtype, int32_t zp) {
    if (dtype == DType::INT8) return w_.const_i8("zp", {1}, {static_cast<int8_t>(zp)}).name;
    if (dtype == DType::INT32) return w_.const_i32("zp", {1}, {zp}).name;
    if (dtype == DType::INT16) {
      const int16_t z = static_cast<int16_t>(zp);
      std::vector<uint8_t> b(2);
      std::memcpy(b.data(), &z, 2);
      return w_.add_const("zp", {1}, DType::INT16, b).name;
    }
    return w_.const_f32("zp", {1}, {0.0f}).name;
  }

  // RESCALE `in` (int8 or int32) by per-tensor or per-channel (last dim) factors.
  TVal rescale(const TVal& in, const std::vector<double>& factors, int32_t in_zp, int32_t out_zp,
               DType out_dtype) {
    std::vector<int32_t> mult;
    std::vector<int8_t> shift;
    for (double f : factors) {
      const auto s = tosa_scale32(f);
      if (!s) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "requantisation factor %.6g is outside TOSA RESCALE's range",
                      f);
        refuse(buf);
      }
      mult.push_back(s->multiplier);
      shift.push_back(s->shift);
    }
    const int64_t n = static_cast<int64_t>(factors.size());
    TVal t = tensor(in.shape, out_dtype, in);
    const std::string m = w_.const_i32("multiplier", {n}, mult).name;
    const std::string sh = w_.const_i8("shift", {n}, shift).name;
    const std::string izp = zp_const(in.dtype, in_zp);
    const std::string ozp = zp_const(out_dtype, out_zp);
    TosaAttr a;
    a.per_channel = n > 1;
    w_.add_op(Op::RESCALE, {in.name, m, sh, izp, ozp}, {t.name}, a);
    return t;
  }

  // int8 quantized `in` requantized to (scale, zp) when they differ.
  TVal requantize(const TVal& in, double scale, int32_t zp) {
    if (in.scale == scale && in.zp == zp) return in;
    TVal t = rescale(in, {in.scale / scale}, in.zp, zp, DType::INT8);
    t.scale = scale;
    t.zp = zp;
    return t;
  }

  TVal clamp_i8(const TVal& in, int64_t lo, int64_t hi) {
    if (lo <= -128 && hi >= 127) return in;
    TVal t = tensor(in.shape, in.dtype, in);
    TosaAttr a;
    a.min_val = {static_cast<uint8_t>(static_cast<int8_t>(std::max<int64_t>(lo, -128)))};
    a.max_val = {static_cast<uint8_t>(static_cast<int8_t>(std::min<int64_t>(hi, 127)))};
    w_.add_op(Op::CLAMP, {in.name}, {t.name}, a);
    return t;
  }

  TVal clamp_f32(const TVal& in, double lo, double hi) {
    TVal t = tensor(in.shape, in.dtype, in);
    TosaAttr a;
    const float fmax = std::numeric_limits<float>::max();
    a.min_val = f32_bytes(std::isfinite(lo) ? static_cast<float>(lo) : -fmax);
    a.max_val = f32_bytes(std::isfinite(hi) ? static_cast<float>(hi) : fmax);
    w_.add_op(Op::CLAMP, {in.name}, {t.name}, a);
    return t;
  }

  // ---- INT output quantization -----------------------------------------------------------

  // The quantize taking node `n`'s output (possibly through a relu/hardtanh/clamp when
  // `fuse`): its parameters, the activation's int8 bounds, and the nodes the lowering of `n`
  // absorbs.
  struct OutQuant {
    QParams p;
    int64_t lo = -128, hi = 127;
    ValueId value = ir::kNoValue;  // the quantize's (int8) output
  };

  const Node* only_user(ValueId v) const {
    const ir::Value& value = g_.value(v);
    if (value.users.size() != 1 || is_graph_output(g_, v)) return nullptr;
    return &g_.node(value.users[0]);
  }

  OutQuant out_quant(const Node& n, bool fuse) {
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
        refuse("its secondary output (e.g. max pool indices) is used");
    const Node* user = only_user(n.outputs[0]);
    std::optional<std::pair<double, double>> bounds;
    const Node* act = nullptr;
    if (user && fuse && (bounds = activation_bounds(*user)) && in_region_.count(user->id)) {
      act = user;
      user = only_user(user->outputs[0]);
    }
    if (user == nullptr || !is_op(*user, kQuant) || !in_region_.count(user->id))
      refuse(
          "its output is not quantized by one quantize_per_tensor in the region (INT profile "
          "needs dequantize -> op -> quantize)");
    auto p = per_tensor_qparams(*user);
    if (!p) refuse("output " + qdq_reason(*user));
    OutQuant q;
    q.p = *p;
    q.lo = p->qmin;
    q.hi = p->qmax;
    if (act) {
      if (std::isfinite(bounds->first))
        q.lo = std::max<int64_t>(q.lo, quantize_value(bounds->first, p->scale, p->zp));
      if (std::isfinite(bounds->second))
        q.hi = std::min<int64_t>(q.hi, quantize_value(bounds->second, p->scale, p->zp));
      consumed_.insert(act->id);
    }
    consumed_.insert(user->id);
    q.value = user->outputs[0];
    return q;
  }

  // Binds the op's result: INT to the quantize's output (and the float value before it, so a
  // region output there is reported), FP to the op's output.
  void bind(const Node& n, TVal t, const OutQuant* q) {
    if (q) {
      t.quant = true;
      t.scale = q->p.scale;
      t.zp = static_cast<int32_t>(q->p.zp);
      vals_[q->value] = t;
    }
    vals_[n.outputs[0]] = t;
  }

  // Shape-preserving INT ops (pools, views, pad, permute): result int8 at the input's
  // parameters, then requantized to the quantize's and clamped to its range.
  void bind_shared(const Node& n, TVal t) {
    if (!is_int()) {
      bind(n, t, nullptr);
      return;
    }
    const OutQuant q = out_quant(n, false);
    t = requantize(t, q.p.scale, static_cast<int32_t>(q.p.zp));
    t = clamp_i8(t, q.lo, q.hi);
    bind(n, t, &q);
  }

  // ---- dispatch --------------------------------------------------------------------------

  void lower_node(const Node& n) {
    const std::string op = n.op.str();
    if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) refuse("it has no output");
    const ir::TensorSpec& out = g_.value(n.outputs[0]).spec;
    if (op == kDequant) return dequantize(n);
    if (op == kQuant) return quantize(n);
    if (op == kDequantChannel) {
      if (!is_int()) refuse("quantized ops belong to the INT profile");
      if (!g_.value(n.args[0].tensor()).is_constant())
        refuse("per-channel dequantize of an activation (only weights are per channel)");
      return;  // read by the convolution / linear that uses the weight
    }
    check_rank(out.sizes, "output");
    if (!is_int() && out.dtype != ScalarType::Float)
      refuse("output is " + ir::dtype_name(out.dtype) + " (the FP profile lowering takes f32)");
    if (is_int() && out.dtype != ScalarType::Float)
      refuse("output is " + ir::dtype_name(out.dtype) +
             " (INT profile ops compute on dequantized int8, i.e. float in the IR)");
    if (op == "aten::convolution.default" || op == "aten::conv2d.default") return conv(n);
    if (op == "aten::linear.default") return linear(n);
    if (op == "aten::add.Tensor" || op == "aten::mul.Tensor" || op == "aten::sub.Tensor")
      return binary(n, op);
    if (activation_bounds(n)) return activation(n);
    if (op == "aten::max_pool2d_with_indices.default" || op == "aten::max_pool2d.default")
      return max_pool(n);
    if (op == "aten::avg_pool2d.default") return avg_pool(n);
    if (op == "aten::adaptive_avg_pool2d.default" || op == "aten::_adaptive_avg_pool2d.default" ||
        op == "aten::mean.dim")
      return global_pool(n, op);
    if (is_view_op(op)) return view(n);
    if (is_permute_op(op)) return permute(n, op);
    if (op == "aten::cat.default") return cat(n);
    if (op == "aten::constant_pad_nd.default") return pad(n);
    if (op == "aten::upsample_nearest2d.vec") return resize(n, false);
    if (op == "aten::upsample_bilinear2d.vec") return resize(n, true);
    if (op == "aten::_softmax.default" || op == "aten::softmax.int") return softmax(n);
    if (op == "aten::sigmoid.default" || op == "aten::tanh.default") return sigmoid_tanh(n, op);
    if (op == "aten::hardswish.default" || op == "aten::hardsigmoid.default" ||
        op == "aten::leaky_relu.default" || op == "aten::silu.default" || op == "aten::elu.default")
      return pointwise(n, op);
    if (op == "aten::gelu.default") return gelu(n);
    if (op == "aten::_native_batch_norm_legit_no_training.default") return batch_norm(n);
    if (op == "aten::bmm.default" || op == "aten::mm.default") return matmul(n, op);
    if (op == "aten::div.Tensor") return divide(n);
    if (op == "aten::where.self") return where(n);
    if (op == "aten::native_layer_norm.default") return layer_norm(n);
    if (op == "aten::split_with_sizes.default" || op == "aten::split_with_sizes_copy.default" ||
        op == "aten::split.Tensor" || op == "aten::split_copy.Tensor")
      return split(n);
    refuse(op + " has no TOSA lowering here");
  }

  void dequantize(const Node& n) {
    if (!is_int()) refuse("quantized ops belong to the INT profile");
    auto p = per_tensor_qparams(n);
    if (!p) refuse(qdq_reason(n));
    const ir::Value& in = g_.value(n.args[0].tensor());
    if (in.is_constant()) return;  // a per-tensor weight, read by its user
    TVal t = get(in.id);
    if (t.dtype != DType::INT8) refuse("dequantize of a non-int8 tensor");
    t.quant = true;
    t.scale = p->scale;
    t.zp = static_cast<int32_t>(p->zp);
    vals_[n.outputs[0]] = t;
  }

  // A quantize no op absorbed: requantizes an int8 value (dequantize -> quantize pairs).
  void quantize(const Node& n) {
    if (!is_int()) refuse("quantized ops belong to the INT profile");
    auto p = per_tensor_qparams(n);
    if (!p) refuse(qdq_reason(n));
    const ir::Value& in = g_.value(n.args[0].tensor());
    if (!in.is_intermediate() || !in_region_.count(in.producer))
      refuse("quantize of float '" + in.name +
             "' from outside the region (INT profile: no float tensors)");
    TVal t = get(in.id);
    if (!t.quant) refuse("quantize of a value the INT lowering holds as float");
    t = requantize(t, p->scale, static_cast<int32_t>(p->zp));
    t = clamp_i8(t, p->qmin, p->qmax);
    vals_[n.outputs[0]] = t;
  }

  // ---- weights ---------------------------------------------------------------------------

  struct Weight {
    std::vector<double> values;  // logical order; int8 values in INT, floats in FP
    std::vector<int64_t> sizes;
    std::vector<double> scales;  // INT: per output channel (dim 0)
    int32_t zp = 0;
  };

  Weight weight(ValueId v) {
    const ir::Value& value = g_.value(v);
    Weight w;
    if (!is_int()) {
      if (!value.is_constant() || value.spec.dtype != ScalarType::Float)
        refuse("weight '" + value.name + "' is not an f32 constant");
      if (!check_only_) w.values = constant_numbers(g_, v);
      w.sizes = value.spec.sizes;
      return w;
    }
    if (!value.is_intermediate() || !in_region_.count(value.producer))
      refuse("weight '" + value.name + "' is not dequantize(int8 constant) in the region");
    const Node& dq = g_.node(value.producer);
    const ir::Value& q = g_.value(dq.args[0].tensor());
    if (!q.is_constant() || q.spec.dtype != ScalarType::Char)
      refuse("weight '" + value.name + "' is not an int8 constant");
    if (!check_only_) w.values = constant_numbers(g_, q.id);
    w.sizes = q.spec.sizes;
    const size_t channels = static_cast<size_t>(w.sizes[0]);
    if (is_op(dq, kDequant)) {
      auto p = per_tensor_qparams(dq);
      if (!p) refuse("weight " + qdq_reason(dq));
      w.scales.assign(channels, p->scale);
      w.zp = static_cast<int32_t>(p->zp);
      return w;
    }
    if (!is_op(dq, kDequantChannel)) refuse("weight is not dequantized per tensor or per channel");
    if (dq.args[3].to_int() != 0)
      refuse("weight quantized per channel along axis " + std::to_string(dq.args[3].to_int()) +
             " (TOSA rescales per output channel: axis 0)");
    if (dq.args[6].get<ScalarType>() != ScalarType::Char) refuse("weight is not int8");
    w.scales = constant_numbers(g_, dq.args[1].tensor());
    if (w.scales.size() != channels) refuse("weight has a scale count unlike its channels");
    if (!dq.args[2].is_none()) {
      for (double z : constant_numbers(g_, dq.args[2].tensor()))
        if (z != 0)
          refuse("weight zero points are not all 0 (TOSA: one weight zero point per tensor)");
    }
    for (double s : w.scales)
      if (!(s > 0) || !std::isfinite(s)) refuse("weight scale not positive");
    return w;
  }

  // Bias: int32 for INT (dequantize(int32) as the quantizer writes it, or a float constant
  // quantized at input_scale * weight_scale[c]), f32 for FP.
  std::vector<double> bias(const ir::Argument& a, size_t channels, double in_scale,
                           const Weight& w) {
    if (a.is_none()) return std::vector<double>(channels, 0.0);
    const ir::Value& value = g_.value(a.tensor());
    std::vector<double> b;
    if (value.is_intermediate()) {
      if (!is_int()) refuse("bias is not a constant");
      if (!in_region_.count(value.producer)) refuse("bias comes from outside the region");
      const Node& dq = g_.node(value.producer);
      if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel))
        refuse("bias is computed, not a constant");
      const ir::Value& q = g_.value(dq.args[0].tensor());
      if (!q.is_constant() || q.spec.dtype != ScalarType::Int)
        refuse("bias is not dequantize(int32 constant)");
      // Its scale must be input_scale * weight_scale: the accumulator's.
      std::vector<double> scales;
      if (is_op(dq, kDequant)) {
        scales.assign(channels, dq.args[1].to_double());
      } else {
        scales = constant_numbers(g_, dq.args[1].tensor());
      }
      b = constant_numbers(g_, q.id);
      if (b.size() != channels || scales.size() != channels)
        refuse("bias has " + std::to_string(b.size()) + " values for " + std::to_string(channels) +
               " channels");
      for (size_t c = 0; c < channels; ++c) {
        const double acc = in_scale * w.scales[c];
        if (std::fabs(scales[c] - acc) > 1e-6 * acc)
          refuse("int32 bias scale differs from input_scale x weight_scale");
      }
      return b;
    }
    b = constant_numbers(g_, value.id);
    if (b.size() != channels) refuse("bias size differs from the output channels");
    if (is_int()) {
      for (size_t c = 0; c < channels; ++c) {
        const double q = std::nearbyint(b[c] / (in_scale * w.scales[c]));
        if (!(std::fabs(q) < 2147483647.0))
          refuse("bias does not fit int32 at the accumulator scale");
        b[c] = q;
      }
    }
    return b;
  }

  // ---- convolution and linear ------------------------------------------------------------

  // Shared tail of conv and linear: bias, CONV2D/DEPTHWISE_CONV2D, requantisation, activation.
  TVal conv_core(const Node& n, const TVal& x_nhwc, const Weight& w, const ir::Argument& bias_arg,
                 bool depthwise, int64_t multiplier, std::vector<int32_t> pad,
                 std::vector<int32_t> stride, std::vector<int32_t> dilation,
                 std::vector<int64_t> out_nhwc, const OutQuant* q) {
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
  TVal crop_nhwc(const TVal& in, int64_t rows, int64_t cols) {
    if (rows <= 0 && cols <= 0) return in;
    std::vector<int64_t> size = {in.shape[0], in.shape[1] - std::max<int64_t>(rows, 0),
                                 in.shape[2] - std::max<int64_t>(cols, 0), in.shape[3]};
    TVal t = tensor(size, in.dtype, in);
    const std::string start = w_.const_shape("start", {0, 0, 0, 0});
    const std::string sz = w_.const_shape("size", size);
    w_.add_op(Op::SLICE, {in.name, start, sz}, {t.name});
    return t;
  }

  // Window geometry along one axis: TOSA needs (in - 1 + pad_a + pad_b - (k - 1) * dil) to be a
  // multiple of the stride, ending on the last output; trims pad_b or crops the input.
  struct Axis {
    int64_t pad_a, pad_b, crop;
  };
  static Axis fit_axis(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil,
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

  void conv(const Node& n) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    const bool is_convolution = n.op.name == "convolution";
    if (xs.rank() != 4)
      refuse("convolution of a " + std::to_string(xs.rank()) + "-D input (TOSA CONV2D: 2-D only)");
    if (is_convolution && n.args[6].get<bool>()) refuse("transposed convolution (not lowered)");
    const int64_t groups = is_convolution ? n.args[8].to_int() : n.args[6].to_int();
    const std::vector<int64_t> stride = pair_arg(n.args[3], 1);
    const std::vector<int64_t> padding = pair_arg(n.args[4], 0);
    const std::vector<int64_t> dilation = pair_arg(n.args[5], 1);
    if (is_convolution) {
      for (int64_t p : int_list(n.args[7]))
        if (p != 0) refuse("output padding");
    }
    const OutQuant* q = nullptr;
    OutQuant oq;
    if (is_int()) {
      oq = out_quant(n, true);
      q = &oq;
    }
    TVal x = operand(n.args[0].tensor());
    const Weight w = weight(n.args[1].tensor());
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
    TVal out = conv_core(n, x, w, n.args[2], depthwise, multiplier,
                         {static_cast<int32_t>(ay.pad_a), static_cast<int32_t>(ay.pad_b),
                          static_cast<int32_t>(ax.pad_a), static_cast<int32_t>(ax.pad_b)},
                         {static_cast<int32_t>(stride[0]), static_cast<int32_t>(stride[1])},
                         {static_cast<int32_t>(dilation[0]), static_cast<int32_t>(dilation[1])},
                         to_nhwc_shape(ys.sizes), q);
    out.nhwc = true;
    bind(n, out, q);
  }

  void linear(const Node& n) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    const OutQuant* q = nullptr;
    OutQuant oq;
    if (is_int()) {
      oq = out_quant(n, true);
      q = &oq;
    }
    TVal x = to_logical(operand(n.args[0].tensor()));
    Weight w = weight(n.args[1].tensor());
    if (w.sizes.size() != 2) refuse("weight is not 2-D");
    const int64_t ic = xs.sizes.back(), oc = w.sizes[0];
    if (w.sizes[1] != ic) refuse("weight columns differ from the input features");
    const int64_t rows = numel(xs.sizes) / ic;
    w.sizes = {oc, ic, 1, 1};
    // As CONV2D 1x1 over [rows, 1, 1, ic] (TOSA 1.0 has no FULLY_CONNECTED).
    x = reshape(x, {rows, 1, 1, ic});
    x.nhwc = true;
    TVal out =
        conv_core(n, x, w, n.args[2], false, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}, {rows, 1, 1, oc}, q);
    out = reshape(out, ys.sizes);
    bind(n, out, q);
  }

  // ---- elementwise -----------------------------------------------------------------------

  // Brings two operands to one rank (leading 1s, as torch broadcasts) and one layout.
  std::pair<TVal, TVal> align(TVal a, TVal b, const std::vector<int64_t>& la,
                              const std::vector<int64_t>& lb, size_t rank) {
    auto lift = [&](TVal t, const std::vector<int64_t>& logical) {
      if (logical.size() == rank) return t;
      std::vector<int64_t> s(rank - logical.size(), 1);
      s.insert(s.end(), logical.begin(), logical.end());
      return reshape(to_logical(t), s);
    };
    a = lift(a, la);
    b = lift(b, lb);
    if (a.nhwc != b.nhwc) {
      if (rank == 4) {
        a = to_nhwc(a);
        b = to_nhwc(b);
      } else {
        a = to_logical(a);
        b = to_logical(b);
      }
    }
    return {a, b};
  }

  void binary(const Node& n, const std::string& op) {
    if (op != "aten::mul.Tensor" && n.args[2].to_double() != 1.0) refuse("alpha other than 1");
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (!is_int()) {
      for (int i = 0; i < 2; ++i)
        if (n.args[i].is_tensor() && g_.value(n.args[i].tensor()).spec.dtype != ScalarType::Float &&
            !(g_.value(n.args[i].tensor()).is_constant() &&
              g_.value(n.args[i].tensor()).spec.rank() == 0))
          refuse("operands are not f32");
      std::vector<int64_t> la, lb;
      TVal a0 = fp_operand(n.args[0], &la);
      TVal b0 = fp_operand(n.args[1], &lb);
      auto [a, b] = align(a0, b0, la, lb, ys.rank());
      TVal out = tensor(a.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes, DType::FP32, a);
      if (op == "aten::mul.Tensor") {
        const std::string shift = w_.const_i8("shift", {1}, {0}).name;
        w_.add_op(Op::MUL, {a.name, b.name, shift}, {out.name});
      } else {
        w_.add_op(op == "aten::add.Tensor" ? Op::ADD : Op::SUB, {a.name, b.name}, {out.name});
      }
      return bind(n, out, nullptr);
    }
    if (op == "aten::mul.Tensor" && n.args[0].is_tensor()) {
      // x * c for a positive constant c (a Python scalar or a 0-d constant): one RESCALE.
      std::optional<double> c;
      if (!n.args[1].is_tensor()) {
        c = n.args[1].to_double();
      } else if (g_.value(n.args[1].tensor()).is_constant() &&
                 g_.value(n.args[1].tensor()).spec.numel() == 1) {
        c = constant_numbers(g_, n.args[1].tensor())[0];
      }
      if (c) {
        if (!(*c > 0)) refuse("multiply by a non-positive constant in the INT profile");
        const OutQuant q = out_quant(n, true);
        TVal x = operand(n.args[0].tensor());
        TVal out =
            rescale(x, {x.scale * *c / q.p.scale}, x.zp, static_cast<int32_t>(q.p.zp), DType::INT8);
        out = clamp_i8(out, q.lo, q.hi);
        return bind(n, out, &q);
      }
    }
    if (!n.args[0].is_tensor() || !n.args[1].is_tensor())
      refuse("scalar operand in the INT profile (not lowered)");
    const ValueId av = n.args[0].tensor(), bv = n.args[1].tensor();
    const auto& la = g_.value(av).spec.sizes;
    const auto& lb = g_.value(bv).spec.sizes;
    const OutQuant q = out_quant(n, true);
    TVal a0 = operand(av), b0 = operand(bv);
    auto [a, b] = align(a0, b0, la, lb, ys.rank());
    const std::vector<int64_t> oshape = a.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes;
    TVal out;
    if (op == "aten::mul.Tensor") {
      // (a - za) * (b - zb) in int32, then scale sa * sb / so.
      TVal ai = rescale(a, {1.0}, a.zp, 0, DType::INT32);
      TVal bi = rescale(b, {1.0}, b.zp, 0, DType::INT32);
      TVal prod = tensor(oshape, DType::INT32, ai);
      const std::string shift = w_.const_i8("shift", {1}, {0}).name;
      w_.add_op(Op::MUL, {ai.name, bi.name, shift}, {prod.name});
      out = rescale(prod, {a.scale * b.scale / q.p.scale}, 0, static_cast<int32_t>(q.p.zp),
                    DType::INT8);
    } else {
      // TFLite's form: both sides to a common scale 2 * max(sa, sb) with 20 bits of headroom.
      const double common = 2 * std::max(a.scale, b.scale);
      const double lift = double(1 << 20);
      TVal ai = rescale(a, {a.scale / common * lift}, a.zp, 0, DType::INT32);
      TVal bi = rescale(b, {b.scale / common * lift}, b.zp, 0, DType::INT32);
      TVal sum = tensor(oshape, DType::INT32, ai);
      w_.add_op(op == "aten::add.Tensor" ? Op::ADD : Op::SUB, {ai.name, bi.name}, {sum.name});
      out =
          rescale(sum, {common / (lift * q.p.scale)}, 0, static_cast<int32_t>(q.p.zp), DType::INT8);
    }
    out.nhwc = a.nhwc;
    out = clamp_i8(out, q.lo, q.hi);
    bind(n, out, &q);
  }

  void activation(const Node& n) {
    const auto bounds = *activation_bounds(n);
    if (!is_int()) {
      TVal x = get(n.args[0].tensor());
      return bind(n, clamp_f32(x, bounds.first, bounds.second), nullptr);
    }
    const OutQuant q = out_quant(n, false);
    TVal x = requantize(operand(n.args[0].tensor()), q.p.scale, static_cast<int32_t>(q.p.zp));
    int64_t lo = q.lo, hi = q.hi;
    if (std::isfinite(bounds.first))
      lo = std::max<int64_t>(lo, quantize_value(bounds.first, q.p.scale, q.p.zp));
    if (std::isfinite(bounds.second))
      hi = std::min<int64_t>(hi, quantize_value(bounds.second, q.p.scale, q.p.zp));
    TVal out = clamp_i8(x, lo, hi);
    if (out.name == x.name) {  // no-op clamp: still an operator of its own
      out = tensor(x.shape, x.dtype, x);
      w_.add_op(Op::IDENTITY, {x.name}, {out.name});
    }
    bind(n, out, &q);
  }

  // ---- pools -----------------------------------------------------------------------------

  void max_pool(const Node& n) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (xs.rank() != 4) refuse("max pool of a " + std::to_string(xs.rank()) + "-D input");
    const std::vector<int64_t> k = pair_arg(n.args[1], 1);
    std::vector<int64_t> stride = pair_arg(n.args[2], 0);
    if (int_list(n.args[2]).empty()) stride = k;
    const std::vector<int64_t> padding = pair_arg(n.args[3], 0);
    const std::vector<int64_t> dilation = pair_arg(n.args[4], 1);
    if (dilation[0] != 1 || dilation[1] != 1) refuse("dilated max pool (TOSA: no dilation)");
    if (!is_int())
      for (size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
          refuse("max pool indices are used");
    TVal x = to_nhwc(operand(n.args[0].tensor()));
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
  TVal avg_pool_op(TVal x, std::vector<int64_t> k, std::vector<int64_t> stride,
                   std::vector<int32_t> pad, std::vector<int64_t> out_nhwc, const OutQuant* q) {
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
      w_.add_op(Op::AVG_POOL2D,
                {x.name, zp_const(DType::INT8, x.zp), zp_const(DType::INT8, out_zp)}, {out.name},
                a);
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
  TVal global_mean_int(const TVal& x, const OutQuant& q) {
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

  TVal pad_nhwc(const TVal& x, int64_t top, int64_t bottom, int64_t left, int64_t right) {
    return pad_tensor(x, {0, 0, top, bottom, left, right, 0, 0}, 0.0);
  }

  // PAD with (before, after) per TOSA dim; `value` in the logical (float) domain.
  TVal pad_tensor(const TVal& x, const std::vector<int64_t>& padding, double value) {
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

  void avg_pool(const Node& n) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (xs.rank() != 4) refuse("avg pool of a " + std::to_string(xs.rank()) + "-D input");
    const std::vector<int64_t> k = pair_arg(n.args[1], 1);
    std::vector<int64_t> stride = pair_arg(n.args[2], 0);
    if (int_list(n.args[2]).empty()) stride = k;
    const std::vector<int64_t> padding = pair_arg(n.args[3], 0);
    const bool count_include_pad = n.args[5].get<bool>();
    if (!n.args[6].is_none()) refuse("divisor_override (TOSA divides by the window)");
    TVal x = to_nhwc(operand(n.args[0].tensor()));
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
  void global_pool(const Node& n, const std::string& op) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (xs.rank() != 4) refuse("pooling/mean of a " + std::to_string(xs.rank()) + "-D input");
    if (op == "aten::mean.dim") {
      std::vector<int64_t> dims = int_list(n.args[1]);
      for (int64_t& d : dims) d = norm_dim(d, 4);
      std::sort(dims.begin(), dims.end());
      if (dims != std::vector<int64_t>{2, 3})
        refuse("mean over dims other than H and W (TOSA lowering: global average pool only)");
      if (n.args.size() > 3 && !n.args[3].is_none()) refuse("mean with a dtype");
    } else {
      const std::vector<int64_t> o = int_list(n.args[1]);
      if (o != std::vector<int64_t>{1, 1})
        refuse("adaptive pool to " + shape_str(o) + " (TOSA lowering: to 1x1 only)");
    }
    TVal x = to_nhwc(operand(n.args[0].tensor()));
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

  // ---- data movement ---------------------------------------------------------------------

  void view(const Node& n) {
    const ValueId xv = n.inputs()[0];
    const ir::TensorSpec& xs = g_.value(xv).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (n.op.str() == "aten::_to_copy.default" && xs.dtype != ys.dtype)
      refuse("dtype conversion (not lowered)");
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

  void permute(const Node& n, const std::string& op) {
    const ValueId xv = n.args[0].tensor();
    const ir::TensorSpec& xs = g_.value(xv).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    const size_t r = xs.rank();
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
    if (op.find("permute") != std::string::npos) {
      perm = int_list(n.args[1]);
      for (int64_t& d : perm) d = norm_dim(d, r);
    } else if (op.find("transpose") != std::string::npos) {
      std::swap(perm[static_cast<size_t>(norm_dim(n.args[1].to_int(), r))],
                perm[static_cast<size_t>(norm_dim(n.args[2].to_int(), r))]);
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

  void cat(const Node& n) {
    const std::vector<ValueId>& ids = n.args[0].get<ir::TensorList>().ids;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    const int64_t dim = norm_dim(n.args[1].to_int(), ys.rank());
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

  void pad(const Node& n) {
    const ValueId xv = n.args[0].tensor();
    const ir::TensorSpec& xs = g_.value(xv).spec;
    const std::vector<int64_t> p = int_list(n.args[1]);
    const double value = n.args[2].is_none() ? 0.0 : n.args[2].to_double();
    const size_t r = xs.rank();
    if (p.size() % 2 || p.size() / 2 > r) refuse("malformed padding list");
    for (int64_t v : p)
      if (v < 0) refuse("negative padding (cropping; not lowered)");
    TVal x = operand(xv);
    std::vector<int64_t> padding(2 * r, 0);
    for (size_t i = 0; i < p.size() / 2; ++i) {
      const size_t d = r - 1 - i;  // torch pads the last dim first
      const size_t pos = x.nhwc ? static_cast<size_t>(kNhwcPos[d]) : d;
      padding[2 * pos] = p[2 * i];
      padding[2 * pos + 1] = p[2 * i + 1];
    }
    bind_shared(n, pad_tensor(x, padding, value));
  }

  // ---- resize ----------------------------------------------------------------------------

  // One axis of TOSA RESIZE: output index o reads source coordinate (o * d + offset) / n, and
  // border makes (in - 1) * n - offset + border = (out - 1) * d.
  struct ResizeAxis {
    int64_t n, d, offset, border;
  };

  // PyTorch's source coordinate as a fraction: bilinear half-pixel (o + 0.5) * in/out - 0.5
  // (a negative coordinate reads row 0 either way: TOSA clamps both taps to the edge),
  // bilinear align_corners o * (in - 1)/(out - 1), and nearest floor(o * in/out), which TOSA's
  // round-half-up of o * in/out - 0.5 gives.
  ResizeAxis resize_axis(int64_t in, int64_t out, bool bilinear, bool align) {
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

  void resize(const Node& n, bool bilinear) {
    const ValueId xv = n.args[0].tensor();
    const ir::TensorSpec& xs = g_.value(xv).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    if (xs.rank() != 4) refuse("resize of a " + std::to_string(xs.rank()) + "-D input");
    const bool align = bilinear && n.args[2].get<bool>();
    const ir::Argument& factors = n.args[bilinear ? 3 : 2];
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
    TVal t = rescale(y, {x.scale / (double(weight_sum) * q.p.scale)}, 0,
                     static_cast<int32_t>(q.p.zp), DType::INT8);
    t = clamp_i8(t, q.lo, q.hi);
    bind(n, t, &q);
  }

  // ---- nonlinear -------------------------------------------------------------------------

  void softmax(const Node& n) {
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    if (n.args[2].is<bool>() && n.args[2].get<bool>()) refuse("half_to_float softmax");
    const int64_t dim = norm_dim(n.args[1].to_int(), xs.rank());
    if (is_int()) return softmax_int(n, dim);
    TVal x = to_logical(get(n.args[0].tensor()));
    std::vector<int64_t> reduced = x.shape;
    reduced[static_cast<size_t>(dim)] = 1;
    TosaAttr ax;
    ax.axis = static_cast<int32_t>(dim);
    // exp(x - max) / sum(exp(x - max)), with the division as a reciprocal and a multiply.
    TVal mx = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::REDUCE_MAX, {x.name}, {mx.name}, ax);
    TVal shifted = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::SUB, {x.name, mx.name}, {shifted.name});
    TVal e = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::EXP, {shifted.name}, {e.name});
    TVal sum = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::REDUCE_SUM, {e.name}, {sum.name}, ax);
    TVal inv = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::RECIPROCAL, {sum.name}, {inv.name});
    TVal out = tensor(x.shape, DType::FP32, x);
    const std::string shift = w_.const_i8("shift", {1}, {0}).name;
    w_.add_op(Op::MUL, {e.name, inv.name, shift}, {out.name});
    bind(n, out, nullptr);
  }

  // INT softmax from operators Ethos-U's Vela compiles (TOSA INT has no EXP; Vela's TABLE is
  // int8 -> int8 only, so a 16-bit exp is two int8 TABLEs, its high and low bytes):
  //   m = REDUCE_MAX(x) (int8); d = x - m in int32, in [-255, 0]; d8 = d + 127 (RESCALE to int8)
  //   E = round(65535 exp(s_in d)) in [0, 65535] = 256 hi + lo, hi and lo each a TABLE of d8
  //       (stored minus 128), RESCALEd to int32 (x256 and x1) and ADDed. E = 65535 at the row's
  //       max, so the row sum S (REDUCE_SUM, int32) is in [65535, 65535 N] and never 0
  //   R ~ 2^46 / S by Newton-Raphson in int32: R <- R + (R * (2^30 - (S * R >> 16))) >> 30
  //       (MULs with shifts 16 and 30), from R0 = 2^47 / (65535 (N + 1)), whose error
  //       |1 - S R0 / 2^46| <= (N-1)/(N+1) squares each step; steps until it is below 2^-24
  //   out = RESCALE(E * R >> 16) by 1 / (2^30 s_out) to the output's zero point.
  // Every intermediate fits int32 for rows up to 4096. Against float softmax then quantize:
  // within 1 int8 step, rarely off (test_tosa_ops.py).
  void softmax_int(const Node& n, int64_t dim) {
    const OutQuant q = out_quant(n, false);
    TVal x = to_logical(operand(n.args[0].tensor()));
    const int64_t row = x.shape[static_cast<size_t>(dim)];
    if (row > 4096) refuse("INT softmax over more than 4096 elements (int32 reciprocal range)");
    std::vector<int64_t> reduced = x.shape;
    reduced[static_cast<size_t>(dim)] = 1;
    const std::vector<int64_t> ones(x.shape.size(), 1);
    TosaAttr ax;
    ax.axis = static_cast<int32_t>(dim);
    TVal mx = tensor(reduced, DType::INT8, x);
    w_.add_op(Op::REDUCE_MAX, {x.name}, {mx.name}, ax);
    TVal xi = rescale(x, {1.0}, 0, 0, DType::INT32);
    TVal mi = rescale(mx, {1.0}, 0, 0, DType::INT32);
    TVal d = tensor(x.shape, DType::INT32, x);
    w_.add_op(Op::SUB, {xi.name, mi.name}, {d.name});
    TVal d8 = rescale(d, {1.0}, 0, 127, DType::INT8);
    std::vector<int8_t> hi(256), lo(256);
    for (int i = 0; i < 256; ++i) {
      const auto e = static_cast<int32_t>(std::lround(65535.0 * std::exp(x.scale * (i - 255))));
      hi[static_cast<size_t>(i)] = static_cast<int8_t>((e >> 8) - 128);
      lo[static_cast<size_t>(i)] = static_cast<int8_t>((e & 255) - 128);
    }
    TVal hi8 = tensor(x.shape, DType::INT8, x), lo8 = tensor(x.shape, DType::INT8, x);
    w_.add_op(Op::TABLE, {d8.name, w_.const_i8("exp_hi", {256}, hi).name}, {hi8.name});
    w_.add_op(Op::TABLE, {d8.name, w_.const_i8("exp_lo", {256}, lo).name}, {lo8.name});
    TVal e = tensor(x.shape, DType::INT32, x);
    w_.add_op(Op::ADD,
              {rescale(hi8, {256.0}, -128, 0, DType::INT32).name,
               rescale(lo8, {1.0}, -128, 0, DType::INT32).name},
              {e.name});
    TVal sum = tensor(reduced, DType::INT32, x);
    w_.add_op(Op::REDUCE_SUM, {e.name}, {sum.name}, ax);

    const double r0 = std::ldexp(1.0, 47) / (65535.0 * static_cast<double>(row + 1));
    TVal r{w_.const_i32("recip0", ones, {static_cast<int32_t>(r0)}).name, ones, DType::INT32};
    const std::string unit = w_.const_i32("one_q30", ones, {1 << 30}).name;
    const std::string shift16 = w_.const_i8("shift", {1}, {16}).name;
    const std::string shift30 = w_.const_i8("shift", {1}, {30}).name;
    double err = static_cast<double>(row - 1) / static_cast<double>(row + 1);
    while (err > std::ldexp(1.0, -24)) {
      err *= err;
      TVal p = tensor(reduced, DType::INT32, x);
      w_.add_op(Op::MUL, {sum.name, r.name, shift16}, {p.name});
      TVal dev = tensor(reduced, DType::INT32, x);
      w_.add_op(Op::SUB, {unit, p.name}, {dev.name});
      TVal corr = tensor(reduced, DType::INT32, x);
      w_.add_op(Op::MUL, {r.name, dev.name, shift30}, {corr.name});
      TVal next = tensor(reduced, DType::INT32, x);
      w_.add_op(Op::ADD, {r.name, corr.name}, {next.name});
      r = next;
    }
    TVal prod = tensor(x.shape, DType::INT32, x);
    w_.add_op(Op::MUL, {e.name, r.name, shift16}, {prod.name});
    TVal out = rescale(prod, {1.0 / (std::ldexp(1.0, 30) * q.p.scale)}, 0,
                       static_cast<int32_t>(q.p.zp), DType::INT8);
    out = clamp_i8(out, q.lo, q.hi);
    bind(n, out, &q);
  }

  void sigmoid_tanh(const Node& n, const std::string& op) {
    const bool sigmoid = op == "aten::sigmoid.default";
    if (!is_int()) {
      TVal x = get(n.args[0].tensor());
      TVal out = tensor(x.shape, DType::FP32, x);
      w_.add_op(sigmoid ? Op::SIGMOID : Op::TANH, {x.name}, {out.name});
      return bind(n, out, nullptr);
    }
    table_int(n,
              [sigmoid](double x) { return sigmoid ? 1.0 / (1.0 + std::exp(-x)) : std::tanh(x); });
  }

  // INT: any elementwise function as a 256-entry TABLE, entry i = quantize(f(dequantize(i - 128))).
  template <typename F>
  void table_int(const Node& n, F f) {
    const OutQuant q = out_quant(n, false);
    TVal x = operand(n.args[0].tensor());
    std::vector<int8_t> table(256);
    for (int i = 0; i < 256; ++i) {
      const double real = (i - 128 - x.zp) * x.scale;
      table[static_cast<size_t>(i)] = quantize_value(f(real), q.p.scale, q.p.zp);
    }
    const std::string t = w_.const_i8("table", {256}, table).name;
    TVal out = tensor(x.shape, DType::INT8, x);
    w_.add_op(Op::TABLE, {x.name, t}, {out.name});
    out = clamp_i8(out, q.lo, q.hi);
    bind(n, out, &q);
  }

  // gelu: INT a TABLE; FP the erf form 0.5 x (1 + erf(x / sqrt 2)) with ERF, or the tanh form
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) with TANH, as torch's `approximate` says.
  void gelu(const Node& n) {
    std::string approximate = "none";
    if (n.args.size() > 1 && n.args[1].is<std::string>())
      approximate = n.args[1].get<std::string>();
    if (approximate != "none" && approximate != "tanh")
      refuse("gelu approximate='" + approximate + "'");
    const bool tanh_form = approximate == "tanh";
    const double k = std::sqrt(2.0 / M_PI);
    if (is_int()) {
      return table_int(n, [=](double x) {
        return tanh_form ? 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)))
                         : 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      });
    }
    TVal x = get(n.args[0].tensor());
    const std::vector<int64_t> ones(x.shape.size(), 1);
    auto scalar = [&](const char* name, double v) {
      return TVal{w_.const_f32(name, ones, {static_cast<float>(v)}).name, ones};
    };
    TVal inner;
    Op fn = Op::ERF;
    if (tanh_form) {
      TVal cube = mul_fp(mul_fp(x, x, x.shape), x, x.shape);
      TVal poly = binary_fp(Op::ADD, x, mul_fp(cube, scalar("c3", 0.044715), x.shape), x.shape);
      inner = mul_fp(poly, scalar("sqrt_2_over_pi", k), x.shape);
      fn = Op::TANH;
    } else {
      inner = mul_fp(x, scalar("inv_sqrt2", 1 / std::sqrt(2.0)), x.shape);
    }
    TVal f = tensor(x.shape, DType::FP32, x);
    w_.add_op(fn, {inner.name}, {f.name});
    TVal one_plus = binary_fp(Op::ADD, f, scalar("one", 1.0), x.shape);
    TVal half_x = mul_fp(x, scalar("half", 0.5), x.shape);
    bind(n, mul_fp(half_x, one_plus, x.shape), nullptr);
  }

  // hardswish, hardsigmoid, leaky_relu, silu, elu: a TABLE in INT; FP from CLAMP, MUL, ADD,
  // MAXIMUM and SIGMOID (elu has no FP form here).
  void pointwise(const Node& n, const std::string& op) {
    if (op == "aten::hardswish.default") {
      if (is_int())
        return table_int(n, [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; });
      TVal x = get(n.args[0].tensor());
      TVal three{w_.const_f32("three", std::vector<int64_t>(x.shape.size(), 1), {3.0f}).name,
                 std::vector<int64_t>(x.shape.size(), 1)};
      TVal shifted = binary_fp(Op::ADD, x, three, x.shape);
      TVal relu6 = clamp_f32(shifted, 0, 6);
      TVal sixth{w_.const_f32("sixth", three.shape, {1.0f / 6}).name, three.shape};
      return bind(n, mul_fp(mul_fp(x, relu6, x.shape), sixth, x.shape), nullptr);
    }
    if (op == "aten::hardsigmoid.default") {
      if (is_int()) return table_int(n, [](double x) { return std::clamp(x / 6 + 0.5, 0.0, 1.0); });
      TVal x = get(n.args[0].tensor());
      const std::vector<int64_t> ones(x.shape.size(), 1);
      TVal sixth{w_.const_f32("sixth", ones, {1.0f / 6}).name, ones};
      TVal half{w_.const_f32("half", ones, {0.5f}).name, ones};
      TVal y = binary_fp(Op::ADD, mul_fp(x, sixth, x.shape), half, x.shape);
      return bind(n, clamp_f32(y, 0, 1), nullptr);
    }
    if (op == "aten::leaky_relu.default") {
      const double slope = n.args[1].to_double();
      if (is_int()) return table_int(n, [slope](double x) { return x >= 0 ? x : x * slope; });
      if (slope < 0 || slope > 1) refuse("leaky_relu slope outside [0, 1] (FP: max(x, slope*x))");
      TVal x = get(n.args[0].tensor());
      const std::vector<int64_t> ones(x.shape.size(), 1);
      TVal k{w_.const_f32("slope", ones, {static_cast<float>(slope)}).name, ones};
      TVal out = tensor(x.shape, DType::FP32, x);
      w_.add_op(Op::MAXIMUM, {x.name, mul_fp(x, k, x.shape).name}, {out.name});
      return bind(n, out, nullptr);
    }
    if (op == "aten::silu.default") {
      if (is_int()) return table_int(n, [](double x) { return x / (1.0 + std::exp(-x)); });
      TVal x = get(n.args[0].tensor());
      TVal sg = tensor(x.shape, DType::FP32, x);
      w_.add_op(Op::SIGMOID, {x.name}, {sg.name});
      return bind(n, mul_fp(x, sg, x.shape), nullptr);
    }
    // elu(x) = x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)
    if (!is_int()) refuse("elu in the FP profile (not lowered)");
    const double alpha = n.args[1].to_double(), scale = n.args[2].to_double(),
                 in_scale = n.args[3].to_double();
    table_int(n, [=](double x) {
      return x > 0 ? scale * x : scale * alpha * (std::exp(x * in_scale) - 1);
    });
  }

  // ---- transformer ops (FP) --------------------------------------------------------------

  void fp_only(const char* what) {
    if (is_int()) refuse(std::string(what) + " in the INT profile (not lowered: stays on the CPU)");
  }

  // A tensor operand, or (FP) a Scalar argument as a [1] constant; `logical` gets its sizes.
  TVal fp_operand(const ir::Argument& a, std::vector<int64_t>* logical) {
    if (a.is_tensor()) {
      *logical = g_.value(a.tensor()).spec.sizes;
      return get(a.tensor());
    }
    if (is_int()) refuse("scalar operand in the INT profile (not lowered)");
    logical->clear();
    TVal t;
    t.name = w_.const_f32("scalar", {1}, {static_cast<float>(a.to_double())}).name;
    t.shape = {1};
    return t;
  }

  TVal mul_fp(const TVal& a, const TVal& b, std::vector<int64_t> shape) {
    TVal out = tensor(std::move(shape), DType::FP32, a);
    w_.add_op(Op::MUL, {a.name, b.name, w_.const_i8("shift", {1}, {0}).name}, {out.name});
    return out;
  }

  TVal binary_fp(Op op, const TVal& a, const TVal& b, std::vector<int64_t> shape) {
    TVal out = tensor(std::move(shape), DType::FP32, a);
    w_.add_op(op, {a.name, b.name}, {out.name});
    return out;
  }

  // bmm [B, M, K] x [B, K, N] (mm as B = 1): MATMUL.
  void matmul(const Node& n, const std::string& op) {
    fp_only("matrix multiply of two activations");
    const ir::TensorSpec& as = g_.value(n.args[0].tensor()).spec;
    const ir::TensorSpec& bs = g_.value(n.args[1].tensor()).spec;
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    TVal a = to_logical(get(n.args[0].tensor()));
    TVal b = to_logical(get(n.args[1].tensor()));
    if (op == "aten::mm.default") {
      a = reshape(a, {1, as.sizes[0], as.sizes[1]});
      b = reshape(b, {1, bs.sizes[0], bs.sizes[1]});
    }
    const std::string zp = zp_const(DType::FP32, 0);
    TVal out = tensor({a.shape[0], a.shape[1], b.shape[2]}, DType::FP32, a);
    w_.add_op(Op::MATMUL, {a.name, b.name, zp, zp}, {out.name});
    bind(n, reshape(out, ys.sizes), nullptr);
  }

  // a / b as a * reciprocal(b) (a constant b is inverted at compile time).
  void divide(const Node& n) {
    fp_only("division");
    if (n.args.size() > 2 && !n.args[2].is_none()) refuse("division with a rounding mode");
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    std::vector<int64_t> la, lb;
    TVal a = fp_operand(n.args[0], &la);
    TVal b = fp_operand(n.args[1], &lb);
    if (!n.args[1].is_tensor() || g_.value(n.args[1].tensor()).is_constant()) {
      std::vector<float> inv;
      if (n.args[1].is_tensor()) {
        for (double x : constant_numbers(g_, n.args[1].tensor()))
          inv.push_back(static_cast<float>(1.0 / x));
      } else {
        inv.push_back(static_cast<float>(1.0 / n.args[1].to_double()));
      }
      b.name = w_.const_f32("reciprocal", b.shape, inv).name;
    } else {
      TVal r = tensor(b.shape, DType::FP32, b);
      w_.add_op(Op::RECIPROCAL, {b.name}, {r.name});
      b = r;
    }
    auto [x, y] = align(a, b, la, lb, ys.rank());
    bind(n, mul_fp(x, y, x.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes), nullptr);
  }

  // where(cond, a, b): SELECT on operands brought to the output's rank (logical layout).
  void where(const Node& n) {
    fp_only("where");
    const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
    std::vector<TVal> ops;
    for (int i = 0; i < 3; ++i) {
      if (!n.args[i].is_tensor()) refuse("scalar operand (not lowered)");
      const ValueId v = n.args[i].tensor();
      TVal t = to_logical(get(v));
      const auto& logical = g_.value(v).spec.sizes;
      if (logical.size() < ys.rank()) {
        std::vector<int64_t> s(ys.rank() - logical.size(), 1);
        s.insert(s.end(), logical.begin(), logical.end());
        t = reshape(t, s);
      }
      ops.push_back(t);
    }
    if (ops[0].dtype != DType::BOOL) refuse("condition is not bool");
    TVal out = tensor(ys.sizes, DType::FP32, ops[1]);
    out.nhwc = false;
    w_.add_op(Op::SELECT, {ops[0].name, ops[1].name, ops[2].name}, {out.name});
    bind(n, out, nullptr);
  }

  // Layer norm over the last dim: mean and variance by REDUCE_SUM, RSQRT, scale and shift.
  void layer_norm(const Node& n) {
    fp_only("layer norm");
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const std::vector<int64_t> shape = int_list(n.args[1]);
    if (shape.size() != 1) refuse("layer norm over more than the last dim (not lowered)");
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
        refuse("layer norm mean/rstd outputs are used");
    const size_t r = xs.rank();
    const int64_t c = xs.sizes.back();
    TVal x = to_logical(get(n.args[0].tensor()));
    std::vector<int64_t> reduced = x.shape;
    reduced.back() = 1;
    std::vector<int64_t> one(r, 1);
    TosaAttr ax;
    ax.axis = static_cast<int32_t>(r - 1);
    const TVal inv_n{w_.const_f32("inv_n", one, {static_cast<float>(1.0 / c)}).name, one};
    TVal sum = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::REDUCE_SUM, {x.name}, {sum.name}, ax);
    TVal mean = mul_fp(sum, inv_n, reduced);
    TVal centered = binary_fp(Op::SUB, x, mean, x.shape);
    TVal sq = mul_fp(centered, centered, x.shape);
    TVal sq_sum = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::REDUCE_SUM, {sq.name}, {sq_sum.name}, ax);
    TVal var = mul_fp(sq_sum, inv_n, reduced);
    const TVal eps{w_.const_f32("eps", one, {static_cast<float>(n.args[4].to_double())}).name, one};
    TVal var_eps = binary_fp(Op::ADD, var, eps, reduced);
    TVal rstd = tensor(reduced, DType::FP32, x);
    w_.add_op(Op::RSQRT, {var_eps.name}, {rstd.name});
    TVal y = mul_fp(centered, rstd, x.shape);
    std::vector<int64_t> cshape(r, 1);
    cshape.back() = c;
    for (int i : {2, 3}) {
      if (n.args[static_cast<size_t>(i)].is_none()) continue;
      const ValueId pv = n.args[static_cast<size_t>(i)].tensor();
      TVal p = reshape(get(pv), cshape);
      y = i == 2 ? mul_fp(y, p, x.shape) : binary_fp(Op::ADD, y, p, x.shape);
    }
    bind(n, y, nullptr);
  }

  // split / split_with_sizes: one SLICE per used output.
  void split(const Node& n) {
    fp_only("split");
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    const int64_t dim = norm_dim(n.args[2].to_int(), xs.rank());
    TVal x = to_logical(get(n.args[0].tensor()));
    std::vector<int64_t> sizes = int_list(n.args[1]);
    if (n.args[1].is<int64_t>()) {  // split.Tensor: chunks of split_size, the last smaller
      const int64_t chunk = n.args[1].to_int(), total = xs.sizes[static_cast<size_t>(dim)];
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

  void batch_norm(const Node& n) {
    if (is_int()) refuse("batch norm that was not folded into a convolution (INT: fold it first)");
    // (input, weight, bias, running_mean, running_var, momentum, eps)
    const ir::TensorSpec& xs = g_.value(n.args[0].tensor()).spec;
    if (xs.rank() != 4) refuse("batch norm of a " + std::to_string(xs.rank()) + "-D input");
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
        refuse("batch norm statistics outputs are used");
    const int64_t c = xs.sizes[1];
    const std::vector<double> mean = constant_numbers(g_, n.args[3].tensor());
    const std::vector<double> var = constant_numbers(g_, n.args[4].tensor());
    const std::vector<double> gamma = n.args[1].is_none()
                                          ? std::vector<double>(static_cast<size_t>(c), 1.0)
                                          : constant_numbers(g_, n.args[1].tensor());
    const std::vector<double> beta = n.args[2].is_none()
                                         ? std::vector<double>(static_cast<size_t>(c), 0.0)
                                         : constant_numbers(g_, n.args[2].tensor());
    const double eps = n.args[6].to_double();
    std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
    for (size_t i = 0; i < static_cast<size_t>(c); ++i) {
      const double s = gamma[i] / std::sqrt(var[i] + eps);
      scale[i] = static_cast<float>(s);
      shift[i] = static_cast<float>(beta[i] - mean[i] * s);
    }
    TVal x = to_nhwc(get(n.args[0].tensor()));
    const std::string sc = w_.const_f32("bn_scale", {1, 1, 1, c}, scale).name;
    const std::string sh = w_.const_f32("bn_shift", {1, 1, 1, c}, shift).name;
    TVal m = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::MUL, {x.name, sc, w_.const_i8("shift", {1}, {0}).name}, {m.name});
    TVal out = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::ADD, {m.name, sh}, {out.name});
    bind(n, out, nullptr);
  }

  const Graph& g_;
  std::vector<NodeId> nodes_;
  TosaProfile profile_;
  std::unordered_set<NodeId> in_region_;
  std::unordered_set<NodeId> consumed_;
  std::unordered_map<ValueId, TVal> vals_;
  std::unordered_set<std::string> output_names_, input_names_;
  bool check_only_ = false;
  TosaWriter w_;
  const Node* current_ = nullptr;
};

// The nodes a single-op check lowers with `node`: the dequantizes feeding it and, for INT, the
// activation and quantize after it.
std::vector<NodeId> neighbourhood(const Graph& g, const Node& node, TosaProfile profile) {
  std::vector<NodeId> nodes;
  if (profile == TosaProfile::Int) {
    for (ValueId v : node.inputs()) {
      const ir::Value& value = g.value(v);
      if (!value.is_intermediate()) continue;
      const Node& p = g.node(value.producer);
      if (is_op(p, kDequant) || is_op(p, kDequantChannel)) nodes.push_back(p.id);
    }
  }
  nodes.push_back(node.id);
  if (profile == TosaProfile::Int && !node.outputs.empty() && node.outputs[0] != ir::kNoValue) {
    ValueId v = node.outputs[0];
    for (int step = 0; step < 2; ++step) {
      const ir::Value& value = g.value(v);
      if (value.users.size() != 1) break;
      const Node& u = g.node(value.users[0]);
      if (step == 0 && activation_bounds(u) && fuses_activation(node.op.str())) {
        nodes.push_back(u.id);
        v = u.outputs[0];
        continue;
      }
      if (is_op(u, kQuant)) nodes.push_back(u.id);
      break;
    }
  }
  std::sort(nodes.begin(), nodes.end(), [&](NodeId a, NodeId b) {
    const auto& order = g.nodes();
    return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
  });
  return nodes;
}

}  // namespace

const char* profile_name(TosaProfile p) { return p == TosaProfile::Int ? "INT" : "FP"; }

namespace {
TosaLowering lower(const Graph& graph, const std::vector<NodeId>& nodes, TosaProfile profile,
                   bool check_only) {
  Lowerer lowerer(graph, nodes, profile, check_only);
  try {
    return lowerer.run();
  } catch (const Refusal& r) {
    TosaLowering out;
    out.reason = lowerer.current() ? lowerer.current()->describe() + ": " + r.why : r.why;
    return out;
  } catch (const std::exception& e) {  // CompileError from argument access, bad_alloc, ...
    TosaLowering out;
    out.reason = lowerer.current() ? lowerer.current()->describe() + ": " + e.what() : e.what();
    return out;
  }
}
}  // namespace

TosaLowering lower_to_tosa(const Graph& graph, const std::vector<NodeId>& nodes,
                           TosaProfile profile) {
  return lower(graph, nodes, profile, false);
}

compiler::SupportDecision tosa_supports(const Graph& graph, const Node& node, TosaProfile profile) {
  using compiler::SupportDecision;
  const std::string op = node.op.str();
  const std::string prefix = std::string("TOSA ") + profile_name(profile) + ": ";
  if (op == kQuant || op == kDequant || op == kDequantChannel) {
    if (profile == TosaProfile::Fp)
      return SupportDecision::no(prefix + op + ": quantized ops belong to the INT profile");
    if (op != kDequantChannel && !per_tensor_qparams(node))
      return SupportDecision::no(prefix + op + ": " + qdq_reason(node));
    if (op == kQuant) {
      const ir::Value& in = graph.value(node.args[0].tensor());
      if (!in.is_intermediate())
        return SupportDecision::no(prefix +
                                   "quantize of a float graph input (the INT profile "
                                   "has no float tensors): stays on the CPU");
      // A quantize belongs to the op before it: supported when that op is.
      const Node& p = graph.node(in.producer);
      if (is_op(p, kDequant)) return SupportDecision::yes();
      return tosa_supports(graph, p, profile);
    }
    const ValueId out = node.outputs[0];
    if (op == kDequant && is_graph_output(graph, out))
      return SupportDecision::no(prefix +
                                 "dequantize to a float graph output (the INT profile "
                                 "has no float tensors): stays on the CPU");
    // A dequantize belongs to its readers: with one of them on the CPU, its float result would
    // leave the region, which INT cannot express.
    for (NodeId u : graph.value(out).users) {
      const Node& reader = graph.node(u);
      if (is_op(reader, kQuant)) continue;  // dequantize -> quantize: a requantisation
      if (!tosa_supports(graph, reader, profile).supported)
        return SupportDecision::no(prefix + "its reader " + reader.describe() +
                                   " stays on the CPU");
    }
    return SupportDecision::yes();
  }
  // An activation fused into the op before it is supported when that op is.
  if (profile == TosaProfile::Int && activation_bounds(node)) {
    const ir::Value& in = graph.value(node.args[0].tensor());
    if (in.is_intermediate()) {
      const Node& p = graph.node(in.producer);
      if (fuses_activation(p.op.str()) && in.users.size() == 1)
        return tosa_supports(graph, p, profile);
    }
  }
  const TosaLowering l = lower(graph, neighbourhood(graph, node, profile), profile, true);
  if (l.ok) return SupportDecision::yes();
  // The reason without the node description (the caller names the node).
  std::string why = l.reason;
  const std::string described = node.describe() + ": ";
  if (why.rfind(described, 0) == 0) why = why.substr(described.size());
  return SupportDecision::no(prefix + why);
}

TosaSelection select_tosa_nodes(const Graph& graph, TosaProfile profile) {
  TosaSelection sel;
  std::unordered_set<NodeId> chosen;
  // Nodes left outside that depend on a chosen node: a node reading one of them cannot join,
  // or the region would feed the CPU and read its result (a cycle once contracted). Reading
  // other outside nodes (e.g. a quantize of a graph input) is a plain region input.
  std::unordered_set<NodeId> tainted;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    compiler::SupportDecision d = tosa_supports(graph, n, profile);
    bool after_region = false;
    for (ValueId v : n.inputs()) {
      const ir::Value& value = graph.value(v);
      if (!value.is_intermediate()) continue;
      if (chosen.count(value.producer) || tainted.count(value.producer)) after_region = true;
      if (d.supported && tainted.count(value.producer)) {
        d = compiler::SupportDecision::no("reads '" + value.name +
                                          "', which the CPU computes from the TOSA region's "
                                          "results (one region only)");
      }
    }
    if (d.supported) {
      chosen.insert(id);
      sel.nodes.push_back(id);
    } else {
      if (after_region) tainted.insert(id);
      sel.refusals.push_back(n.describe() + ": " + d.reason);
    }
  }
  // INT: a dequantize whose reader stayed outside would make a float region output; it stays
  // outside with its reader.
  if (profile == TosaProfile::Int) {
    std::vector<NodeId> kept;
    for (NodeId id : sel.nodes) {
      const Node& n = graph.node(id);
      bool outside_reader = false;
      if (is_op(n, kDequant) || is_op(n, kDequantChannel)) {
        for (NodeId u : graph.value(n.outputs[0]).users)
          if (!chosen.count(u)) outside_reader = true;
      }
      if (outside_reader) {
        chosen.erase(id);
        sel.refusals.push_back(n.describe() + ": TOSA INT: its reader stays on the CPU");
      } else {
        kept.push_back(id);
      }
    }
    sel.nodes = std::move(kept);
  }
  return sel;
}

}  // namespace pteron::tosa_aot
