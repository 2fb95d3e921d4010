#include "semihosting.h"

#include <string.h>

enum {
  SYS_OPEN = 0x01,
  SYS_CLOSE = 0x02,
  SYS_WRITEC = 0x03,
  SYS_WRITE0 = 0x04,
  SYS_WRITE = 0x05,
  SYS_READ = 0x06,
  SYS_FLEN = 0x0C,
  SYS_GET_CMDLINE = 0x15,
  SYS_EXIT = 0x18,
  SYS_EXIT_EXTENDED = 0x20,
};
enum { ADP_STOPPED_APPLICATION_EXIT = 0x20026 };

// r0 = operation, r1 = parameter block; the result comes back in r0.
static long semihost(int op, const void* arg) {
  register long r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void sh_write0(const char* text) { semihost(SYS_WRITE0, text); }

void sh_write_console(const char* text, size_t size) {
  // Handle 1 is not portable across hosts; write through ":tt" opened for writing instead.
  static int console = -1;
  if (console < 0) console = sh_open(":tt", "wb");
  if (console >= 0) sh_write(console, text, size);
}

int sh_open(const char* path, const char* mode) {
  // Semihosting open modes follow fopen: 0 "r", 1 "rb", 4 "w", 5 "wb".
  int m = 1;
  if (strcmp(mode, "r") == 0)
    m = 0;
  else if (strcmp(mode, "rb") == 0)
    m = 1;
  else if (strcmp(mode, "w") == 0)
    m = 4;
  else if (strcmp(mode, "wb") == 0)
    m = 5;
  uint32_t block[3] = {(uint32_t)(uintptr_t)path, (uint32_t)m, (uint32_t)strlen(path)};
  return (int)semihost(SYS_OPEN, block);
}

int sh_close(int handle) {
  uint32_t block[1] = {(uint32_t)handle};
  return (int)semihost(SYS_CLOSE, block);
}

long sh_file_length(int handle) {
  uint32_t block[1] = {(uint32_t)handle};
  return semihost(SYS_FLEN, block);
}

long sh_read(int handle, void* buffer, size_t size) {
  uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buffer, (uint32_t)size};
  const long not_read = semihost(SYS_READ, block);  // bytes NOT read
  return not_read < 0 || (size_t)not_read > size ? -1 : (long)(size - (size_t)not_read);
}

int sh_write(int handle, const void* data, size_t size) {
  uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)size};
  return semihost(SYS_WRITE, block) == 0 ? 0 : -1;  // returns bytes NOT written
}

long sh_read_file(const char* path, void* buffer, size_t capacity) {
  const int h = sh_open(path, "rb");
  if (h < 0) return -1;
  const long size = sh_file_length(h);
  long result = size;
  if (size < 0) {
    result = -1;
  } else if ((size_t)size > capacity) {
    result = -2;
  } else if (sh_read(h, buffer, (size_t)size) != size) {
    result = -1;
  }
  sh_close(h);
  return result;
}

int sh_write_file(const char* path, const void* data, size_t size) {
  const int h = sh_open(path, "wb");
  if (h < 0) return -1;
  const int rc = sh_write(h, data, size);
  sh_close(h);
  return rc;
}

long sh_command_line(char* buffer, size_t capacity) {
  uint32_t block[2] = {(uint32_t)(uintptr_t)buffer, (uint32_t)capacity};
  if (semihost(SYS_GET_CMDLINE, block) != 0) return -1;
  return (long)block[1];
}

void sh_exit(int code) {
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
  semihost(SYS_EXIT_EXTENDED, block);
  // A host without the extended call: plain SYS_EXIT reports success or failure only.
  semihost(SYS_EXIT, (const void*)(uintptr_t)(code == 0 ? ADP_STOPPED_APPLICATION_EXIT : 0x20023));
  for (;;) {
  }
}
