// Reset and fault handling for every Cortex-M board the firmware runs on (MPS3 AN547's M55,
// MPS2 AN386's M4 and AN500's M7 under QEMU): enables the FPU (and MVE on the M55: the same
// CPACR bits), copies .data, zeroes .bss, paints the stack for high-water measurement, opens
// the semihosting handles, runs static constructors, then main(). The board's linker script
// (mps3_an547/, mps2/) defines the symbols used here.
#include <stdint.h>
#include "board.h"
#include "semihosting.h"

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_bottom[], __stack_top[];
extern uint8_t __ram_static_start[], __ram_static_end[];
extern void (*__preinit_array_start[])(void), (*__preinit_array_end[])(void);
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);

extern void initialise_monitor_handles(void);
extern int main(void);

#define STACK_PAINT 0xC5AC5AC5u
#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)

static void write_hex(char* out, uint32_t v) {
  for (int i = 0; i < 8; ++i) out[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xF];
}

// Faults end the run with exit code 3 and the fault status, so a test fails instead of hanging.
void Fault_Handler(void) {
  uint32_t* sp;
  __asm__ volatile("mrs %0, msp" : "=r"(sp));
  char line[] = "fault: cfsr=00000000 hfsr=00000000 pc=00000000\n";
  write_hex(line + 12, SCB_CFSR);
  write_hex(line + 26, SCB_HFSR);
  write_hex(line + 38, sp[6]);  // stacked PC
  sh_write0(line);
  sh_exit(3);
}

void Default_Handler(void) {
  sh_write0("unexpected interrupt\n");
  sh_exit(3);
}

__attribute__((naked, noreturn)) void Reset_Handler(void) {
  // Naked: no stack is touched before the stack pointer is known to be set up.
  __asm__ volatile(
      "ldr r0, =__stack_top\n"
      "msr msp, r0\n"
      "b board_reset_c\n");
}

// Paints [__stack_bottom, sp - margin) so the first words used are detected later.
static __attribute__((noinline)) void paint_stack(void) {
  uint32_t* sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t* p = __stack_bottom; p < sp - 16; ++p) *p = STACK_PAINT;
}

__attribute__((noreturn, used)) void board_reset_c(void) {
  SCB_CPACR |= (0xFu << 20);  // CP10/CP11 full access: the FPU, and MVE (Helium) on the M55
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (uint32_t *src = __data_load, *dst = __data_start; dst < __data_end;) *dst++ = *src++;
  for (uint32_t* p = __bss_start; p < __bss_end; ++p) *p = 0;
  paint_stack();
  board_stdio_init();
  for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; ++f) (*f)();
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  sh_exit(main());
}

// newlib's stdio over semihosting (printf in tests): rdimon sets up stdin/stdout/stderr, which
// takes about 440 bytes of heap. Images that talk over semihosting directly (pteron firmware)
// define their own, empty board_stdio_init().
__attribute__((weak)) void board_stdio_init(void) { initialise_monitor_handles(); }

// newlib's __libc_init_array is not used (-nostartfiles), but its references must resolve.
void _init(void) {}
void _fini(void) {}

size_t board_stack_size(void) { return (size_t)((uint8_t*)__stack_top - (uint8_t*)__stack_bottom); }

size_t board_stack_high_water(void) {
  const uint32_t* p = __stack_bottom;
  while (p < __stack_top && *p == STACK_PAINT) ++p;
  return (size_t)((const uint8_t*)__stack_top - (const uint8_t*)p);
}

size_t board_static_ram_bytes(void) { return (size_t)(__ram_static_end - __ram_static_start); }

__attribute__((noinline, used)) void board_icount_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline, used)) void board_icount_end(void) { __asm__ volatile("" ::: "memory"); }

// The system exceptions (SecureFault is the M55's; a reserved slot on the M4 and M7); the
// boards' external interrupts are never enabled here.
typedef void (*Handler)(void);
__attribute__((section(".vectors"), used)) const Handler board_vectors[16] = {
    (Handler)(uintptr_t)__stack_top,
    Reset_Handler,
    Default_Handler,  // NMI
    Fault_Handler,    // HardFault
    Fault_Handler,    // MemManage
    Fault_Handler,    // BusFault
    Fault_Handler,    // UsageFault
    Fault_Handler,    // SecureFault
    0,
    0,
    0,
    Default_Handler,  // SVCall
    Default_Handler,  // DebugMon
    0,
    Default_Handler,  // PendSV
    Default_Handler,  // SysTick
};
