"""Strings the tokenizer tests encode with pteron and with the reference libraries: pieces that
reach the pre-tokenizer regexes' corners (scripts, emoji sequences, whitespace runs, case
folding, special tokens), random mixes of them and of corpus lines, and every assigned code point.
"""

import random
import unicodedata

from make_tokenizers import SENTENCES, corpus

PIECES = [
    "Hello", " world", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "日本語", "한국어", "Ελληνικά", "русский",
    "🙂", "🚀", "👩‍💻", "🇫🇷", "é", "e\u0301", "1234567", "3.14", "don't", "I'LL", "'s", "\u00a0", "\u2028", "\u3000",
    "\u0085", "\u180e", "\u200b", "!!!", "...", "<|begin_of_text|>", "<|end_of_text|>", "<|endoftext|>", "<|eot_id|>",
    "<mask>", " <mask> ", "a<mask>", "café", " ḿy tóken", "[SEP]", "[SEP]  x", "<sep>", "ſ", "\u212a", "ﬁ", "\x00",
    "\ufeff", "𝔘𝔫𝔦", "٣٤٥", "Ⅻ", "½", "A\u030a", "\u212b",
    "\u1100\u1161\u11a8", "\u0958", "q\u0307\u0323", "def f(x):\n    return x", "<|", "|>", "<", "▁", "Ġ", "\u2581x",
    "<|python_tag|>", "<|eom_id|>", "<|reserved_special_token_245|>", "<|reserved_special_token_246|>", "'ſ", "'LL",
    "x'Ve", " " * 40, "\n" * 9, "9" * 11,
]


def random_strings(seed, count):
    rng = random.Random(seed)
    lines = [line for line in corpus() if line.strip()]
    out = ["", " ", "a", *PIECES, *SENTENCES]
    for _ in range(count):
        out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    out += rng.sample(lines, count // 2)
    out.append("\n".join(rng.sample(lines, 40)))  # a long text
    return out


def every_code_point(per_string=48):
    """Strings covering every code point Python 3.11's Unicode 14 assigns (no surrogates), each in
    a few contexts (after a letter, a space, a digit, an apostrophe, doubled, before 's')."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"]
    out = []
    for i in range(0, len(cps), per_string):
        out.append("".join(f"x{chr(c)} {chr(c)}{chr(c)}1{chr(c)}'{chr(c)}s\t" for c in cps[i : i + per_string]))
    return out
