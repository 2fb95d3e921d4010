"""Loading and running programs with pteron's C++ runtime."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Sequence

import numpy as np
import pteron_native

from pteron.inputs import InputLayout, is_container

# What set_num_threads chose (0: the runtime's default); programs loaded with threads=n switch
# to n around their own load and runs, then back to this.
_requested_threads = 0


def _require_thread_pool() -> None:
    if not hasattr(pteron_native, "set_num_threads"):
        raise RuntimeError("this pteron build has no thread pool (pthreadpool not found at build time)")


def _check_threads(threads: int) -> int:
    _require_thread_pool()
    if not isinstance(threads, int) or threads < 0:
        raise ValueError(f"threads must be an int >= 0 (0: the default), not {threads!r}")
    return threads


def set_num_threads(threads: int) -> None:
    """Threads for the optimized kernels and the XNNPACK delegate from now on, for the whole
    process (like torch.set_num_threads; the CLI's --threads). 0 returns to the default. A
    delegate takes its thread pool when its method loads."""
    global _requested_threads
    pteron_native.set_num_threads(_check_threads(threads))
    _requested_threads = threads


def set_spin_workers(spin: bool) -> None:
    """Whether the thread pool's workers spin for the next parallel call when one ends (the
    default, as PyTorch's OpenMP and ExecuTorch's XNNPACK do: back-to-back operators start
    within a microsecond) or go to sleep at once (gives the cores back at once, for machines
    whose other processes need them). The environment variable PTERON_SPIN_WORKERS=0 sets the
    same before the first call. A delegate takes the setting when its method loads."""
    _require_thread_pool()
    if not isinstance(spin, bool):
        raise ValueError(f"spin must be a bool, not {spin!r}")
    pteron_native.set_spin_workers(spin)


def get_num_threads() -> int:
    """The threads work started now would use (set_num_threads, else the default)."""
    return pteron_native.num_threads() if hasattr(pteron_native, "num_threads") else 1


@contextlib.contextmanager
def _threads(threads: int | None):
    if threads is None:
        yield
        return
    pteron_native.set_num_threads(threads)
    try:
        yield
    finally:
        pteron_native.set_num_threads(_requested_threads)


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch")


def _values(container: Any) -> list:
    return list(container.values()) if isinstance(container, dict) else list(container)


def _permuted_order(info: dict | None) -> tuple | None:
    """A program input's dim order where it is not the contiguous one, else None (no tensor)."""
    order = tuple(info["dim_order"]) if info else ()
    return order if order != tuple(range(len(order))) else None


def _laid_out_as(x: Any, dim_order: tuple) -> bool:
    """Whether array or tensor `x` is dense in `dim_order` (its last dim varying fastest). A dim
    of size 1 may have any stride and an empty value has no layout, as the runtime reads them."""
    if isinstance(x, np.ndarray):
        strides = [s // x.itemsize if s % x.itemsize == 0 else -1 for s in x.strides]
    else:
        strides = x.stride()
    if 0 in x.shape:
        return True
    expected = 1
    for d in reversed(dim_order):
        if x.shape[d] != 1 and strides[d] != expected:
            return False
        expected *= x.shape[d]
    return True


class Method:
    """One loaded method. Calling it runs the program on the host runtime.

    Inputs are numpy arrays or torch tensors (passed without copying when the program does
    not plan them into its arena). An input laid out otherwise than the program's input (a
    transposed or sliced view, channels-last for a contiguous program, a broadcast) is copied
    into the program's layout first, as eager accepts any strides; an input the model writes
    into is then written back into the caller's view. Read-only arrays (np.asarray of an image,
    np.frombuffer, a read-only memory map) are read in place. Outputs come back as torch tensors when any input was a
    torch tensor, numpy arrays otherwise; numpy has no bfloat16, so a bfloat16 output comes
    back to numpy callers as float32 (widened exactly) and to torch callers as bfloat16.
    """

    def __init__(self, native: pteron_native.Method, threads: int | None = None):
        self._native = native
        self._threads = threads
        self._output_dtypes = None
        self._input_dim_orders = None
        self._written = None

    def __call__(self, *inputs: Any) -> list:
        return self.execute(inputs)

    def execute(self, inputs: Sequence[Any]) -> list:
        as_torch = any(_is_torch(x) for x in inputs)
        prepared = [self._prepare(i, x) for i, x in enumerate(inputs)]
        relaid = self._lay_out(prepared)
        self._check_writable(inputs)
        with _threads(self._threads):
            outputs = self._native.execute(prepared)
        for i, caller in relaid:
            if self._native.input_written(i):
                caller[...] = prepared[i]
        if not as_torch:
            return outputs
        import torch

        if self._output_dtypes is None:  # fixed per method
            self._output_dtypes = [o and o["dtype"] for o in self.meta["outputs"]]
        dtypes = self._output_dtypes
        return [
            (torch.from_numpy(o).to(torch.bfloat16) if dtype == "bfloat16" else torch.from_numpy(o))
            if isinstance(o, np.ndarray) else o
            for o, dtype in zip(outputs, dtypes)
        ]

    @staticmethod
    def _prepare(i: int, x: Any) -> Any:
        if is_container(x) and any(_is_torch(v) or isinstance(v, np.ndarray) for v in _values(x)):
            raise TypeError(
                f"an input is a {type(x).__name__} of tensors: a program takes its inputs flat, one "
                "tensor each (Program.forward also takes the model's own nested arguments where the "
                "program states how they flatten)"
            )
        if _is_torch(x):
            return x.detach() if x.requires_grad else x
        if isinstance(x, np.ndarray):
            return x
        array = np.asarray(x)
        if array.dtype == object:
            raise TypeError(f"input {i}: a {type(x).__name__} is not a tensor, an array or a number")
        return array

    def _check_writable(self, inputs: Sequence[Any]) -> None:
        """An input the model writes into must be a writable array: refused before the call
        changes anything (read-only arrays are otherwise passed without a copy, like any other)."""
        if self._written is None:  # fixed per method
            self._written = [i for i in range(len(self.meta["inputs"])) if self._native.input_written(i)]
        for i in self._written:
            x = inputs[i] if i < len(inputs) else None
            if isinstance(x, np.ndarray) and not x.flags.writeable:
                raise ValueError(f"input {i}: the model writes into this input, and the array is read-only")

    def _lay_out(self, prepared: list) -> list[tuple[int, Any]]:
        """Copies each input not laid out as the program's input into that layout (in place in
        `prepared`), and each array no array protocol hands over (another byte order, an
        unaligned buffer); returns (index, the caller's value) of those copied."""
        if self._input_dim_orders is None:  # fixed per method
            self._input_dim_orders = [_permuted_order(t) for t in self.meta["inputs"]]
        relaid = []
        for i, (x, order) in enumerate(zip(prepared, self._input_dim_orders)):
            if not isinstance(x, np.ndarray) and not hasattr(x, "is_contiguous"):
                continue  # not an array or tensor (torch.Size...): the runtime names it
            if isinstance(x, np.ndarray) and not (x.dtype.isnative and x.flags.aligned):
                # Another byte order or an unaligned buffer: no array protocol hands it over.
                prepared[i] = np.require(x, x.dtype.newbyteorder("="), ["C", "A"])  # 0-d stays
                if order is not None:
                    prepared[i] = np.ascontiguousarray(prepared[i].transpose(order)).transpose(
                        tuple(np.argsort(order)))
                relaid.append((i, x))
                continue
            if order is None:  # the common case, answered by the library's own flag
                if x.flags.c_contiguous if isinstance(x, np.ndarray) else x.is_contiguous():
                    continue
                order = tuple(range(x.ndim))
            elif x.ndim != len(order) or _laid_out_as(x, order):
                continue  # laid out as the program's input, or a rank the runtime refuses
            inverse = tuple(np.argsort(order))
            if isinstance(x, np.ndarray):
                prepared[i] = np.ascontiguousarray(x.transpose(order)).transpose(inverse)
            else:
                prepared[i] = x.permute(order).contiguous().permute(inverse)
            relaid.append((i, x))
        return relaid

    def input(self, i: int) -> np.ndarray | None:
        """Input `i` as the method holds it (a copy): after a call, the new value of an input
        the model writes into (`x.add_(1)`), which the call also copied into the caller's array
        or tensor, as eager changes it."""
        return self._native.input(i)

    def input_written(self, i: int) -> bool:
        """Whether the program writes a new value into input `i` (the model changes it in place)."""
        return self._native.input_written(i)

    @property
    def meta(self) -> dict:
        """Inputs, outputs, planned arena sizes and instruction count."""
        return self._native.meta()

    def instruction_names(self) -> list[str]:
        return self._native.instruction_names()

    def instruction_tensor_addresses(self, i: int) -> list[int | None]:
        """Per argument of instruction `i`, its tensor's data address (None for other values),
        to see which tensors share memory (e.g. a cache update computed in the cache itself)."""
        return self._native.instruction_tensor_addresses(i)

    def state_memory(self) -> list[tuple[int, int]]:
        """(data address, bytes) of each state tensor (mutable buffer)."""
        return self._native.state_memory()

    def reset(self) -> None:
        """Sets the method's state (mutable buffers such as a KV cache, kept across calls)
        back to its initial values, as right after loading."""
        self._native.reset_state()

    @property
    def num_state_tensors(self) -> int:
        """How many state tensors (mutable buffers) the method keeps between calls."""
        return self._native.num_state_tensors()


class Program:
    """A verified program. Methods load on first use and are cached."""

    def __init__(self, native: pteron_native.Program, threads: int | None = None):
        self._native = native
        self._methods: dict[str, Method] = {}
        self._threads = threads
        # How forward's nested and keyword arguments flatten, read from the program's stored
        # spec on the first call that passes such arguments.
        self._input_layout: InputLayout | None = None
        self._forward_meta: dict | None = None

    @property
    def method_names(self) -> list[str]:
        return list(self._native.method_names)

    def method_meta(self, name: str = "forward") -> dict:
        return self._native.method_meta(name)

    def metadata(self) -> dict:
        """The LLM metadata the program's constant methods carry, keyed by method name as
        ExecuTorch's constant_methods are ({"get_max_seq_len": 128, "get_eos_ids": [2],
        "use_kv_cache": True, ...}; empty without any). Raises RuntimeError naming a malformed
        one (a negative length, a float where an int belongs, a method taking inputs)."""
        return self._native.llm_metadata()

    def constant_cache(self) -> dict:
        """What the kernels derived from the program's constants and keep for its life, shared
        by its methods: weights packed into the SGEMM's panel layout on their first product.
        {"bytes": held, "blocks": how many, "derivations": how many were made so far}."""
        return self._native.constant_cache()

    def load_method(self, name: str = "forward") -> Method:
        if name not in self._methods:
            with _threads(self._threads):  # delegates take their thread pool at load
                self._methods[name] = Method(self._native.load_method(name), self._threads)
        return self._methods[name]

    def run_method(self, name: str, inputs: Sequence[Any]) -> list:
        return self.load_method(name).execute(inputs)

    def forward(self, *inputs: Any, **keywords: Any) -> list:
        """Runs forward on the program's inputs, or on the model's own arguments (nested lists,
        tuples and dicts, keywords), flattened as torch.export flattened them, as the program
        states (pteron's compiler and ExecuTorch's emitter store the model's input spec; a
        constant export specialised on, such as a mode string, must be the value it was
        exported with, and is not passed on)."""
        layout = self._forward_layout(inputs, keywords)
        if layout is not None:
            return self.run_method("forward", layout.flatten(inputs, keywords))
        if keywords:
            raise TypeError(f"keyword arguments {sorted(keywords)}: a loaded program takes its inputs in order")
        return self.run_method("forward", inputs)

    def _forward_layout(self, inputs: tuple, keywords: dict) -> InputLayout | None:
        """How forward's arguments flatten, read once the first call passes anything but the
        program's flat inputs (nested, keyword or constant arguments); None where the program
        does not say."""
        if self._input_layout is None:
            if self._forward_meta is None:  # fixed per program
                self._forward_meta = self.method_meta("forward")
            meta = self._forward_meta
            flat = not keywords and not any(map(is_container, inputs)) and len(inputs) == len(meta["inputs"])
            if flat or not meta["input_spec"]:
                return None
            constants = self._native.named_data("pteron.constant_arguments.forward")
            self._input_layout = InputLayout.stored(meta["input_spec"], len(meta["inputs"]), constants)
        return self._input_layout

    def reset(self) -> None:
        """Resets the state of every loaded method to its initial values. Methods of one
        program share their state (one KV cache), so this is one reset of that state."""
        for method in self._methods.values():
            method.reset()


def load(source: str | os.PathLike | bytes, threads: int | None = None) -> Program:
    """Loads a program from a .pte path (mmapped) or from bytes. Raises RuntimeError with the
    runtime's message when the program is malformed. `threads` (like the CLI's --threads) runs
    this program's methods on that many threads whatever set_num_threads says."""
    if threads is not None:
        _check_threads(threads)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Program(pteron_native.load_bytes(bytes(source)), threads)
    return Program(pteron_native.load(os.fspath(source)), threads)
