#include "backends/vulkan/aot/vulkan_lowering.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "backends/vulkan/aot/payload_builder.h"
#include "backends/vulkan/aot/vulkan_ops.h"
#include "compiler/ir/queries.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {
namespace {

using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::shape_str;
using compiler::ir::TensorSpec;
using compiler::ir::ValueId;

// A size expression in the payload's postfix form; `symbol` maps a symbol's name to its index
// (refusing one no region input carries).
void encode_size(const compiler::ir::SymExpr& e,
                 const std::function<uint32_t(const std::string&)>& symbol, SizeProgram& out) {
  using Op = compiler::ir::SymExpr::Op;
  const auto push = [&](fb::SizeOp op, int64_t arg) {
    out.ops.push_back(op);
    out.args.push_back(arg);
  };
  switch (e.op) {
    case Op::Const:
      return push(fb::SizeOp::Const, e.value);
    case Op::Symbol:
      return push(fb::SizeOp::Symbol, symbol(e.symbol));
    case Op::Pow: {  // a constant exponent in [0, 8]: repeated products
      const int64_t k = e.operands[1]->value;
      if (k == 0) return push(fb::SizeOp::Const, 1);
      for (int64_t i = 0; i < k; ++i) encode_size(*e.operands[0], symbol, out);
      if (k > 1) push(fb::SizeOp::Mul, k);
      return;
    }
    default:
      break;
  }
  for (const auto& o : e.operands) encode_size(*o, symbol, out);
  const fb::SizeOp op = e.op == Op::Add        ? fb::SizeOp::Add
                        : e.op == Op::Mul      ? fb::SizeOp::Mul
                        : e.op == Op::FloorDiv ? fb::SizeOp::FloorDiv
                        : e.op == Op::Mod      ? fb::SizeOp::Mod
                        : e.op == Op::Max      ? fb::SizeOp::Max
                                               : fb::SizeOp::Min;
  push(op, static_cast<int64_t>(e.operands.size()));
}

std::vector<uint32_t> dims_of(const Graph& g, ValueId v) {
  std::vector<uint32_t> d;
  for (int64_t s : g.value(v).spec.sizes) d.push_back(static_cast<uint32_t>(s));
  return d;
}

// A clamp's or hardtanh's [lo, hi] (an absent bound unbounded).
std::pair<float, float> clamp_bounds(const Node& n, Kind kind) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const Argument& lo = n.arg(kind == Kind::Clamp ? "min" : "min_val");
  const Argument& hi = n.arg(kind == Kind::Clamp ? "max" : "max_val");
  return {lo.is_none() ? -inf : static_cast<float>(lo.to_double()),
          hi.is_none() ? inf : static_cast<float>(hi.to_double())};
}

}  // namespace

using compiler::Region;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::shape_str;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

std::vector<uint8_t> build_payload(const Graph& g, const Region& region, bool fp16,
                                   bool fp16_arithmetic) {
  PayloadBuilder b;
  b.set_fp16_arithmetic(fp16_arithmetic);
  const fb::DataType inner = fp16 ? fb::DataType::Float16 : fb::DataType::Float32;
  std::unordered_map<ValueId, uint32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> output_converts;  // (fp16 tensor, fp32 output)
  // Bounded dynamic shapes: each symbol is read from the first region input dim that is that
  // symbol alone; every dynamic tensor gets its sizes as expressions of them.
  std::map<std::string, uint32_t> symbols;
  for (size_t i = 0; i < region.inputs.size(); ++i) {
    const TensorSpec& s = g.value(region.inputs[i]).spec;
    for (size_t d = 0; s.is_dynamic() && d < s.rank(); ++d) {
      const compiler::ir::SymExpr* e = s.sym_size(d);
      if (e == nullptr || e->op != compiler::ir::SymExpr::Op::Symbol || symbols.count(e->symbol)) {
        continue;
      }
      symbols[e->symbol] =
          b.add_symbol(static_cast<uint32_t>(i), static_cast<uint32_t>(d),
                       static_cast<uint32_t>(s.min_sizes[d]), static_cast<uint32_t>(s.sizes[d]));
    }
  }
  const auto symbol_index = [&](const std::string& name) -> uint32_t {
    const auto it = symbols.find(name);
    if (it == symbols.end()) {
      compiler::refuse("dynamic shape: size symbol " + name +
                       " is no dim of the region's inputs (the Vulkan delegate reads its sizes "
                       "from them)");
    }
    return it->second;
  };
  const auto sized = [&](ValueId v, uint32_t id) {
    const TensorSpec& s = g.value(v).spec;
    if (!s.is_dynamic()) return id;
    std::vector<SizeProgram> dims(s.rank());
    for (size_t d = 0; d < s.rank(); ++d) {
      const compiler::ir::SymExpr* e = s.sym_size(d);
      if (e == nullptr) {
        dims[d] = SizeProgram::constant(s.sizes[d]);
      } else {
        encode_size(*e, symbol_index, dims[d]);
      }
    }
    b.set_sym_dims(id, std::move(dims));
    return id;
  };
  uint32_t arg = 0;
  for (ValueId v : region.inputs) {
    const bool index = g.value(v).spec.dtype == ScalarType::Long;
    const uint32_t ext = sized(
        v, b.add_input(dims_of(g, v), arg++, index ? fb::DataType::Int64 : fb::DataType::Float32));
    ids[v] = ext;
    if (fp16 && !index) {
      ids[v] = sized(v, b.add_tensor(dims_of(g, v), inner));
      b.add_node(fb::OpType::Convert, {ext}, ids[v]);
    }
  }
  for (ValueId v : region.outputs) {
    const uint32_t ext = sized(v, b.add_output(dims_of(g, v), arg++));
    ids[v] = ext;
    if (fp16) {
      ids[v] = sized(v, b.add_tensor(dims_of(g, v), inner));
      output_converts.emplace_back(ids[v], ext);
    }
  }
  const auto tensor = [&](ValueId v) -> uint32_t {
    if (auto it = ids.find(v); it != ids.end()) return it->second;
    const Value& val = g.value(v);
    uint32_t id;
    if (val.is_constant()) {
      const auto& bytes = val.constant->bytes;
      id = b.add_constant(dims_of(g, v),
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)),
                          inner);
    } else {
      id = sized(v, b.add_tensor(dims_of(g, v), inner));
    }
    ids[v] = id;
    return id;
  };
  // A scalar operand: a one-element constant.
  const auto operand = [&](const Argument& a) -> uint32_t {
    if (a.is_tensor()) return tensor(a.tensor());
    const float value = static_cast<float>(a.to_double());
    return b.add_constant({}, std::span<const float>(&value, 1), inner);
  };
  // A [1, N] addmm bias becomes a constant [N] (same bytes); a non-constant one is refused.
  const auto bias_1d = [&](ValueId v) -> uint32_t {
    const Value& val = g.value(v);
    if (val.spec.rank() == 1) return tensor(v);
    if (!val.is_constant()) compiler::refuse("addmm bias [1, N] is not a constant");
    const auto& bytes = val.constant->bytes;
    return b.add_constant({static_cast<uint32_t>(val.spec.sizes.back())},
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)),
                          inner);
  };
  const auto transposed_constant = [&](const Value& w) -> uint32_t {
    const size_t rows = static_cast<size_t>(w.spec.sizes[0]);
    const size_t cols = static_cast<size_t>(w.spec.sizes[1]);
    const float* src = reinterpret_cast<const float*>(w.constant->bytes.data());
    std::vector<float> t(rows * cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) t[c * rows + r] = src[r * cols + c];
    }
    return b.add_constant({static_cast<uint32_t>(cols), static_cast<uint32_t>(rows)}, t, inner);
  };
  const float inf = std::numeric_limits<float>::infinity();
  // relu / clamp / hardtanh of a conv or matmul output nothing else reads folds into that
  // node's clamp: one dispatch and one tensor fewer (the clamp's graph node then has no event
  // of its own; the producer's carries both).
  struct Fold {
    ValueId out;  // the clamp's output, written by the producer
    float lo, hi;
  };
  std::unordered_map<NodeId, Fold> folds;  // producer -> its folded clamp
  std::unordered_set<NodeId> folded;       // clamps folded away
  {
    std::unordered_set<NodeId> in_region(region.nodes.begin(), region.nodes.end());
    std::unordered_set<ValueId> outputs(region.outputs.begin(), region.outputs.end());
    for (NodeId id : region.nodes) {
      const Node& n = g.node(id);
      const Kind kind = op_kinds().at(n.op.str());
      if (kind != Kind::Relu && kind != Kind::Clamp && kind != Kind::Hardtanh) continue;
      const ValueId v = n.arg("self").tensor();
      const Value& val = g.value(v);
      if (!val.is_intermediate() || val.users.size() != 1 || outputs.count(v) ||
          !in_region.count(val.producer) || folds.count(val.producer)) {
        continue;
      }
      const Kind pk = op_kinds().at(g.node(val.producer).op.str());
      if (pk != Kind::Conv && pk != Kind::Linear && pk != Kind::AddMm && pk != Kind::Mm &&
          pk != Kind::Bmm) {
        continue;
      }
      Fold f{n.outputs[0], 0.0f, inf};
      if (kind != Kind::Relu) std::tie(f.lo, f.hi) = clamp_bounds(n, kind);
      folds[val.producer] = f;
      folded.insert(id);
    }
  }
  for (size_t k = 0; k < region.nodes.size(); ++k) {
    const Node& n = g.node(region.nodes[k]);
    if (folded.count(region.nodes[k])) continue;
    b.set_debug_id(static_cast<int32_t>(k));  // graph info: regions[r].nodes[k]
    const Kind kind = op_kinds().at(n.op.str());
    const auto fold = folds.find(region.nodes[k]);
    const bool fused = fold != folds.end();
    const uint32_t out = tensor(fused ? fold->second.out : n.outputs[0]);
    NodeAttrs clamped;  // the folded clamp's bounds, if any
    if (fused) {
      clamped.output_min = fold->second.lo;
      clamped.output_max = fold->second.hi;
    }
    const auto in = [&](const char* name) { return tensor(n.arg(name).tensor()); };
    // The tensor an op of one tensor input transforms ("self", or "input" for some).
    const auto source = [&] { return tensor(n.inputs().front()); };
    switch (kind) {
      case Kind::Linear: {
        // A constant weight [N, K] is stored transposed, [K, N], and run as a MatMul: the
        // shaders then read W rows contiguously along N, the dimension neighbouring
        // invocations cover (contiguous vector loads instead of gathers on CPU devices).
        const Value& w = g.value(n.arg("weight").tensor());
        const bool transpose = w.is_constant() && !ids.count(w.id);
        std::vector<uint32_t> ins = {in("input"),
                                     transpose ? transposed_constant(w) : in("weight")};
        if (!n.arg("bias").is_none()) ins.push_back(in("bias"));
        b.add_node(transpose ? fb::OpType::MatMul : fb::OpType::Linear, ins, out, clamped);
        break;
      }
      case Kind::AddMm:
        b.add_node(fb::OpType::MatMul, {in("mat1"), in("mat2"), bias_1d(n.arg("self").tensor())},
                   out, clamped);
        break;
      case Kind::Mm:
        b.add_node(fb::OpType::MatMul, {in("self"), in("mat2")}, out, clamped);
        break;
      case Kind::Bmm:
        b.add_node(fb::OpType::BatchMatMul, {in("self"), in("mat2")}, out, clamped);
        break;
      case Kind::Add:
      case Kind::Sub:
        b.add_node(kind == Kind::Add ? fb::OpType::Add : fb::OpType::Sub,
                   {in("self"), operand(n.arg("other"))}, out,
                   {.alpha = static_cast<float>(n.arg("alpha").to_double())});
        break;
      case Kind::Mul:
      case Kind::Div:
        b.add_node(kind == Kind::Mul ? fb::OpType::Mul : fb::OpType::Div,
                   {in("self"), operand(n.arg("other"))}, out);
        break;
      case Kind::Unary: {
        fb::UnaryOp op = unary_ops().at(n.op.str());
        if (op == fb::UnaryOp::Gelu && n.arg("approximate").get<std::string>() == "tanh") {
          op = fb::UnaryOp::GeluTanh;
        }
        b.add_node(fb::OpType::Unary, {in("self")}, out, {.unary = op});
        break;
      }
      case Kind::MaxPool:
      case Kind::AvgPool: {
        const auto u32 = [](const std::vector<int64_t>& v) {
          return std::vector<uint32_t>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
        };
        const auto k = pair_of(n.arg("kernel_size"), {});
        NodeAttrs a{.stride = u32(pair_of(n.arg("stride"), k)),
                    .padding = u32(pair_of(n.arg("padding"), {0, 0})),
                    .dilation = {1, 1},
                    .kernel = u32(k)};
        if (kind == Kind::MaxPool) {
          a.pool = fb::PoolType::Max;
          a.dilation = u32(pair_of(n.arg("dilation"), {1, 1}));
        } else {
          a.pool = fb::PoolType::Average;
          a.count_include_pad = n.arg("count_include_pad").get<bool>();
          const Argument& divisor = n.arg("divisor_override");
          a.divisor = divisor.is_none() ? 0 : static_cast<uint32_t>(divisor.to_int());
        }
        b.add_node(fb::OpType::Pool2d, {in("self")}, out, a);
        break;
      }
      case Kind::AdaptiveAvgPool:
        b.add_node(fb::OpType::Pool2d, {in("self")}, out, {.pool = fb::PoolType::AdaptiveAverage});
        break;
      case Kind::UpsampleNearest:
      case Kind::UpsampleBilinear:
      case Kind::UpsampleAntialias: {
        NodeAttrs a{.resize = kind == Kind::UpsampleNearest    ? fb::ResizeMode::Nearest
                              : kind == Kind::UpsampleBilinear ? fb::ResizeMode::Bilinear
                                                               : fb::ResizeMode::BilinearAntialias,
                    .scales = upsample_scales(n)};
        if (kind != Kind::UpsampleNearest) a.align_corners = n.arg("align_corners").get<bool>();
        b.add_node(fb::OpType::Upsample, {source()}, out, a);
        break;
      }
      case Kind::ConstantPad:
      case Kind::ReflectionPad:
      case Kind::ReplicationPad: {
        std::string why;
        const auto pads = pads_of(g, n, &why);
        if (!why.empty()) throw std::runtime_error(why);
        NodeAttrs a{.pads = {},
                    .pad_mode = kind == Kind::ConstantPad     ? fb::PadMode::Constant
                                : kind == Kind::ReflectionPad ? fb::PadMode::Reflect
                                                              : fb::PadMode::Replicate};
        for (int64_t p : pads) a.pads.push_back(static_cast<int32_t>(p));
        if (kind == Kind::ConstantPad) a.pad_value = static_cast<float>(n.arg("value").to_double());
        b.add_node(fb::OpType::Pad, {in("self")}, out, a);
        break;
      }
      case Kind::Cat: {
        std::vector<uint32_t> ins;
        for (ValueId v : n.arg("tensors").get<compiler::ir::TensorList>().ids) {
          ins.push_back(tensor(v));
        }
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        b.add_node(fb::OpType::Cat, ins, out,
                   {.axis = static_cast<uint32_t>(norm_dim(n.arg("dim").to_int(), rank))});
        break;
      }
      case Kind::Slice:
      case Kind::Select: {
        const TensorSpec& x = g.value(n.arg("self").tensor()).spec;
        const int64_t dim = norm_dim(n.arg("dim").to_int(), static_cast<int64_t>(x.rank()));
        const int64_t size = x.sizes[static_cast<size_t>(dim)];
        const Argument& first = n.arg(kind == Kind::Select ? "index" : "start");
        int64_t start = first.is_none() ? 0 : first.to_int();
        if (start < 0) start += size;
        start = std::clamp<int64_t>(start, 0, size);
        const uint32_t step =
            kind == Kind::Select ? 1 : static_cast<uint32_t>(n.arg("step").to_int());
        NodeAttrs a{.axis = static_cast<uint32_t>(dim),
                    .start = static_cast<uint32_t>(start),
                    .step = step};
        if (kind == Kind::Slice) {
          b.add_node(fb::OpType::Slice, {in("self")}, out, a);
        } else {  // a one-wide slice, then a reshape (no copy) that drops the dim
          std::vector<uint32_t> dims = dims_of(g, n.arg("self").tensor());
          dims[static_cast<size_t>(dim)] = 1;
          const uint32_t sliced = b.add_tensor(dims, inner);
          b.add_node(fb::OpType::Slice, {in("self")}, sliced, a);
          b.add_node(fb::OpType::Reshape, {sliced}, out);
        }
        break;
      }
      case Kind::Embedding:
        b.add_node(fb::OpType::Embedding, {in("weight"), in("indices")}, out);
        break;
      case Kind::Transpose: {
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        std::vector<uint32_t> perm(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = static_cast<uint32_t>(d);
        if (!has_arg(n, "dim0")) {  // t: a matrix's two dims (a vector's one stays)
          if (rank == 2) std::swap(perm[0], perm[1]);
        } else if (rank >= 2) {
          std::swap(perm[static_cast<size_t>(norm_dim(n.arg("dim0").to_int(), rank))],
                    perm[static_cast<size_t>(norm_dim(n.arg("dim1").to_int(), rank))]);
        }
        b.add_node(fb::OpType::Permute, {in("self")}, out, {.perm = perm});
        break;
      }
      case Kind::Relu:
        b.add_node(fb::OpType::Clamp, {in("self")}, out, {.output_min = 0.0f, .output_max = inf});
        break;
      case Kind::Clamp:
      case Kind::Hardtanh: {
        const auto [lo, hi] = clamp_bounds(n, kind);
        b.add_node(fb::OpType::Clamp, {in("self")}, out, {.output_min = lo, .output_max = hi});
        break;
      }
      case Kind::Softmax:
        b.add_node(fb::OpType::Softmax, {in("self")}, out);
        break;
      case Kind::Conv: {
        const auto pair = [&](const char* name) {
          const auto& v = n.arg(name).get<std::vector<int64_t>>();
          return std::vector<uint32_t>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
        };
        std::vector<uint32_t> ins = {in("input"), in("weight")};
        if (!n.arg("bias").is_none()) ins.push_back(in("bias"));
        b.add_node(fb::OpType::Conv2d, ins, out,
                   {.output_min = clamped.output_min,
                    .output_max = clamped.output_max,
                    .stride = pair("stride"),
                    .padding = pair("padding"),
                    .dilation = pair("dilation"),
                    .groups = static_cast<uint32_t>(n.arg("groups").get<int64_t>())});
        break;
      }
      case Kind::Mean:
        b.add_node(fb::OpType::Mean, {in("self")}, out);
        break;
      case Kind::Reshape:
        b.add_node(fb::OpType::Reshape, {source()}, out);
        break;
      case Kind::Permute: {
        std::vector<uint32_t> perm;
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        for (int64_t d : n.arg("dims").get<std::vector<int64_t>>()) {
          perm.push_back(static_cast<uint32_t>(d < 0 ? d + rank : d));
        }
        b.add_node(fb::OpType::Permute, {in("self")}, out, {.perm = perm});
        break;
      }
      case Kind::LayerNorm: {
        const bool has_weight = !n.arg("weight").is_none(), has_bias = !n.arg("bias").is_none();
        std::vector<uint32_t> ins = {in("input")};
        if (has_weight) ins.push_back(in("weight"));
        if (has_bias) ins.push_back(in("bias"));
        b.add_node(fb::OpType::LayerNorm, ins, out,
                   {.eps = static_cast<float>(n.arg("eps").to_double()),
                    .has_weight = has_weight,
                    .has_bias = has_bias});
        break;
      }
    }
  }
  b.set_debug_id(-1);
  for (const auto& [from, to] : output_converts) b.add_node(fb::OpType::Convert, {from}, to);
  return b.build();
}

}  // namespace pteron::vulkan
