#include "compiler/passes/winograd_conv.h"

#include <cstring>
#include <unordered_map>
#include <vector>

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {

const ir::OpSchema& conv2d_winograd_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::conv2d_winograd", {{"input", "Tensor"},
                                                            {"weight_winograd", "Tensor"},
                                                            {"bias", "Tensor?"},
                                                            {"residual", "Tensor?"},
                                                            {"padding", "int[]"},
                                                            {"relu", "bool"}});
  return functional;
}

namespace {

// Transformed weights of at least this many floats (36 x Cin x Cout) are made here; smaller
// ones the kernel transforms per call. Measured at 1 thread (AVX-512 Xeon, load ~3.5, batch 1):
// 28x28 128->128 (590K floats) 1.49 ms pretransformed vs 2.12 per call; 14x14 256->256 (2.4M)
// 2.10 vs 5.86 (and 3.5 on the im2col SGEMM); 56x56 64->64 (147K) 2.12 vs 2.18, not worth
// 4x its weights in the program: whole resnet-18 with layer1 pretransformed too (threshold
// 2^17) ran 40.0 / 40.3 / 50.9 ms against 38.9 / 39.6 / 40.7 without, interleaved (a U
// transformed per call is still in cache when the SGEMM packs it). The .pte grows by 3x the
// rewritten weights (36 / 9 floats per tap set, the originals dropped when nothing else reads
// them): resnet-18 46.8 -> 73.3 MB.
constexpr int64_t kMinWeightFloats = int64_t{1} << 19;
// Outputs smaller than 8x8 (resnet-18's layer4, 7x7: 4 tiles) stay on the SGEMM path: 36
// products of 4 rows each stream all of U (37 MB at 512 x 512): 10.3 ms vs 4.1.
constexpr int64_t kMinOutput = 8;

bool int_list_is(const ir::Argument& a, int64_t v) {
  if (!a.is<std::vector<int64_t>>()) return false;
  const auto& l = a.get<std::vector<int64_t>>();
  if (l.empty()) return false;
  for (int64_t x : l) {
    if (x != v) return false;
  }
  return true;
}

// The 36 x Cin x Cout transformed weights, in double then rounded once.
std::vector<uint8_t> transform(const float* w, int64_t cout, int64_t cin) {
  static const double G[6][3] = {{0.25, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
  std::vector<uint8_t> bytes(static_cast<size_t>(36 * cin * cout) * sizeof(float));
  float* u = reinterpret_cast<float*>(bytes.data());
  for (int64_t co = 0; co < cout; ++co) {
    for (int64_t ci = 0; ci < cin; ++ci) {
      const float* g = w + (co * cin + ci) * 9;
      double t[6][3];
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 3; ++j) {
          t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
        }
      }
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          u[((i * 6 + j) * cin + ci) * cout + co] =
              static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
      }
    }
  }
  return bytes;
}

bool takes(const ir::Graph& graph, const ir::Node& conv) {
  const std::string op = conv.op.str();
  const bool add_relu = op == "pteron::convolution_add_relu.default";
  if ((op != ops::aten::convolution && op != "pteron::convolution_relu.default" && !add_relu) ||
      conv.args.size() != (add_relu ? 10u : 9u) || conv.outputs.size() != 1) {
    return false;
  }
  if (add_relu) {
    if (!conv.arg("other").is_tensor()) return false;
    const ir::Value& other = graph.value(conv.arg("other").tensor());
    if (other.spec.dtype != ScalarType::Float ||
        other.spec.sizes != graph.value(conv.outputs[0]).spec.sizes) {
      return false;
    }
  }
  if (!conv.arg("input").is_tensor() || !conv.arg("weight").is_tensor() ||
      !int_list_is(conv.arg("stride"), 1) || !int_list_is(conv.arg("dilation"), 1) ||
      !conv.arg("padding").is<std::vector<int64_t>>() ||
      conv.arg("padding").get<std::vector<int64_t>>().size() != 2 ||
      !conv.arg("transposed").is<bool>() || conv.arg("transposed").get<bool>() ||
      !conv.arg("groups").is<int64_t>() || conv.arg("groups").get<int64_t>() != 1) {
    return false;
  }
  const ir::Value& input = graph.value(conv.arg("input").tensor());
  const ir::Value& weight = graph.value(conv.arg("weight").tensor());
  const ir::Value& out = graph.value(conv.outputs[0]);
  if (input.spec.rank() != 4 || input.spec.dtype != ScalarType::Float ||
      out.spec.dtype != ScalarType::Float || out.spec.rank() != 4 || !weight.is_constant() ||
      weight.spec.dtype != ScalarType::Float || !weight.spec.is_contiguous() ||
      weight.spec.rank() != 4 || weight.spec.sizes[2] != 3 || weight.spec.sizes[3] != 3) {
    return false;
  }
  if (!conv.arg("bias").is_none()) {
    if (!conv.arg("bias").is_tensor()) return false;
    if (graph.value(conv.arg("bias").tensor()).spec.dtype != ScalarType::Float) return false;
  }
  const int64_t cout = weight.spec.sizes[0], cin = weight.spec.sizes[1];
  return out.spec.sizes[2] >= kMinOutput && out.spec.sizes[3] >= kMinOutput &&
         36 * cin * cout >= kMinWeightFloats;
}

}  // namespace

int winograd_conv(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int rewritten = 0;
  // Weights several convolutions share are transformed once.
  std::unordered_map<ir::ValueId, ir::ValueId> transformed;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    if (graph.is_dynamic_node(id)) continue;  // sizes are upper bounds, not exact
    const ir::Node& conv = graph.node(id);
    if (!takes(graph, conv)) continue;
    const bool add_relu = conv.op.str() == "pteron::convolution_add_relu.default";
    const bool relu = add_relu || conv.op.str() == "pteron::convolution_relu.default";
    // Copies: graph edits below may move nodes.
    const ir::Argument input = conv.arg("input"), bias = conv.arg("bias"),
                       padding = conv.arg("padding");
    const ir::Argument other = add_relu ? conv.arg("other") : ir::Argument(ir::None{});
    const ir::ValueId w = conv.arg("weight").tensor();
    auto known = transformed.find(w);
    ir::ValueId u_id = known == transformed.end() ? ir::kNoValue : known->second;
    if (u_id == ir::kNoValue) {
      const ir::Value& weight = graph.value(w);
      const int64_t cout = weight.spec.sizes[0], cin = weight.spec.sizes[1];
      std::vector<uint8_t> u =
          transform(reinterpret_cast<const float*>(weight.constant->bytes.data()), cout, cin);
      ir::TensorSpec spec = ir::TensorSpec::contiguous(ScalarType::Float, {36, cin, cout});
      const std::string name = weight.name + "_winograd";
      if (weight.users.size() == 1 && !graph.is_output(w)) {
        // Replaced in place: the original leaves the program.
        u_id = w;
        graph.set_constant(u_id, std::move(spec), ir::ConstantData::owned(std::move(u), name));
      } else {
        u_id = graph.add_constant(graph.unique_name(name), std::move(spec),
                                  ir::ConstantData::owned(std::move(u), name));
        transformed[w] = u_id;
      }
    }
    std::vector<ir::Argument> args = {input, ir::TensorRef{u_id}, bias, other, padding, relu};
    graph.set_op(id, conv2d_winograd_schema(), std::move(args));
    // The last convolution of a shared weight leaves the original unread.
    if (u_id != w && is_unused(graph, w)) graph.remove_constant(w);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace pteron::compiler
