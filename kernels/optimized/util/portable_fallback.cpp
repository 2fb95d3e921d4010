#include "kernels/optimized/util/portable_fallback.h"

#include <cstring>

namespace pteron::optimized {

Error call_portable(const char* name, KernelContext& ctx, Span<EValue*> args) {
  // A linear scan of the registry: cheap next to any kernel that falls back, and the registry
  // is complete by the time a kernel runs.
  for (const KernelEntry& e : registered_kernels()) {
    if (std::strcmp(e.name, name) == 0 && std::strcmp(e.library, "portable") == 0) {
      return call_kernel(e, ctx, args);
    }
  }
  return fail(Error::NotSupported, "%s: no portable kernel to handle these arguments", name);
}

}  // namespace pteron::optimized
