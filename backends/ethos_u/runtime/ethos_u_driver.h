// The Ethos-U delegate talks to the NPU through a small driver interface, so a board with a
// real Ethos-U swaps in a driver that runs Vela's command stream (ethosu_invoke with the base
// pointers weights / scratch / fast scratch, inputs copied to their offsets in the scratch
// region first, outputs read back after) while hosts and QEMU use the emulated driver, which
// runs the region's TOSA form through the TOSA executor instead. Nothing reachable here
// executes Ethos-U command streams, so the emulated driver is the default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/ethos_u/schema/ethos_u_payload_generated.h"
#include "runtime/core/error.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron::ethos_u {

// One delegate call: the payload (both forms of the region) and the bound I/O buffers in the
// payload's input / output order, dense in the layout the payload's IoTensor describes.
struct EthosUInvocation {
  const fb::EthosUPayload* payload = nullptr;
  Span<const void* const> inputs;
  Span<void* const> outputs;
};

class EthosUDriver {
 public:
  virtual const char* name() const = 0;
  // True when the driver does not run the command stream (results come from the TOSA form).
  virtual bool emulated() const = 0;
  // Per-region state, from load-time memory (`allocator` lives as long as the method).
  // `tosa` is the payload's TOSA graph, 8-byte aligned.
  virtual Result<void*> prepare(const fb::EthosUPayload& payload, Span<const uint8_t> tosa,
                                MemoryAllocator& allocator) = 0;
  virtual Error invoke(void* region, const EthosUInvocation& call) = 0;

 protected:
  // Drivers are static objects never deleted through this interface: a trivial destructor
  // keeps them free of exit-time registration (bare-metal firmware has no __dso_handle).
  ~EthosUDriver() = default;
};

// The emulated driver (TOSA executor): bit-exact with the TOSA reference model.
EthosUDriver& emulated_driver();

// The driver the delegate uses for regions loaded after the call (default: emulated_driver()).
void set_driver(EthosUDriver* driver);
EthosUDriver& current_driver();

}  // namespace pteron::ethos_u
