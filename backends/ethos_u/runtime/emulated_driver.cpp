// The emulated Ethos-U driver: runs the region's TOSA form through the TOSA executor.
#include <new>

#include "backends/ethos_u/runtime/ethos_u_driver.h"
#include "backends/tosa/runtime/tosa_executor.h"

namespace pteron::ethos_u {
namespace {

struct Region {
  tosa_rt::TosaExecutor executor;
  const void** in_ptrs;  // TOSA graph order
  void** out_ptrs;
};

// The payload's I/O descriptions must be the TOSA graph's, or buffers would be misread.
Error check_io(const flatbuffers::Vector<flatbuffers::Offset<fb::IoTensor>>* list,
               const tosa_rt::TosaExecutor& ex, bool inputs) {
  const char* role = inputs ? "input" : "output";
  size_t n = inputs ? ex.num_inputs() : ex.num_outputs();
  if (list->size() != n) {
    return fail(Error::InvalidProgram, "Ethos-U payload: %u %ss, its TOSA graph has %zu",
                list->size(), role, n);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const fb::IoTensor* io = list->Get(i);
    uint32_t k = io->tosa_index();
    const tosa_rt::TosaTensor& t = inputs ? ex.input(k) : ex.output(k);
    bool same = io->shape() != nullptr && int32_t(io->shape()->size()) == t.rank;
    for (int32_t d = 0; same && d < t.rank; ++d) same = io->shape()->Get(d) == t.shape[d];
    size_t es = io->dtype() == 1 ? 1 : 4;
    if (!same || tosa_rt::dtype_size(t.dtype) != es) {
      return fail(Error::InvalidProgram,
                  "Ethos-U payload: %s %u does not match TOSA tensor '%s' (shape or dtype)", role,
                  i, t.name);
    }
  }
  return Error::Ok;
}

class EmulatedDriver final : public EthosUDriver {
 public:
  const char* name() const override { return "emulated (TOSA executor, no NPU)"; }
  bool emulated() const override { return true; }

  Result<void*> prepare(const fb::EthosUPayload& payload, Span<const uint8_t> tosa,
                        MemoryAllocator& allocator) override {
    auto need = tosa_rt::TosaExecutor::memory_required(tosa.data(), tosa.size());
    if (!need.ok()) return need.error();
    // The payload records what the executor really plans (lifetimes share bytes); the bound
    // from memory_required() is the fallback for payloads that do not say.
    size_t bytes = payload.tosa_memory() != 0 && payload.tosa_memory() <= *need
                       ? size_t(payload.tosa_memory())
                       : *need;
    void* memory = allocator.allocate(bytes, 16);
    void* slot = allocator.allocate(sizeof(Region), alignof(Region));
    uint32_t n_in = payload.inputs()->size(), n_out = payload.outputs()->size();
    auto* in_ptrs = static_cast<const void**>(allocator.allocate(sizeof(void*) * n_in, 8));
    auto* out_ptrs = static_cast<void**>(allocator.allocate(sizeof(void*) * n_out, 8));
    if (memory == nullptr || slot == nullptr || in_ptrs == nullptr || out_ptrs == nullptr) {
      return fail(Error::OutOfMemory,
                  "Ethos-U delegate (emulated): the TOSA executor needs %zu bytes of method "
                  "memory",
                  bytes + sizeof(Region));
    }
    auto ex = tosa_rt::TosaExecutor::create(tosa.data(), tosa.size(),
                                            {static_cast<uint8_t*>(memory), bytes});
    if (!ex.ok()) return ex.error();
    PTERON_TRY(check_io(payload.inputs(), *ex, true));
    PTERON_TRY(check_io(payload.outputs(), *ex, false));
    return static_cast<void*>(new (slot) Region{std::move(*ex), in_ptrs, out_ptrs});
  }

  // The call's buffers are in the region's order; the executor takes the TOSA graph's.
  Error invoke(void* region, const EthosUInvocation& call) override {
    auto* r = static_cast<Region*>(region);
    const fb::EthosUPayload& p = *call.payload;
    if (call.inputs.size() != p.inputs()->size() || call.outputs.size() != p.outputs()->size()) {
      return fail(Error::InvalidArgument, "Ethos-U delegate (emulated): wrong argument count");
    }
    for (uint32_t i = 0; i < p.inputs()->size(); ++i) {
      r->in_ptrs[p.inputs()->Get(i)->tosa_index()] = call.inputs[i];
    }
    for (uint32_t i = 0; i < p.outputs()->size(); ++i) {
      r->out_ptrs[p.outputs()->Get(i)->tosa_index()] = call.outputs[i];
    }
    return r->executor.execute({r->in_ptrs, p.inputs()->size()},
                               {r->out_ptrs, p.outputs()->size()});
  }
};

EmulatedDriver g_emulated;
EthosUDriver* g_driver = nullptr;

}  // namespace

EthosUDriver& emulated_driver() { return g_emulated; }
void set_driver(EthosUDriver* driver) { g_driver = driver; }
EthosUDriver& current_driver() { return g_driver != nullptr ? *g_driver : g_emulated; }

}  // namespace pteron::ethos_u
