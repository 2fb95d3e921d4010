// The Lowerer's frame: region inputs and outputs, TOSA tensors for IR values, the per-node
// dispatch to the op families (conv_pool.cpp, linear_matmul.cpp, elementwise.cpp, shape_ops.cpp,
// softmax_tables.cpp, normalization.cpp), and the entry points.
#include "backends/tosa/aot/lowering/lowerer.h"

#include <cstring>
#include <string>

namespace pteron::tosa_aot::detail {

Lowerer::Lowerer(const Graph& g, const std::vector<NodeId>& nodes, TosaProfile profile,
                 bool check_only)
    : g_(g),
      nodes_(nodes),
      profile_(profile),
      in_region_(nodes.begin(), nodes.end()),
      check_only_(check_only) {
  w_.set_check_only(check_only);
}

TosaLowering Lowerer::run() {
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

TosaIo Lowerer::add_region_input(ValueId v) {
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

TosaIo Lowerer::add_region_output(ValueId v) {
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
  io.dim_order = t.nhwc ? std::vector<uint8_t>{0, 2, 3, 1} : ir::identity_dim_order(t.shape.size());
  io.quantized = t.quant;
  io.scale = t.scale;
  io.zero_point = t.zp;
  return io;
}

std::vector<int64_t> Lowerer::to_nhwc_shape(const std::vector<int64_t>& s) {
  return {s[0], s[2], s[3], s[1]};
}

void Lowerer::check_rank(const std::vector<int64_t>& s, const std::string& what) {
  if (s.size() > kMaxRank)
    refuse(what + " has rank " + std::to_string(s.size()) + " (TOSA 1.0: at most 6)");
  if (s.empty()) refuse(what + " is a 0-d tensor (not lowered)");
  for (int64_t d : s)
    if (d < 1) refuse(what + " has an empty dimension " + shape_str(s));
}

std::string Lowerer::base() const {
  return current_ && !current_->outputs.empty() && current_->outputs[0] != ir::kNoValue
             ? g_.value(current_->outputs[0]).name
             : std::string("t");
}

TVal Lowerer::tensor(std::vector<int64_t> shape, DType dtype, const TVal& like) {
  TVal t = like;
  const TosaTensorInfo info = w_.add_tensor(base(), shape, dtype);
  t.name = info.name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

TVal Lowerer::get(ValueId v) {
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
TVal Lowerer::operand(ValueId v) {
  TVal t = get(v);
  if (is_int() && !(t.quant && t.dtype == DType::INT8))
    refuse("operand '" + g_.value(v).name +
           "' is not an int8 quantized activation (no dequantize in front)");
  return t;
}

TVal Lowerer::transpose(const TVal& in, const std::vector<int32_t>& perms,
                        std::vector<int64_t> out_shape, bool out_nhwc) {
  TVal t = tensor(std::move(out_shape), in.dtype, in);
  t.nhwc = out_nhwc;
  TosaAttr a;
  a.perms = perms;
  w_.add_op(Op::TRANSPOSE, {in.name}, {t.name}, a);
  return t;
}

TVal Lowerer::to_nhwc(const TVal& in) {
  if (in.nhwc) return in;
  if (in.shape.size() != 4) refuse("expected a 4-D activation, got " + shape_str(in.shape));
  return transpose(in, {0, 2, 3, 1}, to_nhwc_shape(in.shape), true);
}

TVal Lowerer::to_logical(const TVal& in) {
  if (!in.nhwc) return in;
  const auto& s = in.shape;
  return transpose(in, {0, 3, 1, 2}, {s[0], s[3], s[1], s[2]}, false);
}

TVal Lowerer::reshape(const TVal& in, const std::vector<int64_t>& shape) {
  if (in.shape == shape) return in;
  TVal t = tensor(shape, in.dtype, in);
  t.nhwc = false;
  const std::string s = w_.const_shape("shape", shape);
  w_.add_op(Op::RESHAPE, {in.name, s}, {t.name});
  return t;
}

void Lowerer::lower_node(const Node& n) {
  const std::string op = n.op.str();
  if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) refuse("it has no output");
  const ir::TensorSpec& out = g_.value(n.outputs[0]).spec;
  if (op == kDequant) return dequantize(n);
  if (op == kQuant) return quantize(n);
  if (op == kDequantChannel) {
    if (!is_int()) refuse("quantized ops belong to the INT profile");
    if (!g_.value(n.arg("input").tensor()).is_constant())
      refuse("per-channel dequantize of an activation (only weights are per channel)");
    return;  // read by the convolution / linear that uses the weight
  }
  check_rank(out.sizes, "output");
  if (!is_int() && out.dtype != ScalarType::Float)
    refuse("output is " + ir::dtype_name(out.dtype) + " (the FP profile lowering takes f32)");
  if (is_int() && out.dtype != ScalarType::Float)
    refuse("output is " + ir::dtype_name(out.dtype) +
           " (INT profile ops compute on dequantized int8, i.e. float in the IR)");
  if (op == ops::aten::convolution) return conv(n);
  if (op == ops::aten::linear) return linear(n);
  if (op == ops::aten::add_Tensor || op == ops::aten::mul_Tensor || op == ops::aten::sub_Tensor)
    return binary(n, op);
  if (activation_bounds(n)) return activation(n);
  if (op == ops::aten::max_pool2d_with_indices) return max_pool(n);
  if (op == ops::aten::avg_pool2d) return avg_pool(n);
  if (op == ops::aten::_adaptive_avg_pool2d || op == ops::aten::mean_dim) return global_pool(n, op);
  if (is_view_op(op)) return view(n);
  if (is_permute_op(op)) return permute(n, op);
  if (op == ops::aten::cat) return cat(n);
  if (op == ops::aten::constant_pad_nd) return pad(n, PadMode::Constant);
  if (op == ops::aten::reflection_pad1d || op == ops::aten::reflection_pad2d ||
      op == ops::aten::reflection_pad3d)
    return pad(n, PadMode::Reflect);
  if (op == ops::aten::replication_pad1d || op == ops::aten::replication_pad2d ||
      op == ops::aten::replication_pad3d)
    return pad(n, PadMode::Replicate);
  if (op == ops::aten::upsample_nearest2d_vec) return resize(n, false);
  if (op == ops::aten::upsample_bilinear2d_vec) return resize(n, true);
  if (op == ops::aten::_softmax) return softmax(n);
  if (op == ops::aten::sigmoid || op == ops::aten::tanh) return sigmoid_tanh(n, op);
  if (op == ops::aten::hardswish || op == ops::aten::hardsigmoid || op == ops::aten::leaky_relu ||
      op == ops::aten::silu || op == ops::aten::elu)
    return pointwise(n, op);
  if (op == ops::aten::gelu) return gelu(n);
  if (op == ops::aten::_native_batch_norm_legit_no_training) return batch_norm(n);
  if (op == ops::aten::bmm || op == ops::aten::mm) return matmul(n, op);
  if (op == ops::aten::div_Tensor) return divide(n);
  if (op == ops::aten::where_self) return where(n);
  if (op == ops::aten::native_layer_norm) return layer_norm(n);
  if (op == ops::aten::split_with_sizes || op == ops::aten::split_with_sizes_copy ||
      op == ops::aten::split_Tensor || op == ops::aten::split_copy_Tensor)
    return split(n);
  refuse(op + " has no TOSA lowering here");
}

void Lowerer::fp_only(const char* what) {
  if (is_int()) refuse(std::string(what) + " in the INT profile (not lowered: stays on the CPU)");
}

TosaLowering lower(const Graph& graph, const std::vector<NodeId>& nodes, TosaProfile profile,
                   bool check_only) {
  Lowerer lowerer(graph, nodes, profile, check_only);
  try {
    return lowerer.run();
  } catch (const Refusal& r) {
    TosaLowering out;
    out.reason = lowerer.current() ? lowerer.current()->describe() + ": " + r.what() : r.what();
    return out;
  } catch (const std::exception& e) {  // a broken invariant (argument access, ...): not a refusal
    const std::string where = lowerer.current() ? lowerer.current()->describe() + ": " : "";
    throw compiler::CompileError(where + "TOSA lowering: " + e.what());
  }
}

}  // namespace pteron::tosa_aot::detail

namespace pteron::tosa_aot {

const char* profile_name(TosaProfile p) { return p == TosaProfile::Int ? "INT" : "FP"; }

TosaLowering lower_to_tosa(const compiler::ir::Graph& graph,
                           const std::vector<compiler::ir::NodeId>& nodes, TosaProfile profile) {
  return detail::lower(graph, nodes, profile, false);
}

}  // namespace pteron::tosa_aot
