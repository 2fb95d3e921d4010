"""Calling a program with the model's own arguments. torch.export flattens a model's nested
inputs (lists, tuples and dicts of tensors) into the program's flat list of tensors and drops
the constant ones (a string, a flag the graph specialised on); `InputLayout` does the same to a
call's arguments, from the exported program."""

from __future__ import annotations

from typing import Any


class InputLayout:
    def __init__(self, in_spec: Any, num_arguments: int, constants: dict[int, Any]):
        self._in_spec = in_spec  # torch's TreeSpec of (args, kwargs)
        self._num_arguments = num_arguments  # flattened arguments, constants included
        # By flattened position: the constant export specialised on (not a program input).
        self._constants = constants

    @classmethod
    def of(cls, exported_program: Any) -> "InputLayout":
        from torch.export.graph_signature import ConstantArgument, InputKind

        user = [s for s in exported_program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
        constants = {i: s.arg.value for i, s in enumerate(user) if isinstance(s.arg, ConstantArgument)}
        return cls(exported_program.call_spec.in_spec, len(user), constants)

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


def is_container(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict))


def _describe(spec: Any) -> str:
    """A TreeSpec of (args, kwargs) in one line: (list[2], tensor), {'mask': tensor}."""

    def node(s: Any) -> str:
        if s.is_leaf():
            return "x"
        kind = getattr(s.type, "__name__", str(s.type))
        if s.type is dict:
            return "{" + ", ".join(f"{k!r}: {node(c)}" for k, c in zip(s.context, s.children_specs)) + "}"
        return f"{kind}[{', '.join(node(c) for c in s.children_specs)}]"

    args, kwargs = spec.children_specs
    text = "(" + ", ".join(node(c) for c in args.children_specs) + ")"
    return text + (" and keywords " + node(kwargs) if kwargs.num_children else "")
