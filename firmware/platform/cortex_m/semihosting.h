// Arm semihosting calls (BKPT 0xAB) for the firmware's host I/O under QEMU `-semihosting`:
// console output, whole-file reads and writes on the host, and the exit code. Heap-free and
// callable from C and C++.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes a NUL-terminated string to the host console (QEMU's stdout).
void sh_write0(const char* text);
// Writes `size` bytes to the host console.
void sh_write_console(const char* text, size_t size);

// Opens a host file; mode is "rb" or "wb". Returns a handle >= 0, or -1.
int sh_open(const char* path, const char* mode);
int sh_close(int handle);
// Bytes in the file, or -1.
long sh_file_length(int handle);
// Reads up to `size` bytes; returns the number read, or -1.
long sh_read(int handle, void* buffer, size_t size);
// Writes all `size` bytes; returns 0 on success.
int sh_write(int handle, const void* data, size_t size);

// Reads the whole host file `path` into `buffer` (at most `capacity` bytes). Returns the file's
// size, -1 if it cannot be opened or read, or -2 if it is larger than `capacity`.
long sh_read_file(const char* path, void* buffer, size_t capacity);
// Writes `size` bytes to host file `path` (created or truncated). Returns 0 on success.
int sh_write_file(const char* path, const void* data, size_t size);

// Copies the QEMU command line (`-append` text after the program name) into `buffer`; returns
// its length or -1.
long sh_command_line(char* buffer, size_t capacity);

// Ends the program; QEMU exits with `code` (SYS_EXIT_EXTENDED).
__attribute__((noreturn)) void sh_exit(int code);

#ifdef __cplusplus
}
#endif
