"""From a PyTorch model to a pteron program, with ExecuTorch's names:

    ep = pteron.export(model, (x,))
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[])
    program.save("model.pte")

Compilation runs in-process in pteron's C++ compiler; the ExportedProgram crosses over as the
archive torch.export.save writes (weights are memory-mapped by the compiler, not copied).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Sequence

import pteron_native

from pteron.runtime import Program, load

CompileError = pteron_native.CompileError


def export(model, example_inputs: Sequence[Any], *, strict: bool = False, dynamic_shapes=None):
    """torch.export of `model` (eval mode), decomposed to core ATen."""
    import torch

    ep = torch.export.export(model.eval(), tuple(example_inputs), strict=strict, dynamic_shapes=dynamic_shapes)
    return ep.run_decompositions()


class LoweredProgram:
    """A compiled program: its bytes, the compiler's report, and a loader for the runtime."""

    def __init__(self, data: bytes, report: dict):
        self._data = data
        self.report = report

    def buffer(self) -> bytes:
        return self._data

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self._data)

    # ExecuTorch users call to_executorch() then write_to_file(); both work here too.
    def to_executorch(self) -> "LoweredProgram":
        return self

    def write_to_file(self, f) -> None:
        f.write(self._data)

    def load(self) -> Program:
        """The program on pteron's host runtime."""
        return load(self._data)


def _is_core_aten(ep) -> bool:
    import torch

    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, torch._ops.OpOverload) and target.namespace == "aten":
            if torch.Tag.core not in target.tags and not _is_view_or_copy(target):
                return False
    return True


def _is_view_or_copy(target) -> bool:
    # run_decompositions keeps these (they are not tagged core but every backend takes them).
    return target.__name__.split(".")[0] in {"view", "_to_copy", "clone", "alias", "lift_fresh_copy"}


def to_edge_transform_and_lower(
    program,
    partitioner: Sequence[Any] | None = None,
    *,
    target: str = "host",
    kernels: Sequence[str] | None = None,
) -> LoweredProgram:
    """Compiles an ExportedProgram (or a path to a .pt2) for `target`.

    `partitioner` is an ordered list of backend partitioners; an empty list (the default)
    compiles every op to the kernel libraries. `kernels` names the kernel libraries the program
    may use, most preferred first (e.g. ("optimized", "portable"): "optimized" also enables its
    fusions, such as attention into pteron::sdpa); None means the target's. Raises CompileError
    with a one-line message naming the node, op and source line at fault.
    """
    partitioners = list(partitioner or [])
    backends = list(kernels or [])
    if partitioners:
        names = ", ".join(type(p).__name__ for p in partitioners)
        raise CompileError(f"no backend partitioners are available in this build (asked for {names})")
    if isinstance(program, (str, os.PathLike)):
        data, report = pteron_native.compile_pt2(os.fspath(program), target, backends)
        return LoweredProgram(data, report)

    import torch

    ep = program if _is_core_aten(program) else program.run_decompositions()
    with tempfile.TemporaryDirectory(prefix="pteron-") as tmp:
        path = os.path.join(tmp, "model.pt2")
        torch.export.save(ep, path)
        data, report = pteron_native.compile_pt2(path, target, backends)
    return LoweredProgram(data, report)
