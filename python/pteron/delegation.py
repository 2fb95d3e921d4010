"""What a program delegates, where, and why not: the delegation report of a .pte.

    info = pteron.get_delegation_info("model.pte")
    print(info.summary())          # the table `pteron inspect --delegation` prints
    info.flops["share"]["delegated"], info.portable_nodes[0]["reasons"]

The report is computed by the same C++ code as the CLI from the graph info the compiler stores
in the program (named data "pteron.graph_info"); programs compiled with strip_debug_info (or by
another tool) have none, and say so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pteron_native


@dataclass
class DelegationInfo:
    """The report's fields (see compiler/report/delegation_report.cpp for the format)."""

    has_graph_info: bool
    report: dict = field(default_factory=dict)  # the full JSON report
    graph_info: dict = field(default_factory=dict)  # the raw graph info it was computed from

    def _get(self, key: str, default: Any = None) -> Any:
        return self.report.get(key, default)

    @property
    def num_nodes(self) -> int:
        return self._get("nodes", 0)

    @property
    def delegated_nodes(self) -> int:
        return self._get("delegated_nodes", 0)

    @property
    def kernel_nodes(self) -> int:
        return self._get("kernel_nodes", 0)

    @property
    def ops(self) -> list[dict]:
        """Per op: delegated / not_delegated counts and where its nodes run."""
        return self._get("ops", [])

    @property
    def regions(self) -> dict:
        return self._get("regions", {"count": 0, "per_backend": {}, "list": []})

    @property
    def boundaries(self) -> dict:
        return self._get("boundaries", {"crossings": 0, "bytes": 0})

    @property
    def flops(self) -> dict:
        return self._get("flops", {})

    @property
    def portable_nodes(self) -> list[dict]:
        """Every node left on the portable kernels, with each partitioner's reason."""
        return self._get("portable_nodes", [])

    @property
    def library_nodes(self) -> list[dict]:
        """Nodes on another kernel library ("optimized") that a backend refused, with its reasons
        (e.g. "xnnpack: optimized kernel faster: SGEMM 128x768x3072 ...")."""
        return self._get("library_nodes", [])

    def summary(self) -> str:
        """A readable table, the same text as `pteron inspect --delegation`."""
        if not self.has_graph_info:
            return pteron_native.NO_GRAPH_INFO
        return pteron_native.delegation_summary(json.dumps(self.report))

    def graph(self) -> str:
        """The lowered graph with its delegate regions, as `pteron inspect --graph` prints it."""
        if not self.has_graph_info:
            return pteron_native.NO_GRAPH_INFO
        return pteron_native.graph_view(json.dumps(self.graph_info))

    def __str__(self) -> str:
        return self.summary()


def _native_program(program_or_path: Any):
    if isinstance(program_or_path, (str, os.PathLike)):
        return pteron_native.load(os.fspath(program_or_path))
    if isinstance(program_or_path, (bytes, bytearray, memoryview)):
        return pteron_native.load_bytes(bytes(program_or_path))
    if hasattr(program_or_path, "buffer"):  # LoweredProgram
        return pteron_native.load_bytes(program_or_path.buffer())
    if hasattr(program_or_path, "_native"):  # pteron.Program
        return program_or_path._native
    raise TypeError(f"expected a .pte path, bytes, pteron.Program or LoweredProgram, not "
                    f"{type(program_or_path).__name__}")


def get_delegation_info(program_or_path: Any) -> DelegationInfo:
    """The delegation report of a program (path, bytes, pteron.Program or LoweredProgram).
    Raises RuntimeError when the program or its graph info is malformed."""
    native = _native_program(program_or_path)
    data = native.named_data(pteron_native.GRAPH_INFO_KEY)
    if data is None:
        return DelegationInfo(has_graph_info=False)
    text = data.decode()
    report = json.loads(pteron_native.delegation_report(text))
    return DelegationInfo(has_graph_info=True, report=report, graph_info=json.loads(text))
