// Checks the board's platform under QEMU: the core's SIMD (MVE on the M55, the DSP extension on
// the M4/M7) and FPU execute, static constructors ran, .data was copied and .bss zeroed, a host
// file round-trips over semihosting, the stack is measured.
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "semihosting.h"

namespace {
int g_initialised = 7;  // .data
int g_zeroed;           // .bss
struct Constructed {
  Constructed() { value = 42; }
  int value = 0;
};
Constructed g_constructed;

int check(bool ok, const char* what) {
  if (!ok) printf("FAILED: %s\n", what);
  return ok ? 0 : 1;
}

#if defined(__ARM_FEATURE_MVE)
__attribute__((noinline)) int simd_dot(const int32_t* v) {
  int32x4_t a = vld1q_s32(v);
  int32x4_t b = vld1q_s32(v + 4);
  return vaddvq_s32(vmulq_s32(a, b));  // helium multiply and across-vector add
}
#elif defined(__ARM_FEATURE_DSP)
__attribute__((noinline)) int simd_dot(const int32_t* v) {
  // SMLAD: two 16-bit multiplies and both products added to the accumulator, twice.
  int32_t acc = 0;
  for (int i = 0; i < 4; i += 2) {
    const int32_t a = (v[i] & 0xffff) | (v[i + 1] << 16);
    const int32_t b = (v[i + 4] & 0xffff) | (v[i + 5] << 16);
    __asm__("smlad %0, %1, %2, %0" : "+r"(acc) : "r"(a), "r"(b));
  }
  return acc;
}
#else
#error "a Cortex-M core with MVE or the DSP extension"
#endif
}  // namespace

int main() {
  int failures = 0;
  failures += check(g_initialised == 7, ".data copied");
  failures += check(g_zeroed == 0, ".bss zeroed");
  failures += check(g_constructed.value == 42, "static constructor ran");
  const int32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  failures += check(simd_dot(v) == 1 * 5 + 2 * 6 + 3 * 7 + 4 * 8, "SIMD multiply-add");
  volatile float x = 1.5f;
  failures += check(x * x == 2.25f, "FPU");

  const char text[] = "pteron semihosting round trip";
  failures +=
      check(sh_write_file("board_platform_test.tmp", text, sizeof(text)) == 0, "write file");
  char back[64] = {};
  failures += check(sh_read_file("board_platform_test.tmp", back, sizeof(back)) == sizeof(text),
                    "read file size");
  failures += check(memcmp(back, text, sizeof(text)) == 0, "read file bytes");
  failures += check(sh_read_file("no/such/file", back, sizeof(back)) == -1, "missing file");

  const size_t used = board_stack_high_water();
  failures += check(used > 0 && used < board_stack_size(), "stack high water");
  printf("stack high water %u of %u bytes\n", (unsigned)used, (unsigned)board_stack_size());
  if (failures == 0) printf("platform ok\n");
  return failures;
}
