"""Text generation with a stateful decoder program, token ids in and out (no tokenizer).

    ids = pteron.llm.generate("llama.pte", [1, 15043, 29892], max_new_tokens=32)
    for token in pteron.llm.stream(program, prompt_ids, temperature=0.8, top_k=40, seed=1):
        ...

The program is what transformers' `convert_and_export_with_cache` exports and
`pteron.to_edge_transform_and_lower` compiles: forward(input_ids int64 [1, T], cache_position
int64 [T]) -> logits, with the KV cache as mutable buffers. The prompt is prefilled in chunks of
the program's T (one token at a time for T = 1), then one token is decoded per call, in C++
(runtime/llm). Greedy when temperature is 0; otherwise softmax(logits / temperature) over the
top_k tokens, then the smallest set reaching top_p, drawn with a seeded splitmix64 (one seed,
one sequence). Generation stops after an id in eos_ids, after max_new_tokens, or when the cache
is full. Bad input (a prompt longer than the cache, more new tokens than it holds, a program
that is no decoder) raises RuntimeError or ValueError with one line.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pteron_native

from pteron.runtime import Program, _check_threads, _threads


def _native_program(program: Any) -> tuple[Any, int | None]:
    """The native program behind a path, bytes, pteron.Program or LoweredProgram, and the
    thread count it was loaded with."""
    if isinstance(program, Program):
        return program._native, program._threads
    if hasattr(program, "buffer") and callable(program.buffer):  # LoweredProgram
        return pteron_native.load_bytes(program.buffer()), None
    if isinstance(program, (bytes, bytearray, memoryview)):
        return pteron_native.load_bytes(bytes(program)), None
    if isinstance(program, (str, os.PathLike)):
        return pteron_native.load(os.fspath(program)), None
    raise TypeError(f"expected a .pte path, bytes, pteron.Program or LoweredProgram, not {type(program).__name__}")


def _token_ids(prompt_ids: Any) -> list[int]:
    if type(prompt_ids).__module__.startswith("torch"):
        prompt_ids = prompt_ids.detach().cpu().numpy()
    ids = np.asarray(prompt_ids)
    if ids.ndim == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise ValueError(f"prompt_ids must be a list of int token ids (or [1, T]), not {ids.dtype} of shape {list(ids.shape)}")
    return [int(x) for x in ids]


class Stream:
    """Iterates over the new token ids as they are generated. `tokens` holds those returned
    so far; `figures` (a dict: prompt_tokens, generated_tokens, stop_reason, prefill_ms,
    time_to_first_token_ms, decode_ms, prefill_tokens_per_s, decode_tokens_per_s,
    peak_rss_bytes) is complete once the iteration ends."""

    def __init__(self, native, threads: int | None):
        self._native = native
        self._threads = threads
        self.tokens: list[int] = []

    def __iter__(self) -> Iterator[int]:
        return self

    def __next__(self) -> int:
        with _threads(self._threads):
            token = self._native.next()
        if token is None:
            raise StopIteration
        self.tokens.append(token)
        return token

    @property
    def figures(self) -> dict:
        return self._native.figures()

    @property
    def max_seq_len(self) -> int:
        """Positions in the program's KV cache (its get_max_seq_len, else the cache's size)."""
        return self._native.max_seq_len


def stream(
    program: Any,
    prompt_ids: Sequence[int] | Any,
    max_new_tokens: int | None = None,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    eos_ids: Iterable[int] = (),
    method: str = "forward",
    threads: int | None = None,
) -> Stream:
    """Prefills `prompt_ids` now and returns a Stream of the new token ids. `max_new_tokens`
    None generates until an EOS id or the cache is full. `program`: a .pte path, bytes, a
    pteron.Program or a LoweredProgram; `threads` as pteron.load's."""
    native, loaded_threads = _native_program(program)
    if threads is not None:
        _check_threads(threads)
    else:
        threads = loaded_threads
    if max_new_tokens is not None and (not isinstance(max_new_tokens, int) or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens must be an int >= 1 (None: until EOS or the cache is full), not {max_new_tokens!r}")
    prompt = _token_ids(prompt_ids)
    with _threads(threads):  # delegates take their thread pool at load
        generator = native.generator(method)
        eos = [int(e) for e in eos_ids]
        generator.start(prompt, max_new_tokens or 0, float(temperature), int(top_k), float(top_p), int(seed), eos)
    return Stream(generator, threads)


def generate(program: Any, prompt_ids: Sequence[int] | Any, max_new_tokens: int | None = None, **options: Any) -> list[int]:
    """The new token ids (not the prompt), as stream() generates them; options as stream's."""
    return list(stream(program, prompt_ids, max_new_tokens, **options))
