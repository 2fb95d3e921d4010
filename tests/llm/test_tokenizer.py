"""Tokenizers (runtime/llm/tokenizer*.cpp, pteron.llm.Tokenizer, pteron generate --tokenizer):
small tokenizers trained here offline (make_tokenizers.py) encode and decode exactly as their
reference libraries do (Hugging Face tokenizers for tokenizer.json, sentencepiece for .model) on
many strings: ASCII, multi-byte UTF-8, emoji, whitespace runs, special tokens, the empty
string, every assigned code point; generated text streams a character split over tokens once it
is complete; `pteron generate --tokenizer --prompt` on a tiny random Llama gives the ids of the
reference encoding; bad files are refused in one line.
"""

import functools
import json
import random
import re

import pytest
import torch

import pteron
from make_tokenizers import (
    LLAMA3_REGEX,
    QWEN2_REGEX,
    byte_level_alphabet,
    train_byte_level,
    train_sentencepiece,
    with_pre_tokenizer,
)
from llm_cli import assert_one_line_error, cli, generate_json
from tokenizer_strings import every_code_point, random_strings

VOCAB = 400  # the tiny Llama's logits; the tokenizers have at most this many tokens
CACHE = 96

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tokenizers")
    f = {
        "llama3": train_byte_level(folder / "llama3.json", "llama3", VOCAB),
        "gpt2": train_byte_level(folder / "gpt2.json", "gpt2", 360),
        "too_big": train_byte_level(folder / "too-big.json", "llama3", VOCAB + 100),
        "spm_bpe": train_sentencepiece(folder, "spm-bpe", "bpe", 320),
        "spm_unigram": train_sentencepiece(folder, "spm-unigram", "unigram", 300),
    }
    # Other pre-tokenizers over the same vocabulary: behaviors, invert, Digits, a literal.
    split = {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated", "invert": False}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    variants = {
        "digits": [{"type": "Digits", "individual_digits": True}, split, byte_level],
        "contiguous": [{"type": "Digits", "individual_digits": False}, byte_level],
        "merged_prev": [{**split, "pattern": {"Regex": r"\s+"}, "behavior": "MergedWithPrevious"}, byte_level],
        "merged_next": [{**split, "pattern": {"Regex": r"\s"}, "behavior": "MergedWithNext"}, byte_level],
        "removed": [{**split, "pattern": {"String": " "}, "behavior": "Removed"}, byte_level],
        "invert": [{**split, "pattern": {"Regex": r"\p{L}+"}, "behavior": "Isolated", "invert": True}, byte_level],
        "empty_matches": [{**split, "pattern": {"Regex": r"\s*"}}, byte_level],
        "words": [{**split, "pattern": {"Regex": r"\w+|\W"}}, {**byte_level, "add_prefix_space": True}],
        "gpt2_regex": [{**byte_level, "add_prefix_space": True, "use_regex": True}],
    }
    for name, steps in variants.items():
        f[name] = with_pre_tokenizer(f["llama3"], folder / f"{name}.json", {"type": "Sequence", "pretokenizers": steps})
    qwen = {"type": "Sequence", "pretokenizers": [{**split, "pattern": {"Regex": QWEN2_REGEX}}, byte_level]}
    f["qwen2"] = with_pre_tokenizer(f["llama3"], folder / "qwen2.json", qwen, {"type": "NFC"})
    return f


@functools.cache
def hf(path):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


@functools.cache
def sp(path):
    import sentencepiece

    return sentencepiece.SentencePieceProcessor(model_file=str(path))


def assert_same_ids(name, ours, reference, strings):
    for s in strings:
        assert ours.encode(s) == reference(s), f"{name}: {s!r}"


BYTE_LEVEL = ["llama3", "gpt2", "qwen2", "digits", "contiguous", "merged_prev", "merged_next", "removed", "invert",
              "empty_matches", "words", "gpt2_regex"]  # fmt: skip


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_byte_level_bpe_encodes_as_hugging_face(files, name):
    ours = pteron.llm.Tokenizer(files[name])
    ref = hf(files[name])
    assert ours.vocab_size == ref.get_vocab_size() and ours.format.startswith("Hugging Face tokenizer.json")
    assert_same_ids(name, ours, lambda s: ref.encode(s, add_special_tokens=False).ids, random_strings(1, 300))
    # BOS as the reference adds it (Llama 3's template; none for GPT-2's).
    for s in ("Hello world", ""):
        assert ours.encode(s, add_bos=True) == ref.encode(s).ids


@pytest.mark.parametrize("name", ["llama3", "gpt2", "qwen2"])
def test_every_code_point_encodes_as_hugging_face(files, name):
    ours = pteron.llm.Tokenizer(files[name])
    strings = every_code_point()
    want = [e.ids for e in hf(files[name]).encode_batch(strings, add_special_tokens=False)]
    for s, ids in zip(strings, want):
        assert ours.encode(s) == ids, f"{name}: first code point U+{ord(s[1]):04X}"


@pytest.mark.parametrize("name", ["llama3", "gpt2"])
def test_byte_level_decodes_as_hugging_face(files, name):
    ours = pteron.llm.Tokenizer(files[name])
    ref = hf(files[name])
    rng = random.Random(2)
    sequences = [ref.encode(s, add_special_tokens=False).ids for s in random_strings(3, 100)]
    # Random ids: byte tokens in any order make invalid UTF-8 (one U+FFFD per maximal subpart).
    sequences += [[rng.randrange(ours.vocab_size) for _ in range(rng.randint(1, 30))] for _ in range(300)]
    for ids in sequences:
        for skip in (False, True):
            assert ours.decode(ids, skip) == ref.decode(ids, skip_special_tokens=skip), ids
        # Streamed one token at a time: the same text, special tokens left out.
        stream = ours.text_stream()
        assert "".join(stream.push(i) for i in ids) + stream.finish() == ref.decode(ids, skip_special_tokens=True)
    assert ours.bos_id == (ref.token_to_id("<|begin_of_text|>") if name == "llama3" else None)
    assert ours.eos_ids == ([ref.token_to_id(t) for t in ("<|end_of_text|>", "<|eot_id|>")] if name == "llama3"
                            else [ref.token_to_id("<|endoftext|>")])  # fmt: skip


def test_a_character_split_over_tokens_shows_once_complete(files):
    ours = pteron.llm.Tokenizer(files["llama3"])
    ref = hf(files["llama3"])
    # One token per byte (the byte-level alphabet), so 日 (3 bytes) and 🙂 (4) span tokens.
    table = {b: ref.token_to_id(c) for b, c in zip(range(256), byte_level_alphabet())}
    ids = [table[b] for b in "a日🙂".encode()]
    stream = ours.text_stream()
    assert [stream.push(i) for i in ids] == ["a", "", "", "日", "", "", "", "🙂"]
    assert stream.finish() == ""
    stream = ours.text_stream()
    assert [stream.push(i) for i in ids[:3]] == ["a", "", ""] and stream.finish() == "\ufffd"


@pytest.mark.parametrize("name", ["spm_bpe", "spm_unigram"])
def test_sentencepiece_encodes_and_decodes_as_sentencepiece(files, name):
    ours = pteron.llm.Tokenizer(files[name])
    ref = sp(files[name])
    assert ours.vocab_size == ref.get_piece_size() and ours.format == "SentencePiece model"
    assert ours.bos_id == ref.bos_id() and ours.eos_ids == [ref.eos_id()]
    strings = random_strings(4, 300)
    assert_same_ids(name, ours, ref.encode, strings)
    assert ours.encode("Hello", add_bos=True) == [ref.bos_id(), *ref.encode("Hello")]
    rng = random.Random(5)
    prefix = ref.encode("Hello")
    sequences = [ref.encode(s) for s in strings[:100]]
    sequences += [[rng.randrange(ours.vocab_size) for _ in range(rng.randint(1, 30))] for _ in range(300)]
    for ids in sequences:
        assert ours.decode(ids) == ref.decode(ids), ids
        # A continuation streams what the reference's decode adds after the prompt's text.
        stream = ours.text_stream()
        text = "".join(stream.push(i) for i in ids) + stream.finish()
        assert ref.decode(prefix) + text == ref.decode(prefix + ids), ids


# Generation through the CLI and Python on a tiny random Llama with VOCAB logits.


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=CACHE,
    )
    model = LlamaForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=CACHE, cache_config={"batch_size": 1, "max_cache_len": CACHE}
    )
    path = tmp_path_factory.mktemp("llm-tok") / "llama.pte"
    pteron.to_edge_transform_and_lower(convert_and_export_with_cache(model)).save(path)
    return path


PROMPT = "Grüße aus München 🙂 and some code: def f(x):"


def test_generate_with_a_tokenizer_json(program, files):
    ref = hf(files["llama3"])
    want_prompt = ref.encode(PROMPT).ids  # BOS by its template, then the text
    got = generate_json(program, "--tokenizer", files["llama3"], "--prompt", PROMPT, "-n", 12)
    assert got["prompt_ids"] == want_prompt and got["prompt_tokens"] == len(want_prompt)
    eos = ",".join(map(str, pteron.llm.Tokenizer(files["llama3"]).eos_ids))
    by_ids = generate_json(program, "--prompt-ids", ",".join(map(str, want_prompt)), "-n", 12, "--eos-ids", eos)
    assert got["tokens"] == by_ids["tokens"] and got["stop_reason"] == by_ids["stop_reason"]
    assert got["text"] == ref.decode(got["tokens"], skip_special_tokens=True)
    # --no-bos: the reference's encoding without special tokens.
    bare = generate_json(program, "--tokenizer", files["llama3"], "--prompt", PROMPT, "-n", 2, "--no-bos")
    assert bare["prompt_ids"] == ref.encode(PROMPT, add_special_tokens=False).ids
    # Streamed text, then the line of figures.
    run = cli("generate", program, "--tokenizer", files["llama3"], "--prompt", PROMPT, "-n", 12)
    assert run.returncode == 0, run.stderr
    text, figures = run.stdout.rstrip("\n").rsplit("\n", 1)
    assert text == got["text"] and f"{len(want_prompt)} prompt + " in figures
    # Python: the same text, streamed in pieces.
    assert pteron.llm.generate(program, prompt=PROMPT, tokenizer=files["llama3"], max_new_tokens=12) == got["text"]
    stream = pteron.llm.stream(program, PROMPT, 12, tokenizer=pteron.llm.Tokenizer(files["llama3"]))
    pieces = list(stream)
    assert "".join(pieces) == got["text"] == stream.text and all(pieces)
    assert stream.tokens == got["tokens"] and stream.prompt_ids == want_prompt


def test_generate_with_a_sentencepiece_model(program, files):
    ref = sp(files["spm_bpe"])
    got = generate_json(program, "--tokenizer", files["spm_bpe"], "--prompt", PROMPT, "-n", 16)
    want_prompt = [ref.bos_id(), *ref.encode(PROMPT)]
    assert got["prompt_ids"] == want_prompt
    by_ids = generate_json(program, "--prompt-ids", ",".join(map(str, want_prompt)), "-n", 16, "--eos-ids", ref.eos_id())
    assert got["tokens"] == by_ids["tokens"]
    assert ref.decode(want_prompt) + got["text"] == ref.decode(want_prompt + got["tokens"])
    # Ids in, text out: --tokenizer with --prompt-ids decodes too.
    same = generate_json(program, "--tokenizer", files["spm_bpe"], "--prompt-ids", ",".join(map(str, want_prompt)), "-n", 16)
    assert same["text"] == got["text"] and "prompt_ids" not in same
    assert pteron.llm.generate(program, prompt=PROMPT, tokenizer=files["spm_bpe"], max_new_tokens=16) == got["text"]


def test_bad_tokenizer_files_are_one_line(program, files, tmp_path):
    def bad(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return path

    llama3 = files["llama3"].read_bytes()
    spm = files["spm_bpe"].read_bytes()
    wordpiece = json.loads(llama3)
    wordpiece["model"] = {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a"}
    lowercase = {**json.loads(llama3), "normalizer": {"type": "Lowercase"}}
    bad_regex = json.loads(llama3)
    bad_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed"
    bad_merge = json.loads(llama3)
    bad_merge["model"]["merges"][3] = ["nope", "missing"]
    cases = [
        (bad("empty.json", b""), ["is empty, not a tokenizer"]),
        (bad("truncated.json", llama3[: len(llama3) // 2]), ["is not valid JSON", "unexpected end of input"]),
        (bad("truncated.model", spm[: len(spm) // 2]), ["is not a valid SentencePiece model"]),
        (bad("random.bin", bytes(random.Random(6).randrange(256) for _ in range(4096))), ["is not a tokenizer file"]),
        (bad("other.json", b'{"hello": 1}'), ['not a Hugging Face tokenizer.json (it has no "model")']),
        (bad("wordpiece.json", json.dumps(wordpiece).encode()), ["model type 'WordPiece' is not supported"]),
        (bad("lowercase.json", json.dumps(lowercase).encode()), ["normalizer 'Lowercase' is not supported"]),
        (bad("regex.json", json.dumps(bad_regex).encode()), ["pre_tokenizer Split regex does not compile"]),
        (bad("merge.json", json.dumps(bad_merge).encode()), ["model.merges[3] merges tokens that are not in the vocabulary"]),
        (tmp_path / "missing.json", ["cannot open tokenizer", "No such file"]),
        (files["too_big"], [f"has {VOCAB + 100} tokens but the program's logits have {VOCAB}", "not this model's tokenizer"]),
    ]
    for path, fragments in cases:
        assert_one_line_error(cli("generate", program, "--tokenizer", path, "--prompt", "hi"), str(path), *fragments)
        with pytest.raises(ValueError, match=re.escape(fragments[0])):
            pteron.llm.generate(program, prompt="hi", tokenizer=path)
    assert_one_line_error(cli("generate", program, "--prompt", "hi"), "--prompt needs --tokenizer")
    assert_one_line_error(
        cli("generate", program, "--tokenizer", files["llama3"], "--prompt", "hi", "--prompt-ids", "1"), "not both"
    )
    empty = cli("generate", program, "--tokenizer", files["spm_bpe"], "--prompt", "", "--no-bos")
    assert_one_line_error(empty, "--prompt is empty")
    with pytest.raises(ValueError, match="needs a tokenizer"):
        pteron.llm.generate(program, prompt="hi")
