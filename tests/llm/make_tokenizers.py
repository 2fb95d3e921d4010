"""Small tokenizers trained here, offline, for tests/llm/test_tokenizer*.py: byte-level BPE
tokenizer.json files in the Llama 3 and GPT-2 styles with Hugging Face `tokenizers`,
SentencePiece .model files (BPE with byte fallback, unigram) with `sentencepiece`, and tiktoken
files (Llama 3's tokenizer.model format) made from a trained byte-level BPE. The text is
what every machine has: Python's own standard library sources and license, Debian's license
texts, and a few sentences in other scripts written below.
"""

import base64
import glob
import json
import os
import sysconfig

# Llama 3's (and, but for its digit rule, Qwen 2's) pre-tokenizer regex.
LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Qwen 2's: digits one by one, and its files have an NFC normalizer.
QWEN2_REGEX = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")
LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>"]
# The special tokens a Llama 3 tiktoken file implies, ids from its token count on: pytorch-tokenizers'
# LLAMA_SPECIAL_TOKENS (what ExecuTorch's Llama runner uses; Meta's llama-models for 3.1+).
LLAMA3_TIKTOKEN_SPECIALS = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
    "<|eot_id|>", "<|python_tag|>", "<|image|>",
]  # fmt: skip
LLAMA3_TIKTOKEN_SPECIALS += [f"<|reserved_special_token_{i}|>" for i in range(2, 256 - len(LLAMA3_TIKTOKEN_SPECIALS) + 2)]

SENTENCES = [
    "Grüße aus München: naïve Café-Besitzer zahlen 12,50 € für Crème brûlée.",
    "日本語のテキストを分割します。東京は晴れ、気温は二十五度です。",
    "한국어 문장도 조금 넣습니다. 서울의 날씨는 맑습니다.",
    "Ελληνικά γράμματα: αλφάβητο, λέξεις και προτάσεις.",
    "Русский текст: съешь же ещё этих мягких французских булок.",
    "العربية تكتب من اليمين إلى اليسار ٣٤٥ رقم.",
    "emoji 🙂🚀👩‍💻🇫🇷 and symbols ½ Ⅻ ∑ ∞ → ✓",
]


def corpus():
    """Lines of offline text: stdlib sources, licenses and SENTENCES (repeated so their
    characters earn merges)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(stdlib, "*.py")))[:40] + [os.path.join(stdlib, "LICENSE.txt")]
    files += sorted(glob.glob("/usr/share/common-licenses/*"))[:8]
    lines = []
    for path in files:
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += f.read().splitlines()
    return lines + SENTENCES * 30


def train_byte_level(path, style, vocab_size):
    """A byte-level BPE tokenizer.json: style "llama3" (Split regex + ByteLevel without regex,
    ignore_merges, BOS by TemplateProcessing) or "gpt2" (ByteLevel with GPT-2's regex and a
    prefix space, added tokens with lstrip / rstrip / single_word, merges as "a b" strings)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if style == "llama3":
        tok = Tokenizer(models.BPE(ignore_merges=True))
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_REGEX), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        specials = LLAMA3_SPECIALS
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        specials = ["<|endoftext|>"]
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - (0 if style == "llama3" else 4),
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    if style == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)]
        )
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        tok.add_tokens(
            [
                AddedToken("<mask>", lstrip=True, rstrip=True, single_word=True),
                AddedToken("café", normalized=False),
                AddedToken(" ḿy tóken", normalized=True),
                AddedToken("[SEP]", special=True, rstrip=True),
            ]
        )
    tok.save(str(path))
    if style == "gpt2":  # the older merges format of GPT-2-era files
        config = json.loads(path.read_text())
        config["model"]["merges"] = [" ".join(m) for m in config["model"]["merges"]]
        path.write_text(json.dumps(config, ensure_ascii=False))
    return path


def byte_level_alphabet():
    """GPT-2's bytes_to_unicode: the character a byte-level vocabulary spells each byte with."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = iter(range(256, 512))
    return [chr(b) if b in printable else chr(next(extra)) for b in range(256)]


def train_tiktoken(path, vocab_size):
    """A tiktoken file as Llama 3 ships it ("base64-bytes rank" lines): the tokens of a Llama 3
    style byte-level BPE trained on corpus() as bytes, ranked in the order training made them,
    special tokens left out (a tiktoken file has none)."""
    tokenizer_json = train_byte_level(path.with_suffix(".json"), "llama3", vocab_size)
    vocab = json.loads(tokenizer_json.read_text())["model"]["vocab"]
    byte_of = {c: b for b, c in enumerate(byte_level_alphabet())}
    tokens = [bytes(byte_of[c] for c in token) for token, _ in sorted(vocab.items(), key=lambda kv: kv[1])
              if token not in LLAMA3_SPECIALS]  # fmt: skip
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % rank for rank, t in enumerate(tokens)))
    return path


def with_pre_tokenizer(source, path, pre_tokenizer, normalizer=None):
    """A copy of tokenizer.json `source` with another pre_tokenizer (and normalizer), JSON
    objects."""
    config = json.loads(source.read_text())
    config["pre_tokenizer"] = pre_tokenizer
    config["normalizer"] = normalizer
    path.write_text(json.dumps(config, ensure_ascii=False))
    return path


def train_sentencepiece(folder, name, model_type, vocab_size):
    """A SentencePiece .model: BPE with byte fallback, or unigram, with a user-defined symbol."""
    import sentencepiece as spm

    text = folder / f"{name}.txt"
    text.write_text("\n".join(line for line in corpus() if line.strip()), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(folder / name),
        vocab_size=vocab_size,
        model_type=model_type,
        byte_fallback=model_type == "bpe",
        character_coverage=0.98,  # rarer characters become byte pieces (BPE) or <unk>
        user_defined_symbols=["<sep>"],
        input_sentence_size=20000,
        shuffle_input_sentence=False,
        num_threads=1,
        minloglevel=2,
    )
    return folder / f"{name}.model"
