"""A host target whose kernel libraries are cortex-m then portable: int8 programs compiled for it
run pteron's int8 kernels on this CPU, as they would on the microcontroller."""

from pathlib import Path

TARGET = """
name = "cortex-m-test"
description = "host CPU with the cortex-m kernel library"
[cpu]
arch = "native"
[[memory]]
name = "ram"
size = 0
[runtime]
kernels = ["cortex-m", "portable"]
backends = []
tensor_alignment = 16
plan_inputs = true
"""


def cortex_m_target(folder: Path) -> str:
    """Writes the target file into `folder` and returns its path (pteron's target= argument)."""
    path = Path(folder) / "cortex-m-test.toml"
    path.write_text(TARGET)
    return str(path)
