// Checks the AN547 platform under QEMU: MVE executes, static constructors ran, .data was
// copied and .bss zeroed, a host file round-trips over semihosting, the stack is measured.
#include <arm_mve.h>
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

__attribute__((noinline)) int mve_sum(const int32_t* v) {
  int32x4_t a = vld1q_s32(v);
  int32x4_t b = vld1q_s32(v + 4);
  return vaddvq_s32(vmulq_s32(a, b));  // helium multiply and across-vector add
}
}  // namespace

int main() {
  int failures = 0;
  failures += check(g_initialised == 7, ".data copied");
  failures += check(g_zeroed == 0, ".bss zeroed");
  failures += check(g_constructed.value == 42, "static constructor ran");
  const int32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  failures += check(mve_sum(v) == 1 * 5 + 2 * 6 + 3 * 7 + 4 * 8, "MVE multiply-add");
  volatile float x = 1.5f;
  failures += check(x * x == 2.25f, "FPU");

  const char text[] = "pteron semihosting round trip";
  failures +=
      check(sh_write_file("an547_platform_test.tmp", text, sizeof(text)) == 0, "write file");
  char back[64] = {};
  failures += check(sh_read_file("an547_platform_test.tmp", back, sizeof(back)) == sizeof(text),
                    "read file size");
  failures += check(memcmp(back, text, sizeof(text)) == 0, "read file bytes");
  failures += check(sh_read_file("no/such/file", back, sizeof(back)) == -1, "missing file");

  const size_t used = board_stack_high_water();
  failures += check(used > 0 && used < board_stack_size(), "stack high water");
  printf("stack high water %u of %u bytes\n", (unsigned)used, (unsigned)board_stack_size());
  if (failures == 0) printf("platform ok\n");
  return failures;
}
