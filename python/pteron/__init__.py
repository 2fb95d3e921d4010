"""pteron: PyTorch models on Arm devices.

    import pteron
    ep = pteron.export(model, (x,))
    program = pteron.to_edge_transform_and_lower(ep)
    program.save("model.pte")
    outputs = pteron.load("model.pte").forward(x)
"""

from pteron.delegation import DelegationInfo, get_delegation_info
from pteron.lowering import CompileError, LoweredProgram, export, to_edge_transform_and_lower
from pteron.partitioners import Partitioner, VgfPartitioner, VulkanPartitioner, XnnpackPartitioner
from pteron.runtime import Method, Program, load

__all__ = [
    "CompileError",
    "DelegationInfo",
    "LoweredProgram",
    "Method",
    "Partitioner",
    "Program",
    "export",
    "get_delegation_info",
    "load",
    "to_edge_transform_and_lower",
    "VgfPartitioner",
    "VulkanPartitioner",
    "XnnpackPartitioner",
]
