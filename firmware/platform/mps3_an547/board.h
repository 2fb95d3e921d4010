// What the MPS3 AN547 (Cortex-M55) platform layer offers the firmware: measured stack use,
// RAM figures from the linker's symbols, and instruction-count markers for tools/qemu_icount.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Stack bytes reserved by the linker script, and the most ever used since reset (the startup
// code paints the stack with a pattern; the deepest overwritten word marks the high water).
size_t board_stack_size(void);
size_t board_stack_high_water(void);

// Bytes of initialised and zeroed static data (.data + .bss) in DTCM, and bytes of each other
// RAM region's static sections (arenas the memory plan placed there).
size_t board_static_ram_bytes(void);
size_t board_region_bytes(const char* region);  // "dtcm", "sram", "isram"

// Instruction-count markers: tools/qemu_icount counts the instructions executed between a
// call to board_icount_begin() and the next call to board_icount_end(). Never inlined.
void board_icount_begin(void);
void board_icount_end(void);

#ifdef __cplusplus
}
#endif
