#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/ir/kernel_call_form.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/passes.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {

namespace {

bool has_kernel(const std::string& qualified, const std::vector<std::string>& libraries) {
  for (const KernelEntry& e : registered_kernels()) {
    if (qualified != e.name) continue;
    for (const std::string& library : libraries) {
      if (library == e.library) return true;
    }
  }
  return false;
}

// Whether any input or output of `node` has a dtype `pred` holds for.
template <typename Pred>
bool any_value_dtype(const ir::Node& node, const ir::Graph& graph, Pred pred) {
  for (ir::ValueId v : node.inputs()) {
    if (pred(graph.value(v).spec.dtype)) return true;
  }
  for (ir::ValueId v : node.outputs) {
    if (v != ir::kNoValue && pred(graph.value(v).spec.dtype)) return true;
  }
  return false;
}

bool touches(const ir::Node& node, const ir::Graph& graph, ir::ScalarType dtype) {
  return any_value_dtype(node, graph, [dtype](ir::ScalarType t) { return t == dtype; });
}

bool touches_complex(const ir::Node& node, const ir::Graph& graph) {
  return any_value_dtype(node, graph, [](ir::ScalarType t) { return is_complex(t); });
}

// Kernels that take complex tensors: ExecuTorch's complex ops, the complex arithmetic of
// util/complex_elementwise.h (add, sub, mul, polar, abs), the FFTs, and the copies whose kernels
// move elements of any size (tested with complex64 and complex128 in
// tests/kernels/test_complex.py). Every other kernel computes on real dtypes only.
bool takes_complex(const ir::Node& node, const ir::OpSchema& schema, const ir::Graph& graph) {
  // complex32 (view_as_complex of a float16 tensor): no kernel computes or converts it.
  if (touches(node, graph, ir::ScalarType::ComplexHalf)) return false;
  // Tensor-tensor add, sub and mul only (their Scalar forms compute on real dtypes), into
  // complex64 / complex128 from operands of that dtype or real ones.
  if (ir::any_overload_of(schema.op,
                          {ops::aten::add_out, ops::aten::sub_out, ops::aten::mul_out})) {
    if (schema.op.overload != "out") return false;
    const ir::ScalarType out = graph.value(node.outputs[0]).spec.dtype;
    if (out != ir::ScalarType::ComplexFloat && out != ir::ScalarType::ComplexDouble) return false;
    for (ir::ValueId v : node.inputs()) {
      const ir::ScalarType t = graph.value(v).spec.dtype;
      if (t != out && is_complex(t)) return false;
    }
    return true;
  }
  if (ir::any_overload_of(schema.op, {ops::aten::polar, ops::aten::complex, ops::aten::abs,
                                      ops::aten::view_as_complex_copy})) {
    return true;
  }
  // The FFTs (optimized library, KISS FFT in float): complex64 only.
  if (ir::any_overload_of(schema.op,
                          {ops::aten::_fft_r2c, ops::aten::_fft_c2r, ops::aten::_fft_c2c})) {
    for (ir::ValueId v : node.inputs()) {
      const ir::ScalarType t = graph.value(v).spec.dtype;
      if (is_complex(t) && t != ir::ScalarType::ComplexFloat) return false;
    }
    return graph.value(node.outputs[0]).spec.dtype != ir::ScalarType::ComplexDouble;
  }
  if (!ir::any_overload_of(
          schema.op,
          {ops::aten::_conj_physical, ops::aten::view_as_real_copy, ops::aten::clone,
           ops::aten::alias_copy, ops::aten::permute_copy, ops::aten::view_copy,
           ops::aten::expand_copy, ops::aten::slice_copy_Tensor, ops::aten::select_copy_int,
           ops::aten::unsqueeze_copy, ops::aten::squeeze_copy, ops::aten::cat,
           ops::aten::constant_pad_nd, ops::aten::_to_copy})) {
    return false;
  }
  if (schema.op.name == "view_as_real_copy") return true;
  // A copy keeps the dtype; _to_copy also turns a real tensor into complex64 / complex128.
  const ir::ScalarType out = graph.value(node.outputs[0]).spec.dtype;
  for (ir::ValueId v : node.inputs()) {
    const ir::ScalarType t = graph.value(v).spec.dtype;
    const bool to_complex =
        schema.op.name == "_to_copy" && !is_complex(t) &&
        (out == ir::ScalarType::ComplexFloat || out == ir::ScalarType::ComplexDouble);
    if (t != out && !to_complex) return false;
  }
  return true;
}

}  // namespace

void check_kernels_available(const ir::Graph& graph,
                             const std::unordered_set<ir::NodeId>& delegated,
                             const std::vector<std::string>& libraries) {
  // op -> first node needing it, and how many nodes need it
  std::map<std::string, std::pair<std::string, int>> missing;
  for (ir::NodeId id : graph.nodes()) {
    if (delegated.count(id)) continue;
    const ir::Node& node = graph.node(id);
    // Control flow is jumps around its subgraphs' instructions, whose kernels their own
    // compile checked.
    if (ir::is_control_flow(node)) continue;
    const ir::OpSchema* schema = kernel_schema_for(node);
    std::string key;
    if (schema == nullptr) {
      key = node.op.str() + " (no out-variant form)";
    } else {
      const std::string qualified =
          schema->op.ns + "::" + schema->op.name + "." + schema->op.overload;
      if (touches_complex(node, graph) && !takes_complex(node, *schema, graph)) {
        key = schema->op.str() +
              " with complex tensors (pteron's kernels take complex64 / complex128 in add, "
              "sub, mul, abs, polar, complex, view_as_real / view_as_complex, complex64 FFTs, "
              "_conj_physical and copies "
              "only)";
      } else if (has_kernel(qualified, libraries)) {
        continue;
      } else {
        key = schema->op.str();
      }
    }
    auto [it, inserted] = missing.try_emplace(key, node.describe(), 0);
    ++it->second.second;
  }
  if (missing.empty()) return;
  std::string names;
  for (const std::string& library : libraries) names += (names.empty() ? "" : ", ") + library;
  std::string message = std::to_string(missing.size()) +
                        " operator(s) have no kernel in the selected kernel libraries (" + names +
                        "): ";
  bool first = true;
  for (const auto& [op, where] : missing) {
    message += (first ? "" : "; ") + op + " x" + std::to_string(where.second) + ", first at " +
               where.first;
    first = false;
  }
  throw CompileError(message);
}

}  // namespace pteron::compiler
