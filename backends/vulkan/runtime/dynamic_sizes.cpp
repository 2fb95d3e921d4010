// Bounded dynamic shapes, "resize at execute": a region's sizes are expressions over symbols
// read from its inputs' sizes (schema SizeExpr / SizeSymbol). Memory, pipelines and descriptor
// sets are made once at init for the upper bounds; a call whose symbols differ from the last
// call's writes the sizes into the delegate's copy of the payload, verifies that copy again
// (every shape rule at these sizes), plans the dispatches from it (grids and push constants)
// and re-records the command buffers. A call with the same sizes replays the recording.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

// Everything that follows from the sizes: the externals' sizes and copies, every dispatch's
// grid and push constants (same shaders may change with the sizes: their pipelines come from
// the context's cache), and the recordings.
Error replan(Delegate& d) {
  const auto& ts = *d.payload->tensors();
  uint64_t planned_bytes = 0;
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    planned_bytes = element_size(t.dtype());
    for (uint32_t k = 0; t.dims() && k < t.dims()->size(); ++k) {
      planned_bytes *= d.sized.planned_dim(i, k);
    }
    if (nbytes(t) > planned_bytes) {  // a payload whose vectors alias: never planned for this
      return fail(Error::InvalidProgram,
                  "Vulkan delegate: tensor %u needs more bytes at this call's sizes than planned",
                  i);
    }
  }
  for (External& e : d.externals) {
    const fb::Tensor& t = tensor(d, e.tensor);
    e.nbytes = nbytes(t);
    for (uint32_t k = 0; k < e.rank; ++k) e.dims[k] = t.dims()->Get(k);
  }
  // Same node list, same dispatch count per node: the descriptor sets (bindings by tensor,
  // ranges at the upper bounds) carry over in order. On failure the previous plan stays (the
  // next call plans again: d.planned_for is empty).
  std::vector<Dispatch> previous;
  previous.swap(d.dispatches);
  d.dispatches.reserve(previous.size());
  const auto keep_previous = [&](Error e) {
    d.dispatches.swap(previous);
    return e;
  };
  const uint32_t num_nodes = d.payload->nodes()->size();
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const Error e = plan_node(d, n, *d.payload->nodes()->Get(n));
    if (e != Error::Ok) return keep_previous(e);
  }
  if (d.dispatches.size() != previous.size()) {
    return keep_previous(fail(Error::Internal,
                              "Vulkan delegate: %zu dispatches planned, %zu at init",
                              d.dispatches.size(), previous.size()));
  }
  for (size_t i = 0; i < d.dispatches.size(); ++i) {
    d.dispatches[i].set = previous[i].set;
    const Error e = resolve_pipeline(d, d.dispatches[i]);
    if (e != Error::Ok) return keep_previous(e);
  }
  PTERON_TRY(record(d, d.commands, VK_NULL_HANDLE));
  if (d.traced_commands != VK_NULL_HANDLE) PTERON_TRY(record(d, d.traced_commands, d.queries));
  return Error::Ok;
}

}  // namespace

Error keep_sized_payload(Delegate& d, Span<const uint8_t> processed) {
  PTERON_TRY(d.sized.init(processed, *d.payload));
  d.payload = &d.sized.payload();
  return Error::Ok;
}

void note_init_sizes(Delegate& d) {
  // Init planned and recorded at the planned dims: those of the symbols' maxima when every
  // size expression reaches its planned dim there (a monotone one does), so a first call at
  // the maxima replays that recording.
  const auto& symbols = *d.payload->symbols();
  SizeRange values[kMaxSymbols];
  for (uint32_t k = 0; k < symbols.size(); ++k) {
    values[k] = SizeRange{symbols.Get(k)->max(), symbols.Get(k)->max()};
  }
  const auto& ts = *d.payload->tensors();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const auto* sym = ts.Get(i)->sym_dims();
    for (uint32_t k = 0; sym != nullptr && k < sym->size(); ++k) {
      SizeRange r;
      const char* why = "";
      if (!eval_size(*sym->Get(k), Span<const SizeRange>(values, symbols.size()), &r, &why) ||
          r.lo != d.sized.planned_dim(i, k)) {
        return;
      }
    }
  }
  d.planned_for.clear();
  for (uint32_t k = 0; k < symbols.size(); ++k) d.planned_for.push_back(values[k].lo);
}

Error resize_for_call(Delegate& d, Span<EValue*> args) {
  const auto& symbols = *d.payload->symbols();
  SizeRange values[kMaxSymbols];
  bool same = d.planned_for.size() == symbols.size();
  for (uint32_t k = 0; k < symbols.size(); ++k) {
    const fb::SizeSymbol& s = *symbols.Get(k);
    const EValue* arg = s.arg_index() < args.size() ? args[s.arg_index()] : nullptr;
    if (arg == nullptr || arg->tag != Tag::Tensor || arg->tensor == nullptr ||
        static_cast<uint32_t>(arg->tensor->dim()) <= s.dim()) {
      return fail(Error::InvalidArgument,
                  "Vulkan delegate arg %u (input) is not a tensor with a dim %u", s.arg_index(),
                  s.dim());
    }
    const int64_t v = arg->tensor->size(static_cast<int32_t>(s.dim()));
    if (v < s.min() || v > s.max()) {
      return fail(Error::InvalidArgument,
                  "Vulkan delegate arg %u (input): size %lld in dim %u is outside the region's "
                  "bounds [%u, %u]",
                  s.arg_index(), static_cast<long long>(v), s.dim(), s.min(), s.max());
    }
    values[k] = SizeRange{v, v};
    same = same && d.planned_for[k] == v;
  }
  if (!same) {
    d.planned_for.clear();  // until this resize has fully succeeded
    const Span<const SizeRange> ranges(values, symbols.size());
    PTERON_TRY(d.sized.resize(ranges));
    PTERON_TRY(replan(d));
    for (uint32_t k = 0; k < symbols.size(); ++k) d.planned_for.push_back(values[k].lo);
  }
  // The outputs take this call's sizes (bounded-dynamic tensors in the method).
  for (const External& e : d.externals) {
    if (e.is_input) continue;
    EValue* arg = e.arg_index < args.size() ? args[e.arg_index] : nullptr;
    if (arg == nullptr || arg->tag != Tag::Tensor || arg->tensor == nullptr) continue;
    int32_t sizes[kMaxDims];
    for (uint32_t k = 0; k < e.rank; ++k) sizes[k] = static_cast<int32_t>(e.dims[k]);
    if (static_cast<uint32_t>(arg->tensor->dim()) != e.rank ||
        arg->tensor->resize(Span<const int32_t>(sizes, e.rank)) != Error::Ok) {
      return fail(Error::InvalidArgument,
                  "Vulkan delegate arg %u (output) cannot take this call's sizes (rank %u)",
                  e.arg_index, e.rank);
    }
  }
  return Error::Ok;
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
