#include "backends/ethos_u/runtime/ethos_u_backend.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "backends/ethos_u/runtime/payload_verifier.h"
#include "runtime/platform/platform.h"

namespace pteron::ethos_u {
namespace {

struct Delegate {
  const fb::EthosUPayload* payload;
  EthosUDriver* driver;
  void* region;
  uint32_t num_inputs, num_outputs;
  const void** in_ptrs;
  void** out_ptrs;
};

bool dtype_matches(int8_t expected, ScalarType actual) {
  if (expected == 1) return actual == ScalarType::Char || actual == ScalarType::QInt8;
  return actual == ScalarType::Float;
}

// The program's tensor must have the payload's logical sizes and lie in memory in the
// payload's dim order, densely (strides of size-1 dims do not matter).
Error check_argument(const fb::IoTensor& io, const EValue* arg, uint32_t index, const char* role) {
  if (arg == nullptr || arg->tag != Tag::Tensor || arg->tensor == nullptr) {
    return fail(Error::InvalidArgument, "Ethos-U delegate %s %u is not a tensor", role, index);
  }
  const Tensor& t = *arg->tensor;
  if (!dtype_matches(io.dtype(), t.dtype())) {
    return fail(Error::InvalidArgument, "Ethos-U delegate %s %u: expected %s, got %s", role, index,
                io.dtype() == 1 ? "int8" : "float32", scalar_type_name(t.dtype()));
  }
  uint32_t rank = io.shape() ? io.shape()->size() : 0;
  uint8_t order[kMaxIoRank];
  for (uint32_t i = 0; i < rank; ++i) {
    order[i] =
        io.dim_order() && io.dim_order()->size() == rank ? io.dim_order()->Get(i) : uint8_t(i);
  }
  if (uint32_t(t.dim()) != rank) {
    return fail(Error::InvalidArgument, "Ethos-U delegate %s %u: expected rank %u, got %d", role,
                index, rank, t.dim());
  }
  int64_t stride = 1;
  for (uint32_t i = rank; i-- > 0;) {
    int32_t d = order[i];
    if (t.size(d) != io.shape()->Get(i)) {
      return fail(Error::InvalidArgument,
                  "Ethos-U delegate %s %u: dim %d is %d, the region was compiled for %lld", role,
                  index, d, t.size(d), static_cast<long long>(io.shape()->Get(i)));
    }
    if (t.size(d) > 1 && t.stride(d) != stride) {
      return fail(Error::InvalidArgument,
                  "Ethos-U delegate %s %u: memory layout differs from the region's dim order "
                  "(4-D tensors cross the boundary channels-last)",
                  role, index);
    }
    stride *= io.shape()->Get(i);
  }
  if (t.mutable_data() == nullptr && t.numel() > 0) {
    return fail(Error::InvalidArgument, "Ethos-U delegate %s %u has no data", role, index);
  }
  return Error::Ok;
}

class EthosUBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpecView> compile_specs) override {
    auto verified = verify_payload(processed);
    if (!verified.ok()) return verified.error();
    const fb::EthosUPayload* p = *verified;
    MemoryAllocator& alloc = *context.method_allocator;
    // The executor reads TOSA constants in place: they need the graph 8-byte aligned, which
    // force_align gives inside the payload but the program may not give the payload itself.
    Span<const uint8_t> tosa{p->tosa()->data(), p->tosa()->size()};
    if (reinterpret_cast<uintptr_t>(tosa.data()) % 8 != 0) {
      auto* copy = static_cast<uint8_t*>(alloc.allocate(tosa.size(), 16));
      if (copy == nullptr) {
        return fail(Error::OutOfMemory, "Ethos-U delegate: %zu bytes to align the TOSA graph",
                    tosa.size());
      }
      std::memcpy(copy, tosa.data(), tosa.size());
      tosa = {copy, tosa.size()};
    }
    EthosUDriver& driver = current_driver();
    auto region = driver.prepare(*p, tosa, alloc);
    if (!region.ok()) return region.error();
    auto* d = static_cast<Delegate*>(alloc.allocate(sizeof(Delegate), alignof(Delegate)));
    uint32_t n_in = p->inputs()->size(), n_out = p->outputs()->size();
    auto* in_ptrs = static_cast<const void**>(alloc.allocate(sizeof(void*) * n_in, 8));
    auto* out_ptrs = static_cast<void**>(alloc.allocate(sizeof(void*) * n_out, 8));
    if (d == nullptr || in_ptrs == nullptr || out_ptrs == nullptr) {
      return fail(Error::OutOfMemory, "Ethos-U delegate: out of method memory for its state");
    }
    new (d) Delegate{p, &driver, *region, n_in, n_out, in_ptrs, out_ptrs};
    char line[200];
    std::snprintf(line, sizeof(line),
                  "Ethos-U delegate (%s, %s, %s): %s; Vela estimate %lu NPU cycles",
                  p->accelerator() ? p->accelerator()->c_str() : "?",
                  p->system_config() ? p->system_config()->c_str() : "?",
                  p->memory_mode() ? p->memory_mode()->c_str() : "?",
                  driver.emulated() ? "EMULATED on the TOSA executor (no NPU)" : driver.name(),
                  static_cast<unsigned long>(p->estimate() ? p->estimate()->npu_cycles() : 0));
    platform_log(LogLevel::Info, line);
    return static_cast<DelegateHandle*>(d);
  }

  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) override {
    auto* d = static_cast<Delegate*>(handle);
    if (args.size() < d->num_inputs + d->num_outputs) {
      return fail(Error::InvalidArgument,
                  "Ethos-U delegate: %zu arguments, the region has %u "
                  "inputs and %u outputs",
                  args.size(), d->num_inputs, d->num_outputs);
    }
    for (uint32_t i = 0; i < d->num_inputs; ++i) {
      PTERON_TRY(check_argument(*d->payload->inputs()->Get(i), args[i], i, "input"));
      d->in_ptrs[i] = args[i]->tensor->const_data();
    }
    for (uint32_t i = 0; i < d->num_outputs; ++i) {
      EValue* arg = args[d->num_inputs + i];
      PTERON_TRY(check_argument(*d->payload->outputs()->Get(i), arg, i, "output"));
      d->out_ptrs[i] = arg->tensor->mutable_data();
    }
    EthosUInvocation call{d->payload, {d->in_ptrs, d->num_inputs}, {d->out_ptrs, d->num_outputs}};
    return d->driver->invoke(d->region, call);
  }
};

// Built in static storage and never destroyed: a global with a destructor would need exit-time
// registration, which bare-metal firmware (no __dso_handle) does not link.
alignas(EthosUBackend) unsigned char g_backend_storage[sizeof(EthosUBackend)];
EthosUBackend* const g_backend = new (g_backend_storage) EthosUBackend();
PTERON_REGISTER_BACKEND(kBackendId, *g_backend);

}  // namespace

BackendInterface& backend() { return *g_backend; }
bool backend_registered() { return find_backend(kBackendId) == g_backend; }

}  // namespace pteron::ethos_u
