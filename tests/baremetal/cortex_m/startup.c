// Minimal Cortex-M55 start-up for the kernel test firmware under QEMU mps3-an547 (REFERENCE
// §6): the reset handler turns on the FPU and MVE (CPACR CP10/CP11), zeroes .bss, runs static
// constructors (the kernel registrations), opens semihosting and calls main; exit() hands
// main's status to QEMU. Everything is linked at its run address (QEMU loads the ELF
// segments), so .data needs no copy.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __stack_top;
extern uint8_t __bss_start__[], __bss_end__[];
extern void __libc_init_array(void);
extern void initialise_monitor_handles(void);
extern int main(void);

// crti/crtn are not linked (-nostartfiles); __libc_init_array still calls these.
void _init(void) {}
void _fini(void) {}

static void fault_handler(void) { exit(3); }

void reset_handler(void) {
  volatile uint32_t* cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= (0xFu << 20);  // CP10 and CP11: full access (FPU and MVE)
  __asm volatile("dsb\n isb" ::: "memory");
  memset(__bss_start__, 0, (size_t)(__bss_end__ - __bss_start__));
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}

__attribute__((section(".vectors"), used))
const void* const vector_table[16] = {&__stack_top,
                                      (const void*)reset_handler,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler,
                                      0,
                                      0,
                                      0,
                                      0,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler,
                                      0,
                                      (const void*)fault_handler,
                                      (const void*)fault_handler};
