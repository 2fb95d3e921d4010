"""Writes the tokenizer seeds of `make fuzz` (tokenizer_fuzzer) next to this file: a small
byte-level BPE tokenizer.json (Llama 3 style: NFC, Split regex + ByteLevel, special tokens, a BOS
template, added tokens with lstrip / rstrip / single_word) and a small SentencePiece BPE .model
with byte fallback and identity normalization (no 200 KB NFKC table), both trained on a few
lines of text so the files stay small, and a tiktoken file (Llama 3's tokenizer.model format)
with the byte-level file's tokens as bytes. Run: python tests/fuzz/seeds/make_tokenizer_seeds.py
"""

import json
import os
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = [
    "Hello world, it's 2024! Grüße aus München, 日本語のテキスト 🙂",
    "def f(x):\n    return x * 2  # a comment\n",
    "  \t leading  and   trailing  spaces \r\n",
] * 20


def byte_level():
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFC()  # as Qwen 2's
    regex = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(regex), "isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|endoftext|>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TEXT, trainer)
    tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", 0)])
    tok.add_tokens([AddedToken("<mask>", lstrip=True, rstrip=True, single_word=True), AddedToken("café", normalized=False)])
    config = json.loads(tok.to_str())
    with open(os.path.join(HERE, "tokenizer-byte-level.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, separators=(",", ":"))


def sentencepiece():
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as folder:
        text = os.path.join(folder, "text.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n".join(TEXT))
        prefix = os.path.join(folder, "seed")
        spm.SentencePieceTrainer.train(
            input=text, model_prefix=prefix, vocab_size=340, model_type="bpe", byte_fallback=True,
            normalization_rule_name="identity", user_defined_symbols=["<sep>"], minloglevel=2,
        )  # fmt: skip
        with open(prefix + ".model", "rb") as f:
            data = f.read()
    with open(os.path.join(HERE, "tokenizer-sentencepiece.model"), "wb") as f:
        f.write(data)


def tiktoken():
    """tokenizer-byte-level.json's model tokens as a tiktoken file: base64 bytes and rank."""
    import base64
    import sys

    sys.path.insert(0, os.path.join(HERE, "..", "..", "llm"))
    from make_tokenizers import byte_level_alphabet

    with open(os.path.join(HERE, "tokenizer-byte-level.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    byte_of = {c: b for b, c in enumerate(byte_level_alphabet())}
    tokens = [bytes(byte_of[c] for c in t) for t, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if not t.startswith("<|")]
    with open(os.path.join(HERE, "tokenizer-tiktoken.model"), "wb") as f:
        f.write(b"".join(base64.b64encode(t) + b" %d\n" % rank for rank, t in enumerate(tokens)))


if __name__ == "__main__":
    byte_level()
    sentencepiece()
    tiktoken()
