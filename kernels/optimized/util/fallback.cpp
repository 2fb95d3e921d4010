#include "kernels/optimized/util/fallback.h"

#include <cstring>

namespace pteron::opt {

Error call_portable(const char* name, KernelContext& ctx, Span<EValue*> args) {
  for (const KernelEntry& e : registered_kernels()) {
    if (std::strcmp(e.library, "portable") == 0 && std::strcmp(e.name, name) == 0) {
      return e.fn(ctx, args);
    }
  }
  return fail(Error::NotSupported, "%s: no portable kernel to handle this input", name);
}

}  // namespace pteron::opt
