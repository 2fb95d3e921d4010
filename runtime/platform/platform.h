// The few things the runtime needs from the system. Hosted builds use platform_posix.cpp;
// bare-metal builds link their own definitions (a timer, a UART or semihosting log).
#pragma once

#include <cstdint>

namespace pteron {

enum class LogLevel : uint8_t { Debug, Info, Error };

void platform_log(LogLevel level, const char* message);
// Monotonic time in ticks, and how many ticks make a second.
uint64_t platform_ticks();
uint64_t platform_ticks_per_second();

}  // namespace pteron
