// pteron's platform layer (runtime/platform/platform.h) on the Cortex-M boards: log lines go to the
// semihosting console; time comes from the semihosting clock (QEMU has no cycle counter, so
// instruction counts from tools/qemu_icount are the performance measure).
#include <string.h>

#include "firmware/platform/cortex_m/semihosting.h"
#include "runtime/platform/platform.h"

namespace pteron {

void platform_log(LogLevel level, const char* message) {
  sh_write0(level == LogLevel::Error ? "pteron error: " : "pteron: ");
  sh_write0(message);
  sh_write0("\n");
}

uint64_t platform_ticks() {
  static volatile uint32_t ticks = 0;  // no clock worth reading: deterministic, monotonic
  return ticks++;
}

uint64_t platform_ticks_per_second() { return 1000000; }

}  // namespace pteron
