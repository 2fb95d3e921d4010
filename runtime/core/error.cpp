#include "runtime/core/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace pteron {
namespace {
#if defined(PTERON_BARE_METAL)
char g_message[192];  // single-threaded targets
#else
thread_local char g_message[256];
#endif
}  // namespace

const char* error_name(Error e) {
  switch (e) {
    case Error::Ok:
      return "Ok";
    case Error::Internal:
      return "Internal";
    case Error::InvalidArgument:
      return "InvalidArgument";
    case Error::InvalidProgram:
      return "InvalidProgram";
    case Error::NotFound:
      return "NotFound";
    case Error::NotSupported:
      return "NotSupported";
    case Error::OutOfMemory:
      return "OutOfMemory";
    case Error::OutOfRange:
      return "OutOfRange";
    case Error::AccessFailed:
      return "AccessFailed";
    case Error::DelegateFailed:
      return "DelegateFailed";
  }
  return "Unknown";
}

Error fail(Error e, const char* fmt, ...) {
  // Formatted into a local buffer first: callers wrap an earlier failure's message
  // (last_error_message() as an argument), and vsnprintf into its own source is undefined.
  char message[sizeof(g_message)];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  memcpy(g_message, message, sizeof(message));
  return e;
}

const char* last_error_message() { return g_message; }
void clear_error_message() { g_message[0] = '\0'; }

}  // namespace pteron
