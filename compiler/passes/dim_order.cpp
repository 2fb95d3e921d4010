#include <cstring>

#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

// Bytes of `spec`'s tensor rearranged from its dim order into the contiguous one.
std::vector<uint8_t> to_contiguous(const ir::TensorSpec& spec, std::span<const uint8_t> bytes) {
  const size_t es = bytes.size() / std::max<int64_t>(1, spec.numel());
  const std::vector<int64_t> src_strides = spec.strides();
  const size_t rank = spec.sizes.size();
  std::vector<uint8_t> out(bytes.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < spec.numel(); ++linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * src_strides[d];
    std::memcpy(out.data() + linear * es, bytes.data() + offset * es, es);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < spec.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

int normalize_dim_orders(ir::Graph& graph) {
  int changed = 0;
  for (ir::ValueId c : graph.constants()) {
    const ir::Value& v = graph.value(c);
    if (v.spec.is_contiguous() || v.spec.dim_order.size() < 2) continue;
    ir::TensorSpec spec = ir::TensorSpec::contiguous(v.spec.dtype, v.spec.sizes);
    ir::ConstantData data =
        ir::ConstantData::owned(to_contiguous(v.spec, v.constant->bytes), v.constant->fqn);
    data.kind = v.constant->kind;
    graph.set_constant(c, std::move(spec), std::move(data));
    ++changed;
  }
  for (ir::NodeId n : graph.nodes()) {
    for (ir::ValueId out : graph.node(n).outputs) {
      if (out == ir::kNoValue) continue;
      const ir::TensorSpec& spec = graph.value(out).spec;
      if (spec.is_contiguous()) continue;
      ir::TensorSpec contiguous = spec;  // keeps a dynamic tensor's bounds
      contiguous.dim_order = ir::identity_dim_order(spec.rank());
      graph.set_spec(out, std::move(contiguous));
      ++changed;
    }
  }
  return changed;
}

}  // namespace pteron::compiler
