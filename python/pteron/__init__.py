"""pteron: PyTorch models on Arm devices.

    import pteron
    ep = pteron.export(model, (x,))
    program = pteron.to_edge_transform_and_lower(ep)
    program.save("model.pte")
    outputs = pteron.load("model.pte").forward(x)
    ids = pteron.llm.generate("llama.pte", [1, 2, 3], max_new_tokens=16)   # a KV-cache decoder
    pteron.set_num_threads(2)                       # or per program: pteron.load(path, threads=2)
"""

import pteron_native

from pteron import llm
from pteron.delegation import DelegationInfo, get_delegation_info
from pteron.lowering import CompileError, LoweredProgram, export, to_edge_transform_and_lower
from pteron.partitioners import Partitioner, VgfPartitioner, VulkanPartitioner, XnnpackPartitioner
from pteron.recurrent import keep_recurrent_layers
from pteron.runtime import Method, Program, get_num_threads, load, set_num_threads, set_spin_workers

__version__ = pteron_native.version()  # CMakeLists.txt's project() version, as `pteron --version`

__all__ = [
    "CompileError",
    "DelegationInfo",
    "LoweredProgram",
    "Method",
    "Partitioner",
    "Program",
    "export",
    "get_delegation_info",
    "get_num_threads",
    "keep_recurrent_layers",
    "llm",
    "load",
    "set_num_threads",
    "set_spin_workers",
    "to_edge_transform_and_lower",
    "VgfPartitioner",
    "VulkanPartitioner",
    "XnnpackPartitioner",
]
