// What the Cortex-M platform layer offers the firmware on every board: measured stack use,
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

// Bytes of static data in the first RAM region (DTCM on the AN547, SSRAM on MPS2): .data,
// .bss and the buffers `pteron firmware` placed there (arenas, method memory, scratch).
size_t board_static_ram_bytes(void);

// Called once at start-up before static constructors: sets up newlib's stdio (the weak default);
// an image that never uses newlib's stdio defines an empty one and saves its heap.
void board_stdio_init(void);

// Instruction-count markers: tools/qemu_icount counts the instructions executed between a
// call to board_icount_begin() and the next call to board_icount_end(). Never inlined.
void board_icount_begin(void);
void board_icount_end(void);

#ifdef __cplusplus
}
#endif
