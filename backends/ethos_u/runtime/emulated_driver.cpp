// The emulated Ethos-U driver: runs the region's TOSA form through the TOSA executor.
#include <new>

#include "backends/ethos_u/runtime/ethos_u_driver.h"
#include "backends/tosa/runtime/tosa_executor.h"

namespace pteron::ethos_u {
namespace {

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
    const tosa_rt::TosaTensor& t = inputs ? ex.input(i) : ex.output(i);
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
    void* slot = allocator.allocate(sizeof(tosa_rt::TosaExecutor), alignof(tosa_rt::TosaExecutor));
    if (memory == nullptr || slot == nullptr) {
      return fail(Error::OutOfMemory,
                  "Ethos-U delegate (emulated): the TOSA executor needs %zu bytes of method "
                  "memory", bytes + sizeof(tosa_rt::TosaExecutor));
    }
    auto ex = tosa_rt::TosaExecutor::create(tosa.data(), tosa.size(),
                                            {static_cast<uint8_t*>(memory), bytes});
    if (!ex.ok()) return ex.error();
    PTERON_TRY(check_io(payload.inputs(), *ex, true));
    PTERON_TRY(check_io(payload.outputs(), *ex, false));
    return static_cast<void*>(new (slot) tosa_rt::TosaExecutor(std::move(*ex)));
  }

  Error invoke(void* region, const EthosUInvocation& call) override {
    auto* ex = static_cast<tosa_rt::TosaExecutor*>(region);
    return ex->execute(call.inputs, call.outputs);
  }
};

EmulatedDriver g_emulated;
EthosUDriver* g_driver = nullptr;

}  // namespace

EthosUDriver& emulated_driver() { return g_emulated; }
void set_driver(EthosUDriver* driver) { g_driver = driver; }
EthosUDriver& current_driver() { return g_driver != nullptr ? *g_driver : g_emulated; }

}  // namespace pteron::ethos_u
