"""tiny-stories: a small Llama (4 layers, d 128, GQA, 1M parameters) and a 512-token byte-level
BPE tokenizer, both trained here, offline, in a few CPU minutes, so that `pteron generate`
prints readable English.

The text: the prose paragraphs of the Python standard library's docstrings (every machine with
Python has them; Debian's python3.11 gives about 4,900 paragraphs, 0.75 MB). Paragraphs with
code (indented lines, doctests) or few letters are left out. The paragraphs of one module in ten
(by a hash of the module's path) are held out for the perplexity test, so the held-out text is
from modules the model never saw.

Training is seeded and runs on 1 thread whatever the machine has (2 threads on a busy shared
machine spin and waste CPU time), so it gives the same weights on a machine every time. The
result (weights, tokenizer.json, the training log) is cached in
PTERON_ZOO_CACHE (default: $XDG_CACHE_HOME/pteron/zoo, shared by every checkout and install, as
pip's and ccache's caches are), keyed by a hash of this file and the Python and torch versions,
so the training runs once per machine.
"""

import ast
import functools
import glob
import hashlib
import json
import math
import os
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import torch

VOCAB = 512
CACHE_LEN = 256
CONFIG = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=384, num_hidden_layers=4,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=CACHE_LEN,
              rope_theta=10000.0, tie_word_embeddings=True, bos_token_id=0, eos_token_id=1)
BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"
# Llama 3's pre-tokenizer regex (as tests/llm/make_tokenizers.py).
SPLIT_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SEED = 0
THREADS = 1
SEQ = 64
BATCH = 32
STEPS = int(os.environ.get("PTERON_TINY_STORIES_STEPS", 1200))
LR = 8e-3
WARMUP = 20
HELD_OUT_BUCKET = 0  # modules whose path hash % 10 is this are held out


# ---- corpus --------------------------------------------------------------------------------

def _prose(doc: str) -> list[str]:
    """A docstring's prose paragraphs, each joined to one line."""
    out = []
    for para in doc.split("\n\n"):
        lines = para.splitlines()
        if not lines or any(line.startswith((" ", "\t", ">>>")) for line in lines):
            continue
        text = " ".join(line.strip() for line in lines)
        if len(text) < 60 or not text[0].isupper() or not text.endswith("."):
            continue
        if sum(c.isalpha() or c == " " for c in text) < 0.9 * len(text):
            continue
        out.append(text)
    return out


@functools.cache
def corpus() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(training paragraphs, held-out paragraphs) from the standard library's docstrings."""
    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(stdlib, "*.py")) + glob.glob(os.path.join(stdlib, "*", "*.py")))
    train, held_out = [], []
    for path in files:
        rel = os.path.relpath(path, stdlib)
        if rel.startswith(("test", "idlelib", "lib2to3", "site-packages", "dist-packages")):
            continue
        try:
            tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        bucket = int(hashlib.sha256(rel.encode()).hexdigest(), 16) % 10
        target = held_out if bucket == HELD_OUT_BUCKET else train
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    target += _prose(doc)
    return tuple(train), tuple(held_out)


# ---- tokenizer and model ---------------------------------------------------------------------

def train_tokenizer(paragraphs: list[str]):
    """A Llama-3-style byte-level BPE tokenizer.json (Split regex + ByteLevel, BOS first)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT_REGEX), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[BOS, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(paragraphs), trainer)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, 0)])
    assert tok.token_to_id(BOS) == 0 and tok.token_to_id(EOS) == 1
    return tok


def token_stream(tok, paragraphs: list[str]) -> torch.Tensor:
    """BOS paragraph EOS BOS paragraph EOS ...: one long int64 stream."""
    ids = []
    for enc in tok.encode_batch(list(paragraphs)):
        ids += enc.ids + [1]  # the template put BOS first
    return torch.tensor(ids, dtype=torch.long)


def new_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(**CONFIG))


def train(steps: int = STEPS, log=print):
    """(model, tokenizer, log dict) trained from scratch: seeded, THREADS threads."""
    threads = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            return _train(steps, log)
    finally:
        torch.set_num_threads(threads)


def _train(steps, log):
    t0, cpu0 = time.perf_counter(), time.process_time()
    paragraphs, _ = corpus()
    tok = train_tokenizer(paragraphs)
    data = token_stream(tok, paragraphs)
    model = new_model().train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.01)
    gen = torch.Generator().manual_seed(SEED)
    losses = []
    for step in range(steps):
        # Linear warmup, then cosine decay to 0.
        lr = LR * min(1.0, (step + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, len(data) - SEQ - 1, (BATCH,), generator=gen)
        batch = torch.stack([data[s : s + SEQ] for s in starts.tolist()])
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == steps - 1:
            log(f"tiny-stories: step {step}/{steps} loss {loss.item():.3f}")
    info = {"steps": steps, "train_tokens": len(data), "final_loss": sum(losses[-20:]) / min(20, len(losses)),
            "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0,
            "torch": torch.__version__, "python": sys.version.split()[0]}
    return model.eval(), tok, info


# ---- the cache -------------------------------------------------------------------------------

def cache_key() -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(f"{sys.version_info[:2]} {torch.__version__} {STEPS}".encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    root = os.environ.get("PTERON_ZOO_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pteron" / "zoo"


def trained(log=None) -> Path:
    """The folder holding model.pt, tokenizer.json and train.json, training first on a miss."""
    log = log or (lambda msg: print(f"[zoo] {msg}", file=sys.stderr, flush=True))
    folder = cache_dir() / f"tiny-stories-{cache_key()}"
    if (folder / "train.json").exists():
        return folder
    log(f"tiny-stories: training ({STEPS} steps, {THREADS} threads; cached in {folder})")
    model, tok, info = train(log=log)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Written into a temporary folder and renamed, so a killed run leaves no half cache.
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tiny-stories-"))
    torch.save(model.state_dict(), tmp / "model.pt")
    tok.save(str(tmp / "tokenizer.json"))
    (tmp / "train.json").write_text(json.dumps(info, indent=1))
    try:
        tmp.rename(folder)
    except OSError:  # another process cached it first
        pass
    log(f"tiny-stories: trained in {info['wall_s']:.0f} s ({info['cpu_s']:.0f} CPU s), loss {info['final_loss']:.2f}")
    return folder


def tokenizer_path() -> Path:
    return trained() / "tokenizer.json"


def tiny_stories():
    """The trained model as a KV-cache decoder (models/llm.py), cache CACHE_LEN."""
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    from .llm import example_inputs, static_cache

    folder = trained()
    model = new_model()
    model.load_state_dict(torch.load(folder / "model.pt", weights_only=True))
    lm = static_cache(model.eval(), CACHE_LEN)
    return TorchExportableModuleWithStaticCache(lm).eval(), example_inputs()
