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

from pteron.partitioners import backend_names
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


def to_edge_transform_and_lower(program, partitioner: Sequence[Any] | None = None, *, target: str = "host") -> LoweredProgram:
    """Compiles an ExportedProgram (or a path to a .pt2) for `target`.

    `partitioner` is an ordered list of backend partitioners (pteron.XnnpackPartitioner());
    each claims the regions it can run, the rest goes to the target's kernels. An empty list
    (the default) compiles every op to the target's kernel libraries. Raises CompileError with a one-line
    message naming the node, op and source line at fault.
    """
    backends = backend_names(partitioner or [])
    if backends:
        missing = [b for b in backends if b not in pteron_native.available_backends()]
        if missing:
            raise CompileError(f"backend(s) {', '.join(missing)} not in this build "
                               f"(available: {', '.join(pteron_native.available_backends())})")
        backends.append("portable")  # whatever the partitioners leave runs on the kernels
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
