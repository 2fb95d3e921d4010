"""Calling a program with the model's own arguments. torch.export flattens a model's nested
inputs (lists, tuples and dicts of tensors) into the program's flat list of tensors and drops
the constant ones (a string, a flag the graph specialised on); `InputLayout` does the same to a
call's arguments, from what the program file stores (the compiler copies it from the export)."""

from __future__ import annotations

import json
from typing import Any


class InputLayout:
    def __init__(self, in_spec: Any, num_arguments: int, constants: dict[int, Any]):
        self._in_spec = in_spec  # torch's TreeSpec of (args, kwargs)
        self._num_arguments = num_arguments  # flattened arguments, constants included
        # By flattened position: the constant export specialised on (not a program input).
        self._constants = constants

    @classmethod
    def stored(cls, in_spec: str, num_inputs: int, constants: bytes | None = None) -> "InputLayout":
        """From what a program file stores: the spec (torch's treespec_dumps text of (args,
        kwargs), as ExecuTorch's emitter and pteron's compiler write it) and, from pteron's
        compiler, the arguments export specialised on (JSON [[position, {"as_bool": true}],
        ...]; they are leaves of the spec but no inputs). Raises TypeError in one line for a
        spec torch cannot read or that does not fit the program's inputs."""
        from torch.utils._pytree import treespec_loads

        try:
            spec = treespec_loads(in_spec)
            constant_values = {int(i): _constant_value(v) for i, v in json.loads(constants or b"[]")}
        except Exception as e:  # noqa: BLE001 - any failure to read is the file's
            raise TypeError(f"the program's stored input spec cannot be read ({e}); pass its inputs flat") from None
        if spec.num_leaves != num_inputs + len(constant_values) or any(
            not 0 <= i < spec.num_leaves for i in constant_values
        ):
            raise TypeError(
                f"the program's stored input spec has {spec.num_leaves} leaves for its {num_inputs} "
                f"inputs and {len(constant_values)} constant arguments; pass its inputs flat"
            )
        return cls(spec, spec.num_leaves, constant_values)

    @property
    def num_inputs(self) -> int:
        return self._num_arguments - len(self._constants)

    def flatten(self, args: tuple, kwargs: dict) -> list:
        """The program's inputs for a call with the model's arguments; the program's flat inputs
        pass as they are."""
        import torch.utils._pytree as pytree

        leaves, spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
        if spec == self._in_spec and len(leaves) == self._num_arguments:
            for i, value in self._constants.items():
                if type(leaves[i]) is not type(value) or leaves[i] != value:
                    raise TypeError(
                        f"argument {i} (flattened) is {leaves[i]!r}; the program was exported with "
                        f"{value!r} and is specialised on it (export again for another value)"
                    )
            return [leaf for i, leaf in enumerate(leaves) if i not in self._constants]
        if not kwargs and len(args) == self.num_inputs and not any(map(is_container, args)):
            return list(args)
        raise TypeError(
            f"the arguments do not match the model's: it takes {_describe(self._in_spec)} "
            f"({self.num_inputs} program inputs), got {_describe(spec)}"
        )


def _constant_value(value: dict) -> Any:
    """A constant argument as torch.export's schema writes it ({"as_int": 3})."""
    ((kind, v),) = value.items()
    if kind == "as_none":
        return None
    if kind in ("as_bool", "as_int", "as_float", "as_string") and type(v) is _TYPES[kind]:
        return v
    raise ValueError(f"constant argument {value} is of a kind pteron does not compare")


_TYPES = {"as_bool": bool, "as_int": int, "as_float": float, "as_string": str}


def is_container(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict))


def _describe(spec: Any) -> str:
    """A TreeSpec of (args, kwargs) in one line: (list[2], tensor), {'mask': tensor}."""

    def node(s: Any) -> str:
        if s.is_leaf():
            return "x"
        kind = getattr(s.type, "__name__", str(s.type))
        if s.type is dict:
            return "{" + ", ".join(f"{k!r}: {node(c)}" for k, c in zip(s.context, s.children())) + "}"
        return f"{kind}[{', '.join(node(c) for c in s.children())}]"

    args, kwargs = spec.children()
    text = "(" + ", ".join(node(c) for c in args.children()) + ")"
    return text + (" and keywords " + node(kwargs) if kwargs.num_children else "")
