#include <cstdio>
#include <ctime>

#include "runtime/platform/platform.h"

namespace pteron {

void platform_log(LogLevel level, const char* message) {
  const char* tag = level == LogLevel::Error ? "error" : level == LogLevel::Info ? "info" : "debug";
  std::fprintf(stderr, "pteron %s: %s\n", tag, message);
}

uint64_t platform_ticks() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t platform_ticks_per_second() { return 1000000000ull; }

}  // namespace pteron
