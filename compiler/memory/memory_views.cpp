#include "compiler/memory/memory_views.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"

namespace pteron::compiler {
namespace {

namespace ops = compiler::ops;

// An int argument by schema name: `fallback` when None, INT64_MIN when symbolic.
int64_t int_arg(const ir::Node& n, std::string_view name, int64_t fallback) {
  const ir::Argument& a = n.arg(name);
  if (a.is_none()) return fallback;
  return a.kind() == ir::ArgKind::Int ? a.to_int() : INT64_MIN;
}

// Elements before `dim` (all leading dims size 1, else -1) to the start of the selected run.
int64_t leading_run_offset(const ir::TensorSpec& in, int64_t dim, int64_t start) {
  for (int64_t d = 0; d < dim; ++d)
    if (in.sizes[static_cast<size_t>(d)] != 1) return -1;
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < in.rank(); ++d) inner *= in.sizes[d];
  return start * inner;
}

// Ops whose output, when a view, is the input's bytes in the same order from offset 0 whenever
// the element counts match.
bool is_plain_reshape(const ir::Node& node) {
  for (ir::OpName op : {ops::aten::view, ops::aten::squeeze_dims, ops::aten::squeeze_dim,
                        ops::aten::squeeze, ops::aten::unsqueeze, ops::aten::alias}) {
    if (node.is(op)) return true;
  }
  return false;
}

bool is_reshape(const ir::Node& node) {
  return is_plain_reshape(node) || node.is(ops::aten::permute);
}

// executorch_prim::et_view.default(Tensor self, SymInt[] size) -> Tensor, whose kernel call
// (ExecuTorch's emitted form) is the same name with args (self, size, out): the out-variant
// schema lives here, outside the registry, which keys schemas by name.
const ir::OpSchema& et_view_schema() {
  static const ir::OpSchema& schema = [] {
    const auto arg = [](const char* name, const char* type, bool out = false) {
      ir::ArgSchema a;
      a.name = name;
      a.type = ir::ArgType::parse(type);
      a.alias = out ? "a!" : "";
      a.kwarg_only = out;
      a.is_out = out;
      return a;
    };
    static ir::OpSchema out;
    out.op = ir::OpRef::parse("executorch_prim::et_view.default");
    out.text = "executorch_prim::et_view.default(Tensor self, SymInt[] size, *, Tensor(a!) out)";
    out.args = {arg("self", "Tensor"), arg("size", "SymInt[]"), arg("out", "Tensor", true)};
    out.is_out_variant = true;
    ir::OpSchema functional;
    functional.op = out.op;
    functional.text =
        "executorch_prim::et_view.default(Tensor(a) self, SymInt[] size) -> Tensor(a)";
    functional.args = {arg("self", "Tensor"), arg("size", "SymInt[]")};
    functional.returns.push_back({"", ir::ArgType::parse("Tensor"), "a"});
    functional.is_view = true;
    ir::OpSchemaRegistry& registry = ir::OpSchemaRegistry::global();
    const ir::OpSchema* found = registry.find(functional.op);
    const ir::OpSchema& added = found != nullptr ? *found : registry.add(std::move(functional));
    const_cast<ir::OpSchema&>(added).out_variant = &out;
    return std::cref(added);
  }();
  return schema;
}

// Byte offset of `node`'s output in its input's bytes, or -1 when it is not a plain view.
int64_t view_offset(const ir::Node& node, const ir::TensorSpec& in, const ir::TensorSpec& out) {
  if (is_plain_reshape(node)) {
    return in.numel() == out.numel() ? 0 : -1;
  }
  if (node.is(ops::aten::permute)) {
    if (node.arg("dims").kind() != ir::ArgKind::IntList) return -1;
    // Contiguous in and out: the order of the dims that are not 1 must be kept.
    const auto& perm = node.arg("dims").get<std::vector<int64_t>>();
    const int64_t rank = static_cast<int64_t>(in.rank());
    int64_t last = -1;
    for (int64_t p : perm) {
      const int64_t d = p < 0 ? p + rank : p;
      if (d < 0 || d >= rank) return -1;
      if (in.sizes[static_cast<size_t>(d)] == 1) continue;
      if (d < last) return -1;
      last = d;
    }
    return 0;
  }
  const bool slice = node.is(ops::aten::slice_Tensor);
  if (!slice && !node.is(ops::aten::select_int)) return -1;
  const int64_t rank = static_cast<int64_t>(in.rank());
  int64_t dim = int_arg(node, "dim", 0);
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return -1;
  const int64_t size = in.sizes[static_cast<size_t>(dim)];
  if (slice) {
    if (out.rank() != in.rank()) return -1;
    int64_t start = int_arg(node, "start", 0);
    const int64_t step = int_arg(node, "step", 1);
    if (start == INT64_MIN || step == INT64_MIN) return -1;
    if (start < 0) start += size;
    start = std::clamp<int64_t>(start, 0, size);
    const int64_t n = out.sizes[static_cast<size_t>(dim)];
    if ((step != 1 && n > 1) || start + n > size) return -1;
    return leading_run_offset(in, dim, start);
  }
  if (out.rank() + 1 != in.rank()) return -1;  // select
  int64_t index = int_arg(node, "index", INT64_MIN);
  if (index == INT64_MIN) return -1;
  if (index < 0) index += size;
  if (index < 0 || index >= size) return -1;
  return leading_run_offset(in, dim, index);
}

}  // namespace

std::unordered_map<ir::ValueId, MemoryView> find_memory_views(
    const ir::Graph& graph, const std::vector<Step>& steps,
    const std::vector<LoweredDelegate>& delegates, bool plan_inputs, uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  // Planned values: step outputs, planned inputs; never state or its in-place new values.
  std::unordered_set<ir::ValueId> planned;
  if (plan_inputs) planned.insert(graph.inputs().begin(), graph.inputs().end());
  std::unordered_set<ir::ValueId> state_values(graph.states().begin(), graph.states().end());
  for (const ir::BufferMutation& m : graph.buffer_mutations()) state_values.insert(m.new_value);
  std::unordered_map<ir::ValueId, MemoryView> views;
  std::unordered_set<ir::ValueId> output_sources;  // sources of views that are graph outputs
  for (const Step& s : steps) {
    if (s.delegate >= 0) {
      for (ir::ValueId v : delegates[static_cast<size_t>(s.delegate)].outputs) planned.insert(v);
      continue;
    }
    const ir::Node& node = graph.node(s.node);
    for (ir::ValueId v : node.outputs) planned.insert(v);
    if (node.outputs.size() != 1 || node.args.empty() || !node.args[0].is_tensor()) continue;
    const ir::ValueId in = node.args[0].tensor(), out = node.outputs[0];
    if (!planned.count(in) || state_values.count(in) || state_values.count(out)) continue;
    if (graph.is_output(out)) {
      // An output may be a view of an intermediate nothing else returns (a model's last
      // reshape), never of an input or another output: outputs keep distinct memory.
      const ir::ValueId source = views.count(in) ? views.at(in).source : in;
      if (!graph.value(source).is_intermediate() || graph.is_output(source) ||
          output_sources.count(source)) {
        continue;
      }
      output_sources.insert(source);
    }
    const ir::TensorSpec& a = graph.value(in).spec;
    const ir::TensorSpec& b = graph.value(out).spec;
    if (a.dtype != b.dtype || !a.is_contiguous() || !b.is_contiguous() || b.nbytes() == 0 ||
        a.nbytes() == 0) {
      continue;
    }
    // A dynamic view's sizes are computed at run time from the output's symbolic sizes; only
    // a reshape (offset 0: every element where it was) is one, a slice's or select's offset
    // depends on run-time sizes.
    const bool dynamic = a.is_dynamic() || b.is_dynamic();
    if (dynamic && (!b.has_sym_sizes() || !is_reshape(node))) continue;
    const int64_t elements = view_offset(node, a, b);
    if (elements < 0) continue;
    const uint64_t bytes = static_cast<uint64_t>(elements) * (a.nbytes() / a.numel());
    if (bytes % alignment != 0 || bytes + b.nbytes() > a.nbytes()) continue;
    MemoryView view{node.id, in, bytes, dynamic};
    if (auto it = views.find(in); it != views.end()) {
      view.source = it->second.source;
      view.byte_offset += it->second.byte_offset;
    }
    views[out] = view;
  }
  return views;
}

std::vector<Step> steps_without_views(const std::vector<Step>& steps,
                                      const std::unordered_map<ir::ValueId, MemoryView>& views) {
  std::unordered_set<ir::NodeId> nodes;
  for (const auto& [v, view] : views)
    if (!view.dynamic) nodes.insert(view.node);
  std::vector<Step> kept;
  for (const Step& s : steps)
    if (s.delegate >= 0 || !nodes.count(s.node)) kept.push_back(s);
  return kept;
}

int use_et_view_for_dynamic_views(ir::Graph& graph,
                                  const std::unordered_map<ir::ValueId, MemoryView>& views) {
  int rewritten = 0;
  for (const auto& [v, view] : views) {
    if (!view.dynamic) continue;
    const ir::TensorSpec& spec = graph.value(v).spec;
    ir::SymIntList size;
    bool symbolic = false;
    for (size_t d = 0; d < spec.rank(); ++d) {
      const ir::SymExpr* e = spec.sym_size(d);
      symbolic = symbolic || e != nullptr;
      size.items.push_back(e != nullptr ? ir::SymIntItem{0, spec.sym_sizes[d]}
                                        : ir::SymIntItem{spec.sizes[d], nullptr});
    }
    const ir::Argument size_arg =
        symbolic ? ir::Argument(std::move(size)) : ir::Argument(std::vector<int64_t>(spec.sizes));
    const ir::ValueId self = graph.node(view.node).args[0].tensor();
    graph.set_op(view.node, et_view_schema(), {ir::Argument(ir::TensorRef{self}), size_arg});
    ++rewritten;
  }
  return rewritten;
}

}  // namespace pteron::compiler
