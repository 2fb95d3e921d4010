"""pteron: PyTorch models on Arm devices.

    import pteron
    ep = pteron.export(model, (x,))
    program = pteron.to_edge_transform_and_lower(ep)
    program.save("model.pte")
    outputs = pteron.load("model.pte").forward(x)
"""

from pteron.lowering import CompileError, LoweredProgram, export, to_edge_transform_and_lower
from pteron.partitioners import Partitioner, VulkanPartitioner, XnnpackPartitioner
from pteron.runtime import Method, Program, load

__all__ = [
    "CompileError",
    "LoweredProgram",
    "Method",
    "Partitioner",
    "Program",
    "export",
    "load",
    "to_edge_transform_and_lower",
    "VulkanPartitioner",
    "XnnpackPartitioner",
]
