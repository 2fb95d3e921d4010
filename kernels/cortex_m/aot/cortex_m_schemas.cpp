#include "kernels/cortex_m/aot/cortex_m_schemas.h"

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/compile_error.h"

namespace pteron::cortex_m::aot {
namespace {

using compiler::ir::ArgSchema;
using compiler::ir::ArgType;
using compiler::ir::OpRef;
using compiler::ir::OpSchema;
using compiler::ir::OpSchemaRegistry;
using compiler::ir::ReturnSchema;

// Out-variant schemas as ExecuTorch writes them, except quantized_linear's multipliers and shifts:
// int32 tensors (constants in the program) as for conv, not int lists (one program value per
// int, each in method memory); the functional form drops the out argument.
constexpr const char* kOutSchemas[] = {
    "cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, "
    "int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, "
    "int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_add.out(Tensor self, int self_zero_point, int self_multiplier, "
    "int self_shift, Tensor other, int other_zero_point, int other_multiplier, int other_shift, "
    "int output_zero_point, int output_multiplier, int output_shift, int activation_min, "
    "int activation_max, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other, "
    "int other_zero_point, int output_zero_point, int output_multiplier, int output_shift, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_linear.out(Tensor input, Tensor weights, Tensor? bias, "
    "Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset, "
    "Tensor requantize_multipliers, Tensor requantize_shifts, int activation_max, "
    "int activation_min, *, Tensor(a!) out) -> Tensor(a!)",
    // pteron's own: linear with its constants packed as the kernel streams them
    // (kernels/cortex_m/util/linear_packed.h): weights [N/4, K/16, 4, 16], per group of four
    // output channels their kernel sums, multipliers, left and right shifts.
    "cortex_m::quantized_linear_packed.out(Tensor input, Tensor weights, Tensor channel_quant, "
    "int output_offset, int activation_min, int activation_max, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    "cortex_m::softmax.out(Tensor input, int dim, int input_zero_point, int output_zero_point, "
    "int input_multiplier, int input_shift, int diff_min, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::transpose.out(Tensor input, int[] perm, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *, "
    "Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, "
    "int[] padding, int[] dilation, int input_offset, int output_offset, "
    "Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, "
    "int activation_max, Tensor? scratch, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_depthwise_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, "
    "int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, "
    "int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, "
    "int activation_min, int activation_max, Tensor? scratch, *, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_avg_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride, "
    "int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor? scratch, "
    "*, Tensor(a!) out) -> Tensor(a!)",
    "cortex_m::quantized_max_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride, "
    "int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, "
    "int activation_min, int activation_max, *, Tensor(a!) out) -> Tensor(a!)",
    // pteron's own: int8 to int8 with other qparams (a dequantize -> quantize pair).
    "cortex_m::requantize.out(Tensor input, int input_zero_point, int output_zero_point, "
    "int multiplier, int shift, int activation_min, int activation_max, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    // pteron's own: a buffer of `nbytes` for the next kernel's scratch, so the memory plan places
    // it in an arena like any tensor (alive for that kernel only); the kernel does nothing.
    "cortex_m::scratch_buffer.out(int nbytes, *, Tensor(a!) out) -> Tensor(a!)",
    // pteron's own: int8 NHWC upsampling from a constant table of source positions (and Q11
    // weights) the lowering computes with torch's formulas (kernels/cortex_m/util/upsample_taps.h).
    "cortex_m::upsample_nearest2d_nhwc.out(Tensor input, Tensor indices, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    "cortex_m::upsample_bilinear2d_nhwc.out(Tensor input, Tensor taps, int input_zero_point, "
    "int output_zero_point, int multiplier, int shift, *, Tensor(a!) out) -> Tensor(a!)",
    // pteron's own: an int8 unary op as the table of its 256 results.
    "cortex_m::quantized_lut.out(Tensor input, Tensor table, *, Tensor(a!) out) -> Tensor(a!)",
    // pteron's own: a standalone relu/clamp on int8 values sharing input and output qparams.
    "cortex_m::quantized_clamp.out(Tensor input, int activation_min, int activation_max, *, "
    "Tensor(a!) out) -> Tensor(a!)",
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "Tensor(a!) out" -> type "Tensor", alias "a!", name "out".
void parse_typed_name(std::string_view text, std::string& type, std::string& alias,
                      std::string& name) {
  text = trim(text);
  const size_t space = text.rfind(' ');
  std::string_view t = space == std::string_view::npos ? text : text.substr(0, space);
  name = space == std::string_view::npos ? "" : std::string(text.substr(space + 1));
  alias.clear();
  if (const size_t open = t.find('('); open != std::string_view::npos) {
    alias = std::string(t.substr(open + 1, t.find(')') - open - 1));
    t = t.substr(0, open);
  }
  type = std::string(t);
}

OpSchema parse_schema(std::string_view text) {
  OpSchema s;
  s.text = std::string(text);
  const size_t open = text.find('('), close = text.rfind(") ->");
  s.op = OpRef::parse(text.substr(0, open));
  s.is_out_variant = s.op.overload == "out";
  bool kwarg_only = false;
  std::string_view args = text.substr(open + 1, close - open - 1);
  while (!args.empty()) {
    const size_t comma = args.find(',');
    const std::string_view item = trim(args.substr(0, comma));
    args = comma == std::string_view::npos ? std::string_view{} : args.substr(comma + 1);
    if (item == "*") {
      kwarg_only = true;
      continue;
    }
    ArgSchema a;
    std::string type;
    parse_typed_name(item, type, a.alias, a.name);
    a.type = ArgType::parse(type);
    a.kwarg_only = kwarg_only;
    s.args.push_back(std::move(a));
  }
  ReturnSchema r;
  std::string type, name;
  parse_typed_name(std::string(text.substr(close + 4)) + " ", type, r.alias, name);
  r.type = ArgType::parse(type);
  s.returns.push_back(std::move(r));
  return s;
}

// The functional op of an out-variant: no out argument, a fresh Tensor returned.
OpSchema functional_of(const OpSchema& out) {
  OpSchema f = out;
  f.op.overload = "default";
  f.is_out_variant = false;
  f.args.pop_back();
  f.returns = {ReturnSchema{"", ArgType::parse("Tensor"), ""}};
  std::string text = out.text;
  text.replace(text.find(".out("), 5, "(");
  text = text.substr(0, text.find(", *, Tensor(a!) out)")) + ") -> Tensor";
  f.text = text;
  return f;
}

}  // namespace

void register_cortex_m_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpSchemaRegistry& registry = OpSchemaRegistry::global();
    for (const char* text : kOutSchemas) {
      OpSchema out = parse_schema(text);
      if (registry.find(out.op) != nullptr) continue;
      OpSchema functional = functional_of(out);
      const std::string out_name = out.op.str();
      registry.add(std::move(out));
      registry.add(std::move(functional), out_name);
    }
  });
}

const compiler::ir::OpSchema& cortex_m_op(const char* name) {
  register_cortex_m_schemas();
  const OpSchema* s =
      OpSchemaRegistry::global().find(std::string("cortex_m::") + name + ".default");
  if (s == nullptr) throw compiler::CompileError(std::string("no cortex_m op ") + name);
  return *s;
}

}  // namespace pteron::cortex_m::aot
