#include "backends/xnnpack/runtime/xnnpack_backend.h"

#include <pthreadpool.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "backends/xnnpack/runtime/xnnpack_graph.h"
#include "runtime/executor/program.h"
#include "runtime/threads/threadpool.h"

namespace pteron {
namespace xnnpack {
namespace {

constexpr int kMaxThreads = 256;
constexpr uintptr_t kPageSize = 4096;  // the smallest page size of supported hosts

// ---- compile specs ----

// Parses the "threads" spec: ASCII decimal, or a 4- or 8-byte little-endian integer.
Error parse_threads(Span<const uint8_t> value, int* threads) {
  bool digits = !value.empty() && value.size() <= 4;
  for (size_t i = 0; digits && i < value.size(); ++i) {
    digits = value[i] >= '0' && value[i] <= '9';
  }
  int64_t n = 0;
  if (digits) {
    for (size_t i = 0; i < value.size(); ++i) n = n * 10 + (value[i] - '0');
  } else if (value.size() == 4 || value.size() == 8) {
    uint64_t u = 0;
    for (size_t i = value.size(); i-- > 0;) u = (u << 8) | value[i];
    n = value.size() == 4 ? static_cast<int32_t>(u) : static_cast<int64_t>(u);
  } else {
    return fail(Error::InvalidArgument,
                "XNNPACK compile spec \"threads\" must be decimal text or a 4/8-byte integer "
                "(%zu bytes given)",
                value.size());
  }
  if (n < 1 || n > kMaxThreads) {
    return fail(Error::InvalidArgument, "XNNPACK compile spec \"threads\" is %lld (1 .. %d)",
                static_cast<long long>(n), kMaxThreads);
  }
  *threads = static_cast<int>(n);
  return Error::Ok;
}

// ---- one delegate ----

struct Binding {
  void* staging = nullptr;  // padded copy, allocated on first need
  void* bound = nullptr;    // pointer XNNPACK was last set up with
};

struct Delegate {
  std::vector<FreeableBuffer> named;  // the program's named data the graph's constants read
  CompiledGraph graph;
  pthreadpool_t pool = nullptr;
  int threads = 1;
  std::mutex mutex;  // a runtime runs one call at a time
  std::vector<Binding> bindings;
  std::vector<xnn_external_value> values;
  bool set_up = false;
  size_t staged_copies = 0;

  ~Delegate() {
    for (Binding& b : bindings) free(b.staging);
  }
};

bool overread_stays_in_page(const void* data, size_t nbytes) {
  const uintptr_t last = reinterpret_cast<uintptr_t>(data) + nbytes - 1;
  return last / kPageSize == (last + kExtraBytes) / kPageSize;
}

bool dtype_matches(fb::DataType expected, ScalarType actual) {
  switch (expected) {
    case fb::DataType::Float32:
      return actual == ScalarType::Float;
    case fb::DataType::Float16:
      return actual == ScalarType::Half;
    case fb::DataType::QInt8:
      return actual == ScalarType::Char || actual == ScalarType::QInt8;
    case fb::DataType::QInt32:
      return actual == ScalarType::Int || actual == ScalarType::QInt32;
    default:
      return false;
  }
}

// "[1, 3, 8, 8]" (sizes in the pteron tensor's logical order).
const char* sizes_str(const int32_t* sizes, size_t rank, char* buf, size_t size) {
  size_t n = static_cast<size_t>(snprintf(buf, size, "["));
  for (size_t i = 0; i < rank && n < size; ++i) {
    n += static_cast<size_t>(snprintf(buf + n, size - n, i ? ",%d" : "%d", sizes[i]));
  }
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

// Checks the pteron tensor bound to `e`: dtype, sizes and a memory layout equal to `e.dims`
// row-major (strides of size-1 dims do not matter).
Error check_argument(const ExternalValue& e, const EValue* arg) {
  const char* role = e.is_input ? "input" : "output";
  if (arg == nullptr || arg->tag != Tag::Tensor || arg->tensor == nullptr) {
    return fail(Error::InvalidArgument, "XNNPACK delegate arg %u (%s) is not a tensor", e.arg_index,
                role);
  }
  const Tensor& t = *arg->tensor;
  if (!dtype_matches(e.dtype, t.dtype())) {
    return fail(Error::InvalidArgument, "XNNPACK delegate arg %u (%s): expected %s, got %s",
                e.arg_index, role, dtype_name(e.dtype), scalar_type_name(t.dtype()));
  }
  int32_t want[kMaxDims];
  for (uint32_t i = 0; i < e.rank; ++i) want[e.dim_order[i]] = static_cast<int32_t>(e.dims[i]);
  bool ok = static_cast<uint32_t>(t.dim()) == e.rank;
  for (uint32_t d = 0; ok && d < e.rank; ++d) ok = t.size(static_cast<int32_t>(d)) == want[d];
  if (!ok) {
    char w[64], h[64];
    return fail(Error::InvalidArgument, "XNNPACK delegate arg %u (%s): expected sizes %s, got %s",
                e.arg_index, role, sizes_str(want, e.rank, w, sizeof(w)),
                sizes_str(t.sizes().data(), t.sizes().size(), h, sizeof(h)));
  }
  int64_t stride = 1;
  for (uint32_t i = e.rank; i-- > 0;) {
    const int32_t d = e.dim_order[i];
    if (t.size(d) > 1 && t.stride(d) != stride) {
      char order[32];
      size_t n = 0;
      for (uint32_t k = 0; k < e.rank && n < sizeof(order); ++k) {
        n += static_cast<size_t>(
            snprintf(order + n, sizeof(order) - n, k ? ",%u" : "%u", e.dim_order[k]));
      }
      return fail(Error::InvalidArgument,
                  "XNNPACK delegate arg %u (%s): memory layout must be dim order (%s); convert "
                  "it outside the delegate",
                  e.arg_index, role, order);
    }
    stride *= e.dims[i];
  }
  if (t.mutable_data() == nullptr) {
    return fail(Error::InvalidArgument, "XNNPACK delegate arg %u (%s) has no data", e.arg_index,
                role);
  }
  return Error::Ok;
}

class XnnpackBackend final : public BackendInterface {
 public:
  bool is_available() const override { return ensure_xnnpack_initialized(); }

  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpecView> compile_specs) override {
    int threads = 0;
    for (const CompileSpecView& spec : compile_specs) {
      if (spec.key != nullptr && strcmp(spec.key, "threads") == 0) {
        PTERON_TRY(parse_threads(spec.value, &threads));
      }
    }
    // The process-wide setting (pteron::set_num_threads, shared with the optimized kernels)
    // wins over the program's compile spec; neither set means pteron::num_threads()'s default.
    const int process_wide = requested_num_threads();
    if (process_wide > 0) threads = process_wide;
    if (threads == 0) threads = num_threads();
    if (threads > pteron::kMaxThreads) threads = pteron::kMaxThreads;

    Delegate* d = new (std::nothrow) Delegate();
    if (d == nullptr) return fail(Error::OutOfMemory, "XNNPACK delegate: no memory for its state");
    d->threads = threads;
    d->pool = threadpool_for(threads);                      // shared, lives as long as the process
    if (threads > 1 && d->pool == nullptr) d->threads = 1;  // no threads to be had: run inline
    // Constants the payload names are the program's named data, shared with other delegates.
    const Program* program = context.program;
    auto resolve = [d, program](const char* key, Span<const uint8_t>* bytes) -> Error {
      if (program == nullptr) {
        return fail(Error::InvalidProgram,
                    "XNNPACK delegate: its constant '%s' is the program's named data, and no "
                    "program was given to read it from",
                    key);
      }
      Result<FreeableBuffer> buffer = program->named_data(key);
      if (!buffer.ok()) return buffer.error();
      *bytes = Span<const uint8_t>(static_cast<const uint8_t*>(buffer->data()), buffer->size());
      d->named.push_back(std::move(buffer.get()));
      return Error::Ok;
    };
    const Error err = d->graph.init(processed, d->pool, true, resolve);
    if (err != Error::Ok) {
      destroy(d);
      return err;
    }
    const size_t n = d->graph.externals().size();
    d->bindings.resize(n);
    d->values.resize(n);
    for (size_t i = 0; i < n; ++i)
      d->values[i] = xnn_external_value{d->graph.externals()[i].id, nullptr};
    return static_cast<DelegateHandle*>(d);
  }

  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) override {
    if (handle == nullptr) return fail(Error::InvalidArgument, "XNNPACK delegate: null handle");
    Delegate& d = *static_cast<Delegate*>(handle);
    std::lock_guard<std::mutex> lock(d.mutex);
    if (args.size() != d.graph.num_args()) {
      return fail(Error::InvalidArgument, "XNNPACK delegate expects %u arguments, got %zu",
                  d.graph.num_args(), args.size());
    }
    const std::vector<ExternalValue>& externals = d.graph.externals();
    bool changed = !d.set_up;
    for (size_t i = 0; i < externals.size(); ++i) {
      const ExternalValue& e = externals[i];
      PTERON_TRY(check_argument(e, args[e.arg_index]));
      void* data = args[e.arg_index]->tensor->mutable_data();
      Binding& b = d.bindings[i];
      if (!overread_stays_in_page(data, e.nbytes)) {
        if (b.staging == nullptr) {
          const size_t size = (e.nbytes + kExtraBytes + 15) / 16 * 16;
          b.staging = aligned_alloc(16, size);
          if (b.staging == nullptr) {
            return fail(Error::OutOfMemory,
                        "XNNPACK delegate: no memory to stage arg %u "
                        "(%zu bytes)",
                        e.arg_index, size);
          }
        }
        if (e.is_input) memcpy(b.staging, data, e.nbytes);
        ++d.staged_copies;
        data = b.staging;
      }
      if (data != b.bound) changed = true;
      b.bound = data;
      d.values[i].data = data;
    }
    if (changed) {
      // Setup rebuilds indirection buffers, so it runs only when a pointer moved.
      const xnn_status status =
          xnn_setup_runtime(d.graph.runtime(), d.values.size(), d.values.data());
      if (status != xnn_status_success) {
        d.set_up = false;
        return fail(Error::DelegateFailed, "XNNPACK setup failed: %s", status_name(status));
      }
      d.set_up = true;
    }
    const xnn_status status = xnn_invoke_runtime(d.graph.runtime());
    if (status != xnn_status_success) {
      return fail(Error::DelegateFailed, "XNNPACK run failed: %s", status_name(status));
    }
    for (size_t i = 0; i < externals.size(); ++i) {
      const ExternalValue& e = externals[i];
      if (!e.is_input && d.bindings[i].bound == d.bindings[i].staging) {
        memcpy(args[e.arg_index]->tensor->mutable_data(), d.bindings[i].staging, e.nbytes);
      }
    }
    return Error::Ok;
  }

  void destroy(DelegateHandle* handle) override {
    if (handle == nullptr) return;
    Delegate* d = static_cast<Delegate*>(handle);
    delete d;  // the pool is process-wide (runtime/threads) and outlives every delegate
  }
};

XnnpackBackend g_backend;

}  // namespace

void set_num_threads(int threads) { pteron::set_num_threads(threads); }

int default_num_threads() { return pteron::num_threads(); }

BackendInterface& backend() { return g_backend; }

int delegate_num_threads(const DelegateHandle* handle) {
  return handle ? static_cast<const Delegate*>(handle)->threads : 0;
}

size_t delegate_staged_copies(const DelegateHandle* handle) {
  return handle ? static_cast<const Delegate*>(handle)->staged_copies : 0;
}

}  // namespace xnnpack
}  // namespace pteron

PTERON_REGISTER_BACKEND(pteron::xnnpack::kBackendId, pteron::xnnpack::g_backend);
