"""Code flash of a `pteron firmware` ELF by where it comes from, read from the linker map.

Counted: every input section the linker placed in code flash (the AN547's ITCM, the MPS2 boards'
flash besides the program): .text (code, read-only data, vectors), the unwind index and the
initialisers of .data. Each is charged to the archive or object it came from:

- runtime: libpteron_runtime.a, the runtime core (program loader and verifier, method, memory
  allocators, kernel registry, EValue/Tensor, errors), the part ExecuTorch's 52,168-byte
  core-runtime budget is about;
- kernels: libpteron_kernels_*.a (only the program's kernels are linked);
- firmware: the program-independent main, the board's platform layer and the generated file;
- libc: newlib (nano), libm, libgcc, semihosting (rdimon) and the C runtime start files.

    python bench/firmware_map.py app.elf.build/app.map
"""

import re
import sys
from pathlib import Path

CODE_SECTIONS = (".text", ".ARM.exidx", ".data")  # output sections whose bytes are code flash
SECTION = re.compile(r"^ (\S+)\s*$")
PLACED = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
OUTPUT = re.compile(r"^(\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(?:\s+load address 0x([0-9a-f]+))?")


def component(source: str) -> str:
    name = Path(source.split("(")[0]).name
    if name == "libpteron_runtime.a":
        return "runtime"
    if name.startswith("libpteron_kernels_"):
        return "kernels"
    if name in ("libpteron_firmware_app.a", "libpteron_board.a", "firmware_config.o"):
        return "firmware"
    return "libc"


def code_by_component(map_path: str) -> dict[str, int]:
    sizes = {"runtime": 0, "kernels": 0, "firmware": 0, "libc": 0}
    in_memory_map = False
    load_in_code = False  # the current output section's bytes sit in code flash
    pending = None  # an input section name whose address/size line follows
    for line in Path(map_path).read_text().splitlines():
        if line.startswith("Linker script and memory map"):
            in_memory_map = True
            continue
        if not in_memory_map:
            continue
        out = OUTPUT.match(line)
        if out:
            load_in_code = out.group(1) in CODE_SECTIONS
            pending = None
            continue
        if line.startswith(" *fill*") or line.startswith(" *("):
            continue
        sec = SECTION.match(line)
        if sec and not line.startswith("  "):
            pending = sec.group(1)
            continue
        placed = PLACED.match(line)
        if placed and (placed.group(1) or pending):
            pending = None
            size = int(placed.group(3), 16)
            if load_in_code and size:
                sizes[component(placed.group(4))] += size
    return sizes


if __name__ == "__main__":
    for key, value in code_by_component(sys.argv[1]).items():
        print(f"{key:9s} {value:8d}")
