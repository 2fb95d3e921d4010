"""Host targets for tests: `cortex_m_target` has the kernel libraries cortex-m then portable, so
int8 programs compiled for it run pteron's int8 kernels on this CPU, as they would on the
microcontroller; `host_target` writes any other library list and input planning."""

from pathlib import Path

TARGET = """
name = "{name}"
description = "host CPU with the {libraries} kernel libraries"
[cpu]
arch = "native"
[[memory]]
name = "ram"
size = 0
[runtime]
kernels = [{kernels}]
backends = []
tensor_alignment = 16
plan_inputs = {plan_inputs}
"""


def host_target(folder: Path, name: str, kernels: list[str], plan_inputs: bool = True) -> str:
    """Writes a host target file into `folder` and returns its path (pteron's target= argument).
    `plan_inputs=False` leaves inputs in the caller's buffers."""
    path = Path(folder) / f"{name}.toml"
    path.write_text(
        TARGET.format(
            name=name,
            libraries=", ".join(kernels),
            kernels=", ".join(f'"{k}"' for k in kernels),
            plan_inputs=str(plan_inputs).lower(),
        )
    )
    return str(path)


def cortex_m_target(folder: Path) -> str:
    return host_target(folder, "cortex-m-test", ["cortex-m", "portable"])
