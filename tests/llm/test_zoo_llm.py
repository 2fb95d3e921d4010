"""The zoo's KV-cache decoders (models/llm.py, models/tiny_stories.py) export, compile and
generate on pteron's runtime.

- llama-110m and opt-125m-kv at 2 of their 12 layers (their widths, heads, GQA and vocabularies;
  a full 12-layer strict export takes minutes on 2 busy cores): fp32 greedy generation equals
  Hugging Face's, token for token; OPT's logits match at every step.
- llama-1b: only its config is checked here (parameters counted on the meta device); exporting
  its 5 GB of float32 weights is not for `make test`.
- tiny-stories (trained here, cached): through `pteron generate --tokenizer` it prints words of
  its corpus; held-out perplexity computed from the program's logits is bounded; its llm-int8 and
  llm-8da4w programs stay near fp32 at every generation step and agree on the first greedy tokens.

The whole file: 74 s wall, 51 CPU s on this 2-core machine (load 3.5) with the trained model
cached; a cold cache adds its training, about 300 CPU s once per machine.
"""

import functools
import json
import math
import re
import subprocess

import pytest
import torch

import pteron
from pteron import zoo
from pteron_cli import pteron_cli

zoo.names()  # makes the repository's models package importable
import models  # noqa: E402
from models import llm, tiny_stories  # noqa: E402
from models.common import seeded  # noqa: E402

REDUCED_LAYERS = 2
REDUCED_CACHE = 48
PROMPT = [17, 3001, 42, 7, 911, 250, 31337 % 32000, 5, 64, 1234, 2, 77, 4000, 12, 9, 30000, 8, 6, 21, 300,
          19, 11, 10, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500]  # 34: two prefill chunks


def cli(*args):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=600)


def hf_greedy(lm, prompt, max_new_tokens, static_cache_len=None):
    from transformers import GenerationConfig

    extra = {}
    if static_cache_len:
        extra = dict(cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": static_cache_len})
    config = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, pad_token_id=0, eos_token_id=None, **extra)
    with torch.no_grad():
        out = lm.generate(torch.tensor([prompt]), generation_config=config)
    return out[0, len(prompt):].tolist()


def test_every_llm_entry_is_a_decoder_in_the_zoo_and_only_llama_1b_is_slow():
    llms = [e.name for e in models.ENTRIES if e.is_llm]
    assert llms == ["llama-110m", "llama-1b", "opt-125m-kv", "tiny-stories"]
    assert [e.name for e in models.ENTRIES if e.slow] == ["llama-1b"]


def _meta_params(fields, **overrides):
    from transformers import LlamaForCausalLM

    with torch.device("meta"):
        return sum(p.numel() for p in LlamaForCausalLM(llm.llama_config(fields, **overrides)).parameters())


def test_llama_configs_have_their_parameter_counts():
    # Counted on the meta device: no 5 GB of random weights.
    assert _meta_params(llm.LLAMA_1B) == llm.LLAMA_1B_PARAMS == 1_235_814_400
    assert _meta_params(llm.LLAMA_110M) == 107_170_560
    cfg = llm.llama_config(llm.LLAMA_1B)
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads) == (16, 2048, 32, 8)


def _compile(ep, path, **kwargs):
    pteron.to_edge_transform_and_lower(ep, **kwargs).save(path)
    return path


@pytest.fixture(scope="module")
def llama_reduced(tmp_path_factory):
    """llama-110m at REDUCED_LAYERS layers, exported as the zoo entry is (convert_and_export_with_cache, T dynamic)."""
    with seeded(0):
        module, inputs = llm.llama(llm.LLAMA_110M, REDUCED_CACHE, num_hidden_layers=REDUCED_LAYERS)
    pte = _compile(llm.export_hf(module, inputs), tmp_path_factory.mktemp("llama") / "llama-110m-2l.pte")
    return module.model, pte


def test_llama_110m_at_2_layers_greedy_matches_hugging_face(llama_reduced):
    lm, pte = llama_reduced
    n = 10
    want = hf_greedy(lm, PROMPT, n, static_cache_len=REDUCED_CACHE)
    run = cli("generate", pte, "--json", "--prompt-ids", ",".join(map(str, PROMPT)), "-n", n)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["tokens"] == want
    assert got["prefill_calls"] == 2 and got["max_seq_len"] == REDUCED_CACHE  # chunks of llm.PREFILL_CHUNK


@pytest.fixture(scope="module")
def opt_reduced(tmp_path_factory):
    from transformers import OPTConfig, OPTForCausalLM

    with seeded(0):
        lm = OPTForCausalLM(OPTConfig(attn_implementation="eager", num_hidden_layers=REDUCED_LAYERS)).eval()
    module = llm.OptWithStaticCache(lm, REDUCED_CACHE).eval()
    pte = _compile(llm.export_module(module, llm.example_inputs()), tmp_path_factory.mktemp("opt") / "opt-2l.pte")
    return lm, pte


def test_opt_125m_kv_at_2_layers_matches_hugging_face_step_by_step(opt_reduced):
    lm, pte = opt_reduced
    prompt = [p % 50272 for p in PROMPT]
    n = 8
    want = hf_greedy(lm, prompt, n)
    assert pteron.llm.generate(pte, prompt, max_new_tokens=n, eos_ids=[]) == want
    # The program's logits, prefilled in two chunks then token by token, against OPT's full
    # forward over the same sequence (no cache).
    seq = prompt + want
    with torch.no_grad():
        ref = lm(torch.tensor([seq]), use_cache=False).logits[0]
    method = pteron.load(pte).load_method()
    got = []
    for start, stop in [(0, 32), (32, len(prompt))] + [(i, i + 1) for i in range(len(prompt), len(seq))]:
        out = method(torch.tensor([seq[start:stop]]), torch.arange(start, stop))[0]
        got.append(torch.as_tensor(out)[0])
    got = torch.cat(got)
    torch.testing.assert_close(got, ref, rtol=0, atol=1e-4 * ref.abs().max().item())


# ---- tiny-stories ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stories(zoo_pt2, tmp_path_factory):
    """{"pt2", "tokenizer", "fp32", "llm-int8", "llm-8da4w"}: the zoo export and its programs."""
    pt2 = zoo_pt2("tiny-stories")
    folder = tmp_path_factory.mktemp("tiny-stories")
    paths = {"pt2": pt2, "tokenizer": zoo.tokenizer_path_for(pt2)}
    for name, quantize in (("fp32", None), ("llm-int8", "llm-int8"), ("llm-8da4w", "llm-8da4w")):
        paths[name] = folder / f"tiny-stories-{name}.pte"
        args = ["compile", pt2, "-o", paths[name]] + (["--quantize", quantize] if quantize else [])
        run = cli(*args)
        assert run.returncode == 0, run.stderr
    return paths


def test_tiny_stories_program_carries_every_metadata_method_executorchs_runner_reads(stories):
    # get_bos_id and get_eos_ids from the model's config (the .pt2's extra/constant_methods.json,
    # which pteron.zoo export writes); the rest derived from the graph by pteron compile.
    assert pteron.load(stories["fp32"]).metadata() == {
        "get_max_seq_len": llm.PREFILL_CHUNK, "get_max_context_len": tiny_stories.CACHE_LEN,
        "get_vocab_size": tiny_stories.VOCAB, "get_bos_id": tiny_stories.CONFIG["bos_token_id"],
        "get_eos_ids": [tiny_stories.CONFIG["eos_token_id"]], "use_kv_cache": True, "use_sdpa_with_kv_cache": False,
        "enable_dynamic_shape": True, "get_n_layers": tiny_stories.CONFIG["num_hidden_layers"],
        "get_n_kv_heads": tiny_stories.CONFIG["num_key_value_heads"],
        "get_head_dim": tiny_stories.CONFIG["hidden_size"] // tiny_stories.CONFIG["num_attention_heads"]}
    # pteron generate starts a text prompt with the program's BOS and prefills in chunks of
    # get_max_seq_len; a prompt longer than get_max_context_len is one line, exit 1.
    run = cli("generate", stories["fp32"], "--tokenizer", stories["tokenizer"], "--prompt", "Return the " * 20,
              "-n", 1, "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["prompt_ids"][0] == tiny_stories.CONFIG["bos_token_id"] and len(out["prompt_ids"]) > llm.PREFILL_CHUNK
    assert out["max_tokens_per_call"] == llm.PREFILL_CHUNK and out["max_seq_len"] == tiny_stories.CACHE_LEN
    assert out["prefill_calls"] == -(-len(out["prompt_ids"]) // llm.PREFILL_CHUNK)
    long = cli("generate", stories["fp32"], "--prompt-ids", ",".join(["5"] * (tiny_stories.CACHE_LEN + 1)))
    assert long.returncode == 1 and long.stderr.count("\n") == 1, long.stderr
    assert f"the prompt has {tiny_stories.CACHE_LEN + 1} tokens, more than the program's cache of " \
           f"{tiny_stories.CACHE_LEN} positions" in long.stderr


def test_tiny_stories_training_is_deterministic():
    # Three steps twice: the same tokenizer and bit-identical weights (the seeded, one-thread
    # training the cache relies on).
    runs = [tiny_stories.train(steps=3, log=lambda _msg: None) for _ in range(2)]
    (m1, t1, _), (m2, t2, _) = runs
    assert t1.to_str() == t2.to_str()
    for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert torch.equal(a, b), k
    assert not torch.equal(m1.state_dict()["model.norm.weight"], tiny_stories.new_model().state_dict()["model.norm.weight"])


@functools.cache
def corpus_words():
    train, _ = tiny_stories.corpus()
    return {w.lower() for p in train for w in re.findall(r"[A-Za-z]+", p)}


def test_tiny_stories_generates_readable_text_through_the_cli(stories):
    assert stories["tokenizer"].exists()
    # Three samples: the weights trained here depend on the machine's ISA (seeded, but torch's
    # kernels round differently on AVX2 and AVX-512), and one seed may end its text early.
    texts, words = [], []
    for seed in (1, 2, 3):
        run = cli("generate", stories["fp32"], "--tokenizer", stories["tokenizer"], "--prompt", "Return the",
                  "-n", 48, "--temperature", 0.7, "--top-k", 20, "--seed", seed, "--eos-ids", 0, "--json")
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert out["decode_tokens_per_s"] > 0
        # Stops at BOS only (id 0, what follows an end of text in training): a paragraph or more.
        texts.append(out["text"])
        words += re.findall(r"[A-Za-z]+", out["text"])
    assert len(words) >= 30, texts
    known = [w for w in words if w.lower() in corpus_words()]
    # Random weights give word pieces; the trained model gives the corpus's words (measured 0.89
    # on an AVX2 machine's weights).
    assert len(known) / len(words) >= 0.8, texts


def _nll_through_program(pte, paragraphs):
    """Mean negative log-likelihood (nats per token) of each paragraph's tokens after BOS, from
    the program's logits, prefilled in chunks of the program's T from an empty cache."""
    program = pteron.load(pte)
    method = program.load_method()
    total, count = 0.0, 0
    for ids in paragraphs:
        method.reset()
        logits = []
        for start in range(0, len(ids) - 1, llm.PREFILL_CHUNK):
            chunk = ids[start:min(start + llm.PREFILL_CHUNK, len(ids) - 1)]
            out = method(torch.tensor([chunk]), torch.arange(start, start + len(chunk)))[0]
            logits.append(torch.as_tensor(out)[0])
        logits = torch.cat(logits)
        total += torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="sum").item()
        count += len(ids) - 1
    return total / count


@functools.cache
def held_out_ids():
    from tokenizers import Tokenizer

    _, held_out = tiny_stories.corpus()
    tok = Tokenizer.from_file(str(zoo.tokenizer("tiny-stories")))
    paragraphs = [tok.encode(p).ids + [1] for p in held_out[::12]]  # BOS ... EOS; every 12th: ~3k tokens
    return [p[: tiny_stories.CACHE_LEN] for p in paragraphs]


# Measured 18.2 (untrained 525, uniform 512) for the 1200-step model.
PERPLEXITY_BOUND = 25.0


def test_tiny_stories_held_out_perplexity_through_the_runtime(stories):
    ids = held_out_ids()
    ppl = math.exp(_nll_through_program(stories["fp32"], ids))
    with torch.no_grad(), seeded(0):
        untrained = tiny_stories.new_model().eval()
        nll = [torch.nn.functional.cross_entropy(untrained(torch.tensor([p])).logits[0, :-1], torch.tensor(p[1:]),
                                                 reduction="sum").item() for p in ids]
    untrained_ppl = math.exp(sum(nll) / sum(len(p) - 1 for p in ids))
    print(f"held-out perplexity {ppl:.2f} over {sum(len(p) - 1 for p in ids)} tokens; "
          f"untrained {untrained_ppl:.1f}; uniform {tiny_stories.VOCAB}")
    assert untrained_ppl > 300 and ppl < PERPLEXITY_BOUND


QUANT_STEPS = 24  # generation steps compared
# Max |quantized - fp32| logit at a step, over fp32's max |logit| there; the worst step. Measured:
# llm-int8 0.016, llm-8da4w 0.385 (4-bit weights in groups of 32 alone, fake-quantized in eager
# torch, give 0.33 on this d-128 model: the error is int4's, not the kernels').
QUANT_ATOL = {"llm-int8": 0.04, "llm-8da4w": 0.6}
# Greedy tokens equal to fp32's from the first. Measured: llm-int8 21 of 24; llm-8da4w 0 (its
# first token already differs: this undertrained model's top logits are close), so for it the
# check is that fp32's token is in its top 5 at nearly every step (measured: 100% for both).
QUANT_AGREE = {"llm-int8": 16, "llm-8da4w": 0}
TOP5_MIN = {"llm-int8": 1.0, "llm-8da4w": 0.9}


def _step_logits(pte, ids, prompt_len):
    """Logits before each new token: the prompt in one call, then one token per call."""
    method = pteron.load(pte).load_method()
    out = [torch.as_tensor(method(torch.tensor([ids[:prompt_len]]), torch.arange(prompt_len))[0])[0, -1]]
    for pos in range(prompt_len, len(ids) - 1):
        out.append(torch.as_tensor(method(torch.tensor([[ids[pos]]]), torch.tensor([pos]))[0])[0, -1])
    return torch.stack(out)


@pytest.mark.parametrize("scheme", ["llm-int8", "llm-8da4w"])
def test_tiny_stories_quantized_stays_near_fp32_at_every_step(stories, scheme):
    tok = pteron.llm.Tokenizer(stories["tokenizer"])
    prompt = tok.encode("This module provides", add_bos=True)
    fp32 = pteron.llm.generate(stories["fp32"], prompt, max_new_tokens=QUANT_STEPS, eos_ids=[])
    quant = pteron.llm.generate(stories[scheme], prompt, max_new_tokens=QUANT_STEPS, eos_ids=[])
    agree = next((i for i, (a, b) in enumerate(zip(fp32, quant)) if a != b), QUANT_STEPS)
    # Teacher-forced on fp32's tokens, so every step compares logits over the same context.
    ref = _step_logits(stories["fp32"], prompt + fp32, len(prompt))
    got = _step_logits(stories[scheme], prompt + fp32, len(prompt))
    assert ref.shape == (QUANT_STEPS, tiny_stories.VOCAB)
    err = ((got - ref).abs().amax(1) / ref.abs().amax(1)).max().item()
    top5 = sum(t in set(g.topk(5).indices.tolist()) for t, g in zip(fp32, got)) / QUANT_STEPS
    print(f"{scheme}: worst step's max |logit error| {err:.4f} of the max |logit|; greedy agrees for {agree} "
          f"steps; fp32's token in its top 5 at {top5:.0%} of the steps")
    assert err <= QUANT_ATOL[scheme]
    assert agree >= QUANT_AGREE[scheme], (fp32, quant)
    assert top5 >= TOP5_MIN[scheme]
