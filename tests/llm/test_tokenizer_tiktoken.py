"""tiktoken files (Llama 3's tokenizer.model format; runtime/llm/tokenizer_tiktoken.cpp): a small
one made here (make_tokenizers.train_tiktoken) encodes and decodes exactly as the tiktoken package
does with Llama 3's split regex and special tokens, on ASCII, multi-byte UTF-8, emoji, whitespace
runs, special tokens, the empty string and every assigned code point; it is told apart from the
other formats by its bytes through pteron.llm.Tokenizer, pteron.llm.generate and `pteron generate
--tokenizer`; corrupt or truncated files are refused in one line.
"""

import base64
import functools
import random
import re

import pytest
import torch

import pteron
from llm_cli import assert_one_line_error, cli, generate_json
from make_tokenizers import LLAMA3_REGEX, LLAMA3_TIKTOKEN_SPECIALS, train_tiktoken
from tokenizer_strings import every_code_point, random_strings

RANKS = 300  # the file's tokens (256 bytes and the merges); 256 special tokens follow
CACHE = 64


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return train_tiktoken(tmp_path_factory.mktemp("tiktoken") / "tokenizer.model", RANKS + 4)


@functools.cache
def reference(path):
    """tiktoken's Encoding for a Llama 3 tokenizer.model, as Meta's and ExecuTorch's Python
    tokenizers build it."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path))
    specials = {t: len(ranks) + i for i, t in enumerate(LLAMA3_TIKTOKEN_SPECIALS)}
    return tiktoken.Encoding(name=path.stem, pat_str=LLAMA3_REGEX, mergeable_ranks=ranks, special_tokens=specials)


def encode_reference(path, text):
    return reference(path).encode(text, allowed_special="all")


def test_encodes_as_tiktoken(model):
    ours = pteron.llm.Tokenizer(model)
    ref = reference(model)
    assert ours.format == "tiktoken BPE (Llama 3 split regex and special tokens)"
    assert ours.vocab_size == ref.n_vocab == RANKS + 256
    strings = random_strings(11, 400) + ["", " " * 5000, "a" * 3000, "\n \n" * 300, "".join(LLAMA3_TIKTOKEN_SPECIALS)]
    for s in strings:
        assert ours.encode(s) == encode_reference(model, s), repr(s[:80])
    # BOS: <|begin_of_text|>, the first id after the file's ranks.
    assert ours.bos_id == ref.encode_single_token("<|begin_of_text|>") == RANKS
    assert ours.encode("Hello", add_bos=True) == [RANKS, *encode_reference(model, "Hello")]
    want_eos = [ref.encode_single_token(t) for t in ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>")]
    assert ours.eos_ids == want_eos


def test_every_code_point_encodes_as_tiktoken(model):
    ours = pteron.llm.Tokenizer(model)
    for s in every_code_point():
        assert ours.encode(s) == encode_reference(model, s), f"first code point U+{ord(s[1]):04X}"


def test_decodes_as_tiktoken(model):
    ours = pteron.llm.Tokenizer(model)
    ref = reference(model)
    rng = random.Random(12)
    sequences = [encode_reference(model, s) for s in random_strings(13, 100)]
    # Random ids split characters and make invalid UTF-8: one U+FFFD per maximal subpart, as
    # Python's bytes.decode(errors="replace") that tiktoken's decode uses.
    sequences += [[rng.randrange(ours.vocab_size) for _ in range(rng.randint(1, 30))] for _ in range(400)]
    for ids in sequences:
        assert ours.decode(ids) == ref.decode(ids), ids
        assert b"".join(ours.token_bytes(i) for i in ids) == ref.decode_bytes(ids)
        # Streamed, special tokens left out.
        plain = [i for i in ids if i < RANKS]
        stream = ours.text_stream()
        assert "".join(stream.push(i) for i in ids) + stream.finish() == ref.decode(plain)
        assert ours.decode(ids, skip_special_tokens=True) == ref.decode(plain)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A tiny random Llama whose logits cover the tokenizer's ids."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(1)
    config = LlamaConfig(
        vocab_size=RANKS + 256,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=CACHE,
    )
    llama = LlamaForCausalLM(config).eval()
    llama.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=CACHE, cache_config={"batch_size": 1, "max_cache_len": CACHE}
    )
    path = tmp_path_factory.mktemp("llm-tiktoken") / "llama.pte"
    pteron.to_edge_transform_and_lower(convert_and_export_with_cache(llama)).save(path)
    return path


PROMPT = "<|start_header_id|>user<|end_header_id|>\n\nGrüße 🙂, it's 2024!<|eot_id|>"


def test_generate_with_a_tiktoken_file(program, model):
    want_prompt = [RANKS, *encode_reference(model, PROMPT)]
    got = generate_json(program, "--tokenizer", model, "--prompt", PROMPT, "-n", 10)
    assert got["prompt_ids"] == want_prompt
    eos = ",".join(map(str, pteron.llm.Tokenizer(model).eos_ids))
    by_ids = generate_json(program, "--prompt-ids", ",".join(map(str, want_prompt)), "-n", 10, "--eos-ids", eos)
    assert got["tokens"] == by_ids["tokens"] and got["stop_reason"] == by_ids["stop_reason"]
    assert got["text"] == reference(model).decode([t for t in got["tokens"] if t < RANKS])
    assert pteron.llm.generate(program, prompt=PROMPT, tokenizer=model, max_new_tokens=10) == got["text"]
    stream = pteron.llm.stream(program, PROMPT, 10, tokenizer=str(model))
    assert "".join(stream) == got["text"] and stream.prompt_ids == want_prompt


def test_bad_tiktoken_files_are_one_line(program, model, tmp_path):
    def bad(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return path

    good = model.read_bytes()
    lines = good.splitlines(keepends=True)
    swapped = [*lines]
    swapped[5] = lines[6].split(b" ")[0] + b" 5\n"  # line 7's token again, with rank 5
    without_byte = [line for line in lines if base64.b64decode(line.split()[0]) != b"A"]
    renumbered = b"".join(line.split()[0] + b" %d\n" % r for r, line in enumerate(without_byte))
    cut = sum(map(len, lines[:100])) + lines[100].index(b" ") + 1  # line 101 ends after its token
    cases = [
        (bad("truncated.model", good[:cut]), ["line 101 is not a base64 token and a rank (truncated or corrupt?)"]),
        (bad("no-rank.model", good + b"QUJD\n"), [f"line {len(lines) + 1} is not a base64 token and a rank"]),
        (bad("bad-base64.model", good + b"QUJ* 300\n"), [f"line {len(lines) + 1}: the token is not base64"]),
        (bad("padding.model", good + b"QU=D 300\n"), ["the token is not base64"]),
        (bad("big-rank.model", good + b"QUJD 99999999\n"), ["the rank is not an integer from 0 to 4194303"]),
        (bad("duplicate.model", b"".join(swapped)), ["line 7: the token of rank 6 is already in the file with rank 5"]),
        (bad("gap.model", good + b"QUJDRA== 301\n"), ["rank 301 is out of range", "must be 0 to 300"]),
        (bad("no-byte.model", renumbered), ["byte 0x41 has no token"]),
        (bad("crlf-junk.model", good.replace(b"\n", b"\r\n", 3) + b"\x00\x01"), ["is not a base64 token and a rank"]),
    ]
    for path, fragments in cases:
        assert_one_line_error(cli("generate", program, "--tokenizer", path, "--prompt", "hi"), str(path), *fragments)
        with pytest.raises(ValueError, match=re.escape(fragments[0])):
            pteron.llm.Tokenizer(path)
    # Windows line ends read as tiktoken reads them.
    crlf = bad("crlf.model", good.replace(b"\n", b"\r\n"))
    assert pteron.llm.Tokenizer(crlf).encode("Hello world") == encode_reference(model, "Hello world")
