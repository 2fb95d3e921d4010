// The Ethos-U delegate's runtime half, registered as "PteronEthosUBackend". It verifies the
// payload, binds the region's tensors (layout and dtype checked against the payload) and hands
// each call to the current EthosUDriver: on hosts and in the Cortex-M55 firmware the emulated
// driver, which runs the region's TOSA form (bit-exact with the TOSA reference model) and says
// so in the log at load time.
#pragma once

#include "backends/ethos_u/runtime/ethos_u_driver.h"
#include "runtime/backend/backend.h"

namespace pteron::ethos_u {

constexpr const char kBackendId[] = "PteronEthosUBackend";

BackendInterface& backend();

// Links the start-up registration into binaries that reference nothing else of the backend.
bool backend_registered();

}  // namespace pteron::ethos_u
