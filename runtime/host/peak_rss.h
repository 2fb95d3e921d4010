// This process's peak resident set, for the tools' and the generator's reports.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>

namespace pteron::host {

// Bytes: VmHWM on Linux, the peak of this process's own address space. getrusage's ru_maxrss
// is not: it keeps the peak of the image exec replaced, so a tool started by a 500 MiB Python
// process (a benchmark's driver, a test) would report at least 500 MiB whatever it used
// itself. ru_maxrss elsewhere; 0 when neither is known.
inline uint64_t peak_rss_bytes() {
#ifdef __linux__
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f)) {
      found = std::sscanf(line, "VmHWM: %llu kB", &kib) == 1;
    }
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
#endif
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#ifdef __APPLE__
  return static_cast<uint64_t>(usage.ru_maxrss);  // bytes on macOS
#else
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
#endif
}

}  // namespace pteron::host
