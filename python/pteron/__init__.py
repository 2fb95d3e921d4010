"""pteron: PyTorch models on Arm devices.

    import pteron
    program = pteron.load("model.pte")
    outputs = program.forward(x)
"""

from pteron.runtime import Method, Program, load

__all__ = ["Method", "Program", "load"]
