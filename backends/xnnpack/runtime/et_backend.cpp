// ExecuTorch's XNNPACK delegate ("XnnpackBackend") on Debian's XNNPACK: the payload is read
// and checked whole by et_payload.cpp, its constants resolved (inline, in the payload, or the
// program's named data), and an XNNPACK runtime built for the input sizes of the call.
//
// Sizes: ExecuTorch's payloads are written for dynamic shapes (export_llama's T tokens), which
// its XNNPACK resizes at run time. Debian's 2022 snapshot has no xnn_reshape_runtime, so a
// runtime is made per distinct set of input sizes (every value's sizes propagated from the
// inputs through the nodes) and kept: a generation uses two (the prompt's chunk and one token).
// Outputs are resized to the propagated sizes, within their planned bound.
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "backends/xnnpack/runtime/et_payload.h"
#include "backends/xnnpack/runtime/xnnpack_graph.h"
#include "runtime/backend/backend.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/program.h"
#include "runtime/threads/threadpool.h"

namespace pteron {
namespace xnnpack {
namespace et {
namespace {

constexpr size_t kMaxRuntimes = 8;     // distinct input sizes kept per delegate
constexpr uintptr_t kPageSize = 4096;  // the smallest page size of supported hosts
constexpr size_t kOverRead = XNN_EXTRA_BYTES;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Owned = std::unique_ptr<uint8_t, FreeDeleter>;

// XNNPACK may read up to XNN_EXTRA_BYTES past a buffer: harmless while it stays in the page.
bool overread_stays_in_page(const void* data, size_t nbytes) {
  const uintptr_t last = reinterpret_cast<uintptr_t>(data) + (nbytes ? nbytes - 1 : 0);
  return last / kPageSize == (last + kOverRead) / kPageSize;
}

// A 16-byte aligned buffer of `nbytes` plus the over-read margin.
Owned padded(size_t nbytes) {
  return Owned(static_cast<uint8_t*>(std::aligned_alloc(16, (nbytes + kOverRead + 15) / 16 * 16)));
}

struct Shape {
  uint32_t rank = 0;
  size_t dims[kMaxDims] = {};
  size_t numel() const {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (uint32_t i = 0; i < rank; ++i) {
      if (dims[i] != o.dims[i]) return false;
    }
    return true;
  }
};

// One XNNPACK runtime, for one set of input sizes.
struct Compiled {
  std::vector<Shape> inputs;   // the key
  std::vector<Shape> outputs;  // propagated
  xnn_runtime_t runtime = nullptr;
  std::vector<const void*> bound;  // pointers the runtime was last set up with
  ~Compiled() {
    if (runtime != nullptr) xnn_delete_runtime(runtime);
  }
};

struct Delegate {
  Graph graph;
  std::vector<const void*> constant;  // per value: usable constant data, or null
  std::vector<Owned> copies;          // constants moved to padded memory
  std::vector<FreeableBuffer> named;  // named data kept alive
  pthreadpool_t pool = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<Compiled>> runtimes;  // most recently used last
  std::vector<Owned> staging;                       // per argument, for the over-read
};

Error node_error(const Node& n, size_t index, const char* what) {
  return fail(Error::InvalidArgument, "XNNPACK delegate node %zu (%s): %s", index,
              node_name(n.kind), what);
}

// Every value's sizes for these input sizes, checked as each node's XNNPACK operator needs.
Error propagate(const Graph& g, const std::vector<Shape>& inputs, std::vector<Shape>& shapes) {
  shapes.assign(g.values.size(), Shape());
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (!g.values[v].is_constant) continue;
    shapes[v].rank = g.values[v].rank;
    for (uint32_t d = 0; d < g.values[v].rank; ++d) shapes[v].dims[d] = g.values[v].dims[d];
  }
  for (size_t i = 0; i < g.num_inputs; ++i) shapes[g.args[i]] = inputs[i];
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    const Shape& a = shapes[n.inputs[0]];
    Shape& out = shapes[n.output];
    switch (n.kind) {
      case NodeKind::FullyConnected: {
        const Value& w = g.values[n.filter];
        const bool transposed = n.flags & 1;
        const size_t in_channels = transposed ? w.dims[0] : w.dims[1];
        if (a.rank == 0 || a.dims[a.rank - 1] != in_channels)
          return node_error(n, k, "the input's last dim is not the filter's input channels");
        out = a;
        out.dims[a.rank - 1] = transposed ? w.dims[1] : w.dims[0];
        break;
      }
      case NodeKind::Add:
      case NodeKind::Subtract:
      case NodeKind::Multiply:
      case NodeKind::Divide:
      case NodeKind::Minimum:
      case NodeKind::Maximum: {
        const Shape& b = shapes[n.inputs[1]];
        out.rank = a.rank > b.rank ? a.rank : b.rank;
        for (uint32_t d = 0; d < out.rank; ++d) {
          const size_t x = d + a.rank >= out.rank ? a.dims[d + a.rank - out.rank] : 1;
          const size_t y = d + b.rank >= out.rank ? b.dims[d + b.rank - out.rank] : 1;
          if (x != y && x != 1 && y != 1) return node_error(n, k, "the inputs do not broadcast");
          out.dims[d] = x == 1 ? y : x;
        }
        break;
      }
      case NodeKind::Reshape: {
        out.rank = n.new_rank;
        size_t known = 1;
        int zero = -1;
        for (uint32_t d = 0; d < n.new_rank; ++d) {
          out.dims[d] = n.new_shape[d];
          if (n.new_shape[d] == 0) {
            zero = static_cast<int>(d);
          } else {
            known *= n.new_shape[d];
          }
        }
        if (zero >= 0 && known > 0 && a.numel() % known == 0) out.dims[zero] = a.numel() / known;
        if (out.numel() != a.numel()) return node_error(n, k, "the new shape has another size");
        break;
      }
      default:
        out = a;
        break;
    }
  }
  return Error::Ok;
}

xnn_status define_node(xnn_subgraph_t sg, const Node& n, const std::vector<uint32_t>& id,
                       const Shape& out) {
  const uint32_t x = id[n.inputs[0]], y = id[n.output];
  const uint32_t x2 = n.inputs[1] != kNoValue ? id[n.inputs[1]] : XNN_INVALID_VALUE_ID;
  const float lo = n.output_min, hi = n.output_max;
  switch (n.kind) {
    case NodeKind::FullyConnected:
      return xnn_define_fully_connected(sg, lo, hi, x, id[n.filter],
                                        n.bias != kNoValue ? id[n.bias] : XNN_INVALID_VALUE_ID, y,
                                        n.flags);
    case NodeKind::Add:
      return xnn_define_add2(sg, lo, hi, x, x2, y, 0);
    case NodeKind::Subtract:
      return xnn_define_subtract(sg, lo, hi, x, x2, y, 0);
    case NodeKind::Multiply:
      return xnn_define_multiply2(sg, lo, hi, x, x2, y, 0);
    case NodeKind::Divide:
      return xnn_define_divide(sg, lo, hi, x, x2, y, 0);
    case NodeKind::Minimum:
      return xnn_define_minimum2(sg, x, x2, y, 0);
    case NodeKind::Maximum:
      return xnn_define_maximum2(sg, x, x2, y, 0);
    case NodeKind::Clamp:
      return xnn_define_clamp(sg, lo, hi, x, y, 0);
    case NodeKind::Softmax:
      return xnn_define_softmax(sg, x, y, 0);
    case NodeKind::Sigmoid:
      return xnn_define_sigmoid(sg, x, y, 0);
    case NodeKind::Abs:
      return xnn_define_abs(sg, x, y, 0);
    case NodeKind::Negate:
      return xnn_define_negate(sg, x, y, 0);
    case NodeKind::Floor:
      return xnn_define_floor(sg, x, y, 0);
    case NodeKind::Ceiling:
      return xnn_define_ceiling(sg, x, y, 0);
    case NodeKind::Square:
      return xnn_define_square(sg, x, y, 0);
    case NodeKind::SquareRoot:
      return xnn_define_square_root(sg, x, y, 0);
    case NodeKind::Hardswish:
      return xnn_define_hardswish(sg, x, y, 0);
    case NodeKind::LeakyRelu:
      return xnn_define_leaky_relu(sg, n.param, x, y, 0);
    case NodeKind::Elu:
      return xnn_define_elu(sg, n.param, x, y, 0);
    case NodeKind::Reshape:
      return xnn_define_static_reshape(sg, out.rank, out.dims, x, y, 0);
  }
  return xnn_status_invalid_parameter;
}

// A runtime for these input sizes: the subgraph defined with every value's propagated sizes.
Result<std::unique_ptr<Compiled>> compile(const Delegate& d, const std::vector<Shape>& inputs) {
  const Graph& g = d.graph;
  std::vector<Shape> shapes;
  PTERON_TRY(propagate(g, inputs, shapes));
  const uint32_t externals = static_cast<uint32_t>(g.args.size());
  xnn_subgraph_t sg = nullptr;
  xnn_status status = xnn_create_subgraph(externals, 0, &sg);
  PTERON_CHECK(status == xnn_status_success, Error::DelegateFailed,
               "XNNPACK delegate: xnn_create_subgraph failed: %s", status_name(status));
  std::unique_ptr<xnn_subgraph, xnn_status (*)(xnn_subgraph_t)> owned(sg, xnn_delete_subgraph);
  // Values nodes touch, in XNNPACK ids: externals keep their argument index.
  std::vector<bool> used(g.values.size(), false);
  for (const Node& n : g.nodes) {
    for (uint32_t v : {n.inputs[0], n.inputs[1], n.filter, n.bias, n.output}) {
      if (v != kNoValue) used[v] = true;
    }
  }
  std::vector<uint32_t> id(g.values.size(), XNN_INVALID_VALUE_ID);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& value = g.values[v];
    if (!used[v] && value.input_arg < 0 && value.output_arg < 0) continue;
    const int32_t arg = value.input_arg >= 0 ? value.input_arg : value.output_arg;
    const uint32_t flags = value.input_arg >= 0    ? XNN_VALUE_FLAG_EXTERNAL_INPUT
                           : value.output_arg >= 0 ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT
                                                   : 0;
    status = xnn_define_tensor_value(
        sg, xnn_datatype_fp32, shapes[v].rank, shapes[v].dims, d.constant[v],
        arg >= 0 ? static_cast<uint32_t>(arg) : XNN_INVALID_VALUE_ID, flags, &id[v]);
    PTERON_CHECK(status == xnn_status_success, Error::DelegateFailed,
                 "XNNPACK delegate: value %zu does not define: %s", v, status_name(status));
  }
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    status = define_node(sg, g.nodes[k], id, shapes[g.nodes[k].output]);
    PTERON_CHECK(status == xnn_status_success, Error::DelegateFailed,
                 "XNNPACK delegate: node %zu (%s) does not define: %s", k,
                 node_name(g.nodes[k].kind), status_name(status));
  }
  auto c = std::make_unique<Compiled>();
  // Workers spin or sleep after the last operator as the rest of the process does.
  status =
      xnn_create_runtime_v2(sg, d.pool, spin_workers() ? 0 : XNN_FLAG_YIELD_WORKERS, &c->runtime);
  PTERON_CHECK(status == xnn_status_success, Error::DelegateFailed,
               "XNNPACK delegate: xnn_create_runtime failed: %s", status_name(status));
  c->inputs = inputs;
  for (size_t a = g.num_inputs; a < g.args.size(); ++a) c->outputs.push_back(shapes[g.args[a]]);
  c->bound.assign(externals, nullptr);
  return c;
}

// The fp32, contiguous tensor of argument `arg`, with its sizes.
Error tensor_arg(Span<EValue*> args, size_t arg, const char* role, Tensor** out) {
  const EValue* e = args[arg];
  PTERON_CHECK(e != nullptr && e->tag == Tag::Tensor && e->tensor != nullptr,
               Error::InvalidArgument, "XNNPACK delegate arg %zu (%s) is not a tensor", arg, role);
  Tensor& t = *e->tensor;
  PTERON_CHECK(t.dtype() == ScalarType::Float, Error::InvalidArgument,
               "XNNPACK delegate arg %zu (%s) is %s, not float32", arg, role,
               scalar_type_name(t.dtype()));
  PTERON_CHECK(t.dim() <= static_cast<int>(kMaxDims), Error::InvalidArgument,
               "XNNPACK delegate arg %zu (%s) has %d dims (at most %u)", arg, role, t.dim(),
               kMaxDims);
  *out = &t;
  return Error::Ok;
}

Error check_contiguous(const Tensor& t, size_t arg, const char* role) {
  int64_t stride = 1;
  for (int d = t.dim(); d-- > 0;) {
    PTERON_CHECK(t.size(d) <= 1 || t.stride(d) == stride, Error::InvalidArgument,
                 "XNNPACK delegate arg %zu (%s) is not contiguous", arg, role);
    stride *= t.size(d);
  }
  PTERON_CHECK(t.mutable_data() != nullptr || t.numel() == 0, Error::InvalidArgument,
               "XNNPACK delegate arg %zu (%s) has no data", arg, role);
  return Error::Ok;
}

class EtXnnpackBackend final : public BackendInterface {
 public:
  bool is_available() const override { return ensure_xnnpack_initialized(); }

  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpecView>) override {
    std::unique_ptr<Delegate> d(new (std::nothrow) Delegate());
    PTERON_CHECK(d != nullptr, Error::OutOfMemory, "XNNPACK delegate: no memory for its state");
    PTERON_TRY(read_payload(processed, d->graph));
    const Graph& g = d->graph;
    d->constant.assign(g.values.size(), nullptr);
    for (size_t v = 0; v < g.values.size(); ++v) {
      const Value& value = g.values[v];
      if (!value.is_constant) continue;
      const uint8_t* data = value.data;
      if (!value.named_key.empty()) {
        PTERON_CHECK(context.program != nullptr, Error::InvalidProgram,
                     "XNNPACK delegate: value %zu's weights are named data '%s', and no program "
                     "was given to read them from",
                     v, value.named_key.c_str());
        Result<FreeableBuffer> buffer = context.program->named_data(value.named_key.c_str());
        if (!buffer.ok()) return buffer.error();
        PTERON_CHECK(buffer->size() >= value.nbytes, Error::InvalidProgram,
                     "XNNPACK delegate: named data '%s' holds %zu bytes, value %zu needs %llu",
                     value.named_key.c_str(), buffer->size(), v,
                     static_cast<unsigned long long>(value.nbytes));
        data = static_cast<const uint8_t*>(buffer->data());
        d->named.push_back(std::move(buffer.get()));
      }
      // Floats read in place when aligned and the over-read cannot fault; else a padded copy.
      if (reinterpret_cast<uintptr_t>(data) % 4 != 0 ||
          !overread_stays_in_page(data, value.nbytes)) {
        Owned copy = padded(value.nbytes);
        PTERON_CHECK(copy != nullptr, Error::OutOfMemory,
                     "XNNPACK delegate: no memory for value %zu's %llu bytes", v,
                     static_cast<unsigned long long>(value.nbytes));
        std::memcpy(copy.get(), data, value.nbytes);
        data = copy.get();
        d->copies.push_back(std::move(copy));
      }
      d->constant[v] = data;
    }
    int threads = requested_num_threads();
    if (threads <= 0) threads = num_threads();
    d->pool = threads > 1 ? threadpool_for(threads) : nullptr;
    d->staging.resize(g.args.size());
    // Build the runtime for the payload's own sizes now, so a payload XNNPACK refuses fails
    // at load rather than at the first call.
    std::vector<Shape> written;
    for (size_t a = 0; a < g.num_inputs; ++a) {
      const uint32_t v = g.args[a];
      Shape s;
      s.rank = g.values[v].rank;
      for (uint32_t i = 0; i < s.rank; ++i) s.dims[i] = g.values[v].dims[i];
      written.push_back(s);
    }
    Result<std::unique_ptr<Compiled>> first = compile(*d, written);
    if (!first.ok()) return first.error();
    d->runtimes.push_back(std::move(first.get()));
    return static_cast<DelegateHandle*>(d.release());
  }

  Error execute(BackendExecuteContext&, DelegateHandle* handle, Span<EValue*> args) override {
    PTERON_CHECK(handle != nullptr, Error::InvalidArgument, "XNNPACK delegate: null handle");
    Delegate& d = *static_cast<Delegate*>(handle);
    std::lock_guard<std::mutex> lock(d.mutex);
    const Graph& g = d.graph;
    const size_t n_in = g.num_inputs, n_out = g.args.size() - g.num_inputs;
    PTERON_CHECK(args.size() == n_in + n_out, Error::InvalidArgument,
                 "XNNPACK delegate expects %zu arguments, got %zu", n_in + n_out, args.size());
    std::vector<Tensor*> tensors(n_in + n_out);
    std::vector<Shape> inputs(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      PTERON_TRY(tensor_arg(args, i, "input", &tensors[i]));
      PTERON_TRY(check_contiguous(*tensors[i], i, "input"));
      inputs[i].rank = static_cast<uint32_t>(tensors[i]->dim());
      for (uint32_t k = 0; k < inputs[i].rank; ++k) inputs[i].dims[k] = tensors[i]->size(k);
    }
    // The runtime for these sizes: kept ones first, else a new one (the oldest goes).
    Compiled* c = nullptr;
    for (size_t k = 0; k < d.runtimes.size() && c == nullptr; ++k) {
      if (d.runtimes[k]->inputs.size() != n_in) continue;
      bool same = true;
      for (size_t i = 0; i < n_in && same; ++i) same = d.runtimes[k]->inputs[i] == inputs[i];
      if (same) c = d.runtimes[k].get();
    }
    if (c == nullptr) {
      PTERON_ASSIGN_OR_RETURN(std::unique_ptr<Compiled> fresh, compile(d, inputs));
      if (d.runtimes.size() == kMaxRuntimes) d.runtimes.erase(d.runtimes.begin());
      d.runtimes.push_back(std::move(fresh));
      c = d.runtimes.back().get();
    }
    std::vector<xnn_external_value> values(n_in + n_out);
    bool moved = false;
    for (size_t a = 0; a < n_in + n_out; ++a) {
      const bool is_input = a < n_in;
      const char* role = is_input ? "input" : "output";
      if (!is_input) {
        PTERON_TRY(tensor_arg(args, a, role, &tensors[a]));
        const Shape& s = c->outputs[a - n_in];
        int32_t sizes[kMaxDims];
        for (uint32_t k = 0; k < s.rank; ++k) sizes[k] = static_cast<int32_t>(s.dims[k]);
        PTERON_TRY(tensors[a]->resize(Span<const int32_t>(sizes, s.rank)));
        PTERON_TRY(check_contiguous(*tensors[a], a, role));
      }
      const size_t nbytes = tensors[a]->nbytes();
      void* data = tensors[a]->mutable_data();
      if (!overread_stays_in_page(data, nbytes)) {
        Owned& stage = d.staging[a];
        stage = padded(nbytes);  // sizes change between calls: a fresh one each time
        PTERON_CHECK(stage != nullptr, Error::OutOfMemory,
                     "XNNPACK delegate: no memory to stage arg %zu (%zu bytes)", a, nbytes);
        if (is_input) std::memcpy(stage.get(), data, nbytes);
        data = stage.get();
      }
      values[a] = xnn_external_value{static_cast<uint32_t>(a), data};
      moved = moved || c->bound[a] != data;
      c->bound[a] = data;
    }
    if (moved) {
      const xnn_status status = xnn_setup_runtime(c->runtime, values.size(), values.data());
      if (status != xnn_status_success) {
        c->bound.assign(c->bound.size(), nullptr);
        return fail(Error::DelegateFailed, "XNNPACK setup failed: %s", status_name(status));
      }
    }
    const xnn_status status = xnn_invoke_runtime(c->runtime);
    PTERON_CHECK(status == xnn_status_success, Error::DelegateFailed, "XNNPACK run failed: %s",
                 status_name(status));
    for (size_t a = n_in; a < n_in + n_out; ++a) {
      if (values[a].data != tensors[a]->mutable_data()) {
        std::memcpy(tensors[a]->mutable_data(), values[a].data, tensors[a]->nbytes());
      }
    }
    return Error::Ok;
  }

  void destroy(DelegateHandle* handle) override { delete static_cast<Delegate*>(handle); }
};

EtXnnpackBackend g_backend;

}  // namespace
}  // namespace et
}  // namespace xnnpack
}  // namespace pteron

// ExecuTorch's backend id: its programs name it so.
PTERON_REGISTER_BACKEND("XnnpackBackend", pteron::xnnpack::et::g_backend);
