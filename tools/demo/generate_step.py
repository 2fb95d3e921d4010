"""`make demo` step 11: text generation with the zoo's tiny-stories (a small Llama trained here
on the Python standard library's docstrings, models/tiny_stories.py): export it with its
tokenizer, compile it, and let `pteron generate --tokenizer --prompt` print text and its speed."""

import sys
from pathlib import Path

PROMPT = "This module provides"


def generate_step(sh, work: Path) -> None:
    pt2, pte = work / "tiny-stories.pt2", work / "tiny-stories.pte"
    tokenizer = work / "tiny-stories.tokenizer.json"  # written by the zoo export beside the .pt2
    sh([sys.executable, "-m", "pteron.zoo", "export", "tiny-stories", "-o", str(pt2)])
    sh(["pteron", "compile", str(pt2), "-o", str(pte), "--backends", "optimized,portable"])
    # Seeded sampling (greedy decoding of a model this small soon repeats itself); the last line
    # is pteron generate's figures: prefill and decode tokens/s, time to first token, peak RSS.
    out = sh(["pteron", "generate", str(pte), "--tokenizer", str(tokenizer), "--prompt", PROMPT, "-n", "48",
              "--temperature", "0.7", "--top-k", "20", "--seed", "1", "--threads", "2"], show_output=False)
    text, figures = out.rstrip("\n").rsplit("\n", 1)
    print(f"  {PROMPT}{text}" if not text.startswith(PROMPT) else f"  {text}")
    print(f"  {figures}")
