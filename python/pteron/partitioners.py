"""Backend partitioners for `to_edge_transform_and_lower(ep, partitioner=[...])`.

Each names a backend of pteron's C++ compiler; the compiler runs them in the order given, then
leaves the remaining nodes to the target's kernels:

    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()])
    program.report["delegated_regions"]  # [{"backend": "xnnpack", "nodes": 52, ...}]
    program.report["refusals"]           # why each kept node was not delegated
"""

from __future__ import annotations


class Partitioner:
    """A backend of the C++ compiler, by the name `pteron compile --backends` takes, with its
    options after it (`vulkan:fp16=on`)."""

    backend = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class XnnpackPartitioner(Partitioner):
    """Delegates fp32 regions (convolutions, linear layers, pools, elementwise ops) to XNNPACK.

    The region rules and the cost rule are in backends/xnnpack/README.md.
    """

    backend = "xnnpack"


class VulkanPartitioner(Partitioner):
    """Delegates fp32 regions (linear/matmul, conv, pools, elementwise, activations, softmax,
    layer norm, cat/slice/embedding) to the Vulkan GPU delegate; rules and the cost rule are in
    backends/vulkan/README.md. fp16=True stores the regions' tensors and weights as fp16
    (backend option `vulkan:fp16=on`); inputs and outputs stay fp32. Such regions compute in fp16
    where the device has shaderFloat16 (sums in fp32); fp16_arithmetic=False keeps their
    arithmetic fp32 on every device (`vulkan:fp16=storage`).
    """

    def __init__(self, fp16: bool = False, fp16_arithmetic: bool = True):
        self.fp16 = fp16
        self.fp16_arithmetic = fp16_arithmetic
        self.backend = ("vulkan" if not fp16 else
                        "vulkan:fp16=on" if fp16_arithmetic else "vulkan:fp16=storage")

    def __repr__(self) -> str:
        if self.fp16 and not self.fp16_arithmetic:
            return "VulkanPartitioner(fp16=True, fp16_arithmetic=False)"
        return f"VulkanPartitioner(fp16={self.fp16})"


class VgfPartitioner(Partitioner):
    """Delegates fp32 regions the TOSA FP profile takes to Arm's ML SDK for Vulkan: lowered to
    TOSA, converted to .vgf by the ML SDK model converter, run through VK_ARM_data_graph (on this
    machine via the ML emulation layer on lavapipe); see backends/vgf/README.md.
    """

    backend = "vgf"


def backend_names(partitioners) -> list[str]:
    """The compiler's backend list for `partitioners` (objects with a `backend` name or names)."""
    names = []
    for p in partitioners:
        name = p if isinstance(p, str) else getattr(p, "backend", None)
        if not name:
            raise TypeError(f"{type(p).__name__} is not a pteron partitioner (use pteron.XnnpackPartitioner())")
        names.append(name)
    return names
