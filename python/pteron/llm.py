"""Text generation with a stateful decoder program: token ids in and out, or text with a
tokenizer.

    ids = pteron.llm.generate("llama.pte", [1, 15043, 29892], max_new_tokens=32)
    for token in pteron.llm.stream(program, prompt_ids, temperature=0.8, top_k=40, seed=1):
        ...
    text = pteron.llm.generate("llama.pte", prompt="Once upon a time", tokenizer="tokenizer.json")
    for piece in pteron.llm.stream("llama.pte", prompt="Once", tokenizer="tokenizer.model"):
        print(piece, end="", flush=True)

The program is what transformers' `convert_and_export_with_cache` exports and
`pteron.to_edge_transform_and_lower` compiles: forward(input_ids int64 [1, T], cache_position
int64 [T]) -> logits, with the KV cache as mutable buffers; or what ExecuTorch's own
export_llama writes: forward(tokens int64 [1, T], input_pos int64 [1]), the start position
(runtime/README.md, Generation). The prompt is prefilled in chunks of
the program's T (one token at a time for T = 1), then one token is decoded per call, in C++
(runtime/llm). Greedy when temperature is 0; otherwise softmax(logits / temperature) over the
top_k tokens, then the smallest set reaching top_p, drawn with a seeded splitmix64 (one seed,
one sequence). Generation stops after an id in eos_ids, after max_new_tokens, or when the cache
is full. Bad input (a prompt longer than the cache, more new tokens than it holds, a program
that is no decoder) raises RuntimeError or ValueError with one line.

A tokenizer (a path or a pteron.llm.Tokenizer: a Hugging Face tokenizer.json with a byte-level
BPE model, a SentencePiece .model, or a tiktoken file such as Llama 3's tokenizer.model, told
apart by their bytes) encodes `prompt` in C++
(runtime/llm/tokenizer.h), with a BOS token first unless add_bos=False (the program's
get_bos_id, else the tokenizer's); then the stream yields
the generated text as it comes (a character split over tokens once it is complete; special
tokens left out) and generate() returns it. eos_ids default to the program's get_eos_ids (or get_eos_id)
method, else the tokenizer's end-of-text tokens (ExecuTorch's runner's order). A bad tokenizer
file, or one with more tokens than the program's logits, raises ValueError with one line.
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


class Tokenizer:
    """A tokenizer file: `encode(text, add_bos=False)` -> ids (the reference library's
    encode(text, add_special_tokens=False), then BOS first when asked and defined),
    `decode(ids, skip_special_tokens=False)` -> text (the reference's decode), `token_bytes(id)`,
    `bos_id` (None when the file has none), `eos_ids`, `vocab_size`, `format`."""

    def __init__(self, path: str | os.PathLike):
        self._native = pteron_native.Tokenizer(os.fspath(path))
        self.path = os.fspath(path)

    def encode(self, text: str, add_bos: bool = False) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return self._native.encode(text, add_bos)

    def decode(self, ids: Sequence[int] | Any, skip_special_tokens: bool = False) -> str:
        return self._native.decode(_token_ids(ids), skip_special_tokens)

    def token_bytes(self, id: int) -> bytes:
        return self._native.token_bytes(int(id))

    def text_stream(self) -> Any:
        """A native TextStream: push(id) -> the text that token completes, finish() -> the rest."""
        return pteron_native.TextStream(self._native)

    @property
    def bos_id(self) -> int | None:
        return self._native.bos_id

    @property
    def eos_ids(self) -> list[int]:
        return self._native.eos_ids

    @property
    def vocab_size(self) -> int:
        return self._native.vocab_size

    @property
    def format(self) -> str:
        return self._native.format


def _tokenizer(tokenizer: Any) -> Tokenizer:
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if isinstance(tokenizer, (str, os.PathLike)):
        return Tokenizer(tokenizer)
    raise TypeError(f"tokenizer must be a path or a pteron.llm.Tokenizer, not {type(tokenizer).__name__}")


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
        """Positions in the program's KV cache (its get_max_context_len, else its get_max_seq_len,
        else the cache's size)."""
        return self._native.max_seq_len


class TextStream(Stream):
    """A Stream that yields the generated text in pieces as the tokens come (never an empty
    piece); `text` holds what it yielded so far, `tokens` the ids and `prompt_ids` the encoded
    prompt."""

    def __init__(self, native, threads: int | None, tokenizer: Tokenizer, prompt_ids: list[int]):
        super().__init__(native, threads)
        self._text = tokenizer.text_stream()
        self._finished = False
        self.text = ""
        self.prompt_ids = prompt_ids

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        while not self._finished:
            try:
                piece = self._text.push(Stream.__next__(self))
            except StopIteration:
                self._finished = True
                piece = self._text.finish()
            if piece:
                self.text += piece
                return piece
        raise StopIteration


def stream(
    program: Any,
    prompt_ids: Sequence[int] | Any = None,
    max_new_tokens: int | None = None,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    eos_ids: Iterable[int] | None = None,
    method: str = "forward",
    threads: int | None = None,
    *,
    prompt: str | None = None,
    tokenizer: Any = None,
    add_bos: bool = True,
) -> Stream:
    """Prefills the prompt now and returns a Stream of the new token ids, or with a `tokenizer`
    a TextStream of the new text. The prompt: `prompt_ids`, or the text `prompt` (a str given
    as prompt_ids is taken as `prompt`), encoded by `tokenizer`. `max_new_tokens` None
    generates until an EOS id or the cache is full. `program`: a .pte path, bytes, a
    pteron.Program or a LoweredProgram; `threads` as pteron.load's."""
    if isinstance(prompt_ids, str):
        prompt_ids, prompt = None, prompt_ids if prompt is None else prompt
    if prompt is not None and prompt_ids is not None:
        raise ValueError("give the prompt as prompt_ids or as text (prompt=), not both")
    if prompt is None and prompt_ids is None:
        raise ValueError("give the prompt: prompt_ids, or prompt= text with a tokenizer")
    if prompt is not None and tokenizer is None:
        raise ValueError("prompt= text needs a tokenizer (a tokenizer.json, SentencePiece .model or tiktoken file path)")
    tok = _tokenizer(tokenizer) if tokenizer is not None else None
    native, loaded_threads = _native_program(program)
    if threads is not None:
        _check_threads(threads)
    else:
        threads = loaded_threads
    if max_new_tokens is not None and (not isinstance(max_new_tokens, int) or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens must be an int >= 1 (None: until EOS or the cache is full), not {max_new_tokens!r}")
    ids = tok.encode(prompt, False) if prompt is not None else _token_ids(prompt_ids)
    with _threads(threads):  # delegates take their thread pool at load
        generator = native.generator(method)
        if prompt is not None and add_bos:  # the program's get_bos_id, else the tokenizer's
            bos = generator.program_bos_id if generator.program_bos_id is not None else tok.bos_id
            ids = ids if bos is None else [bos, *ids]
        if prompt is not None and not ids:
            raise ValueError("the prompt is empty (it encodes to no tokens)")
        if eos_ids is None:  # as ExecuTorch's runner: the program's get_eos_ids, else the tokenizer's
            eos_ids = generator.program_eos_ids
            if eos_ids is None:
                eos_ids = tok.eos_ids if tok is not None else ()
        if tok is not None:
            tok._native.check_fits(generator.vocab_size)
        eos = [int(e) for e in eos_ids]
        generator.start(ids, max_new_tokens or 0, float(temperature), int(top_k), float(top_p), int(seed), eos)
    if tok is not None:
        return TextStream(generator, threads, tok, ids)
    return Stream(generator, threads)


def generate(
    program: Any, prompt_ids: Sequence[int] | Any = None, max_new_tokens: int | None = None, **options: Any
) -> list[int] | str:
    """The new token ids (not the prompt), or with a `tokenizer` the new text, as stream()
    generates them; options as stream's."""
    s = stream(program, prompt_ids, max_new_tokens, **options)
    if isinstance(s, TextStream):
        return "".join(s)
    return list(s)
