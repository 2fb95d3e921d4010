"""Generation (runtime/llm, `pteron generate`, pteron.llm): a tiny random Llama exported with
transformers' convert_and_export_with_cache generates, greedily in float32, exactly the tokens
Hugging Face's own model.generate(do_sample=False) gives with a static cache, through the CLI
and through Python, with T = 1 (prefilled token by token) and with a bounded dynamic T
(prefilled in chunks). Sampling with a seed is reproducible and stays in the top k; bad input
is one line and exit code 1.
"""

import functools

import pytest
import torch
from torch.export import Dim

import pteron
from llm_cli import assert_one_line_error, cli, generate_json

CACHE = 24
VOCAB = 64
CHUNK = 4  # the dynamic program's token bound
PROMPT = [5, 9, 3, 17, 60, 2, 41, 33, 8, 27]  # longer than CHUNK: three prefill calls


@functools.cache
def llama():
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=CACHE,
        cache_config={"batch_size": 1, "max_cache_len": CACHE},
    )
    return model


def hf_greedy(prompt, max_new_tokens, eos=None):
    """Hugging Face's greedy generation with a static cache: the reference."""
    from transformers import GenerationConfig

    config = GenerationConfig(
        do_sample=False,
        max_new_tokens=max_new_tokens,
        eos_token_id=eos,
        pad_token_id=0,
        cache_implementation="static",
        cache_config={"batch_size": 1, "max_cache_len": CACHE},
    )
    with torch.no_grad():
        out = llama().generate(torch.tensor([prompt]), generation_config=config)
    return out[0, len(prompt) :].tolist()


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """{"static": T = 1 program path, "dynamic": T in [1, CHUNK]}."""
    from transformers.integrations.executorch import convert_and_export_with_cache

    folder = tmp_path_factory.mktemp("llm")
    model = llama()
    static = convert_and_export_with_cache(model)
    seq = Dim("seq", min=1, max=CHUNK)
    dynamic = convert_and_export_with_cache(
        model,
        torch.tensor([[1, 2]]),
        torch.tensor([0, 1]),
        dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}},
    )
    paths = {}
    for name, ep in (("static", static), ("dynamic", dynamic)):
        paths[name] = folder / f"llama-{name}.pte"
        pteron.to_edge_transform_and_lower(ep).save(paths[name])
    # With a get_max_context_len constant method (as ExecuTorch's LLM exports carry), shorter
    # than the cache, and one claiming more than the cache holds.
    for length in (12, CACHE + 6):
        paths[f"context_{length}"] = folder / f"llama-context-{length}.pte"
        lowered = pteron.to_edge_transform_and_lower(static, constant_methods={"get_max_context_len": length})
        lowered.save(paths[f"context_{length}"])
    # A get_max_seq_len (tokens per call) under the dynamic program's bound of CHUNK.
    paths["seq_len_3"] = folder / "llama-seq-len-3.pte"
    pteron.to_edge_transform_and_lower(dynamic, constant_methods={"get_max_seq_len": 3}).save(paths["seq_len_3"])
    # An exported method of that name returning a tensor is not a constant.
    paths["tensor_max_seq_len"] = folder / "llama-tensor-max-seq-len.pte"
    methods = {"forward": static, "get_max_seq_len": torch.export.export(Constant(12), ())}
    pteron.to_edge_transform_and_lower(methods).save(paths["tensor_max_seq_len"])
    return paths


class Constant(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self):
        return torch.tensor(self.value)


def test_greedy_matches_hugging_face_through_the_cli(programs):
    n = CACHE - len(PROMPT)  # Hugging Face's static cache holds prompt + new tokens
    want = hf_greedy(PROMPT, n)
    for name in ("static", "dynamic"):
        got = generate_json(programs[name], "--prompt-ids", ",".join(map(str, PROMPT)), "-n", n)
        assert got["tokens"] == want, name
        assert got["prompt_tokens"] == len(PROMPT) and got["generated_tokens"] == n
        assert got["stop_reason"] == "max_new_tokens"
        assert got["max_seq_len"] == CACHE
        # T = 1 prefills token by token; the dynamic program in chunks of up to CHUNK.
        assert got["prefill_calls"] == (len(PROMPT) if name == "static" else -(-len(PROMPT) // CHUNK))
        for figure in ("prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms", "peak_rss_bytes"):
            assert got[figure] > 0, figure
        # CPU time of the same spans: positive, and not more than the threads could spend
        for span in ("prefill", "decode"):
            assert 0 < got[f"{span}_cpu_ms"] <= got["threads"] * got[f"{span}_ms"] + 50, span


def test_warm_up_generations_leave_the_timed_one_as_it_was(programs):
    """--warmup runs untimed generations first (benchmarks compare warm processes): the cache
    and the figures start over, so the tokens and counts are those of one cold run."""
    n = CACHE - len(PROMPT)
    want = hf_greedy(PROMPT, n)
    got = generate_json(programs["dynamic"], "--prompt-ids", ",".join(map(str, PROMPT)), "-n", n, "--warmup", 2)
    assert got["tokens"] == want
    assert got["generated_tokens"] == n and got["prefill_calls"] == -(-len(PROMPT) // CHUNK)
    assert got["isa"] in ("avx512", "avx2", "baseline", "neon", "scalar")


def test_greedy_matches_hugging_face_through_python(programs):
    prompt = [1, 7, 50]
    want = hf_greedy(prompt, 12)
    for name in ("static", "dynamic"):
        assert pteron.llm.generate(programs[name], prompt, max_new_tokens=12) == want
    # The same from a loaded Program (threads as loaded) and from the LoweredProgram's bytes.
    loaded = pteron.load(programs["dynamic"], threads=1)
    stream = pteron.llm.stream(loaded, torch.tensor([prompt]), max_new_tokens=12)
    assert [t for t in stream] == want and stream.tokens == want
    assert stream.figures["stop_reason"] == "max_new_tokens" and stream.figures["generated_tokens"] == 12
    assert pteron.llm.generate(programs["static"].read_bytes(), prompt, max_new_tokens=12) == want
    # A generation starts from an empty cache, so a second one is the same.
    assert pteron.llm.generate(loaded, prompt, max_new_tokens=12) == want


def test_stops_at_an_eos_id_as_hugging_face_does(programs):
    free = hf_greedy(PROMPT, 8)
    eos = free[4]
    want = hf_greedy(PROMPT, 8, eos=eos)
    assert want == free[: free.index(eos) + 1]  # Hugging Face keeps the EOS token
    got = generate_json(programs["static"], "--prompt-ids", ",".join(map(str, PROMPT)), "-n", 8, "--eos-ids", f"63,{eos}")
    assert got["tokens"] == want and got["stop_reason"] == "eos"
    assert pteron.llm.generate(programs["dynamic"], PROMPT, max_new_tokens=8, eos_ids=[eos]) == want


def test_without_a_token_count_it_fills_the_cache(programs):
    got = generate_json(programs["dynamic"], "--prompt-ids", "4,5,6")
    # The last token is never fed back: 3 prompt tokens leave CACHE - 2 new ones.
    assert len(got["tokens"]) == CACHE - 2 and got["stop_reason"] == "cache_full"
    assert got["tokens"][: CACHE - 3] == hf_greedy([4, 5, 6], CACHE - 3)
    # Exactly the room is accepted; one more is refused.
    assert len(generate_json(programs["static"], "--prompt-ids", "4,5,6", "-n", CACHE - 2)["tokens"]) == CACHE - 2


def test_the_cache_length_comes_from_get_max_context_len(programs):
    # 12 positions of the 24 the cache has: 3 prompt tokens leave room for 10 new ones.
    got = generate_json(programs["context_12"], "--prompt-ids", "4,5,6")
    assert got["max_seq_len"] == 12 and got["stop_reason"] == "cache_full"
    assert got["tokens"] == hf_greedy([4, 5, 6], CACHE - 3)[:10]
    assert_one_line_error(
        cli("generate", programs["context_12"], "--prompt-ids", "4,5,6", "-n", 11), "at most 10", "cache of 12"
    )
    assert_one_line_error(
        cli("generate", programs["context_12"], "--prompt-ids", ",".join(["4"] * 13)),
        "the prompt has 13 tokens, more than the program's cache of 12 positions",
    )
    assert pteron.llm.stream(programs["context_12"], [4, 5, 6]).max_seq_len == 12
    assert_one_line_error(
        cli("generate", programs[f"context_{CACHE + 6}"], "--prompt-ids", "1"),
        f"get_max_context_len says {CACHE + 6} positions but the KV cache holds {CACHE}",
    )
    assert_one_line_error(
        cli("generate", programs["tensor_max_seq_len"], "--prompt-ids", "1"),
        "metadata method 'get_max_seq_len'",
        "constant",
    )


def test_generate_uses_the_metadata_pteron_derives(programs):
    # pteron compile writes what ExecuTorch's runner reads: tokens per call (the input's bound),
    # cache positions, and the flags; pteron generate prefills in chunks of get_max_seq_len.
    meta = pteron.load(programs["dynamic"]).metadata()
    assert meta["get_max_seq_len"] == CHUNK and meta["get_max_context_len"] == CACHE
    assert meta["use_kv_cache"] is True and meta["use_sdpa_with_kv_cache"] is False
    assert meta["enable_dynamic_shape"] is True
    ids = ",".join(map(str, PROMPT))
    got = generate_json(programs["dynamic"], "--prompt-ids", ids, "-n", 2)
    assert got["max_seq_len"] == CACHE and got["max_tokens_per_call"] == CHUNK
    got = generate_json(programs["seq_len_3"], "--prompt-ids", ids, "-n", 2)
    assert got["max_tokens_per_call"] == 3 and got["prefill_calls"] == -(-len(PROMPT) // 3)
    assert got["tokens"] == hf_greedy(PROMPT, 2)
    assert_one_line_error(
        cli("generate", programs["dynamic"], "--prompt-ids", ",".join(["4"] * (CACHE + 1))),
        f"the prompt has {CACHE + 1} tokens, more than the program's cache of {CACHE} positions",
    )


@pytest.fixture(scope="module")
def eos_programs(tmp_path_factory):
    """The static decoder with a get_eos_ids method (ExecuTorch's export) or a get_eos_id method
    (optimum-executorch's) naming the 5th greedy token."""
    from transformers.integrations.executorch import convert_and_export_with_cache

    eos = hf_greedy(PROMPT, 8)[4]
    folder = tmp_path_factory.mktemp("llm-eos")
    ep = convert_and_export_with_cache(llama())
    paths = {}
    for method in ("get_eos_ids", "get_eos_id"):
        paths[method] = folder / f"llama-{method}.pte"
        pteron.to_edge_transform_and_lower(ep, constant_methods={method: [VOCAB - 1, eos]}).save(paths[method])
    return paths, eos


@pytest.mark.parametrize("method", ["get_eos_ids", "get_eos_id"])
def test_the_stop_ids_come_from_the_program_unless_given(eos_programs, method):
    paths, eos = eos_programs
    path = paths[method]
    want = hf_greedy(PROMPT, 8, eos=eos)
    prompt = ",".join(map(str, PROMPT))
    got = generate_json(path, "--prompt-ids", prompt, "-n", 8)
    assert got["tokens"] == want and got["stop_reason"] == "eos"
    assert pteron.llm.generate(path, PROMPT, max_new_tokens=8) == want
    # Given stop ids replace the program's, as in ExecuTorch's runner.
    free = hf_greedy(PROMPT, 8)
    assert generate_json(path, "--prompt-ids", prompt, "-n", 8, "--eos-ids", str(VOCAB - 1))["tokens"] == free
    assert pteron.llm.generate(path, PROMPT, max_new_tokens=8, eos_ids=[]) == free


def test_a_get_vocab_size_other_than_the_logits_is_refused(tmp_path):
    from transformers.integrations.executorch import convert_and_export_with_cache

    path = tmp_path / "llama-vocab.pte"
    ep = convert_and_export_with_cache(llama())
    pteron.to_edge_transform_and_lower(ep, constant_methods={"get_vocab_size": 2 * VOCAB}).save(path)
    assert_one_line_error(
        cli("generate", path, "--prompt-ids", "1,2"), f"get_vocab_size says {2 * VOCAB}", f"logits over {VOCAB} tokens"
    )


def test_streams_ids_then_a_line_of_figures(programs):
    run = cli("generate", programs["static"], "--prompt-ids", "1,2,3", "-n", 5, "--threads", 1)
    assert run.returncode == 0, run.stderr
    ids, figures = run.stdout.strip().splitlines()
    assert [int(t) for t in ids.split()] == hf_greedy([1, 2, 3], 5)
    for word in ("3 prompt + 5 new tokens", "prefill", "decode", "tok/s", "time to first token", "peak RSS"):
        assert word in figures, figures


def top_k_sets(path, prompt, tokens, k):
    """The k most likely ids before each new token, replaying the generation step by step."""
    method = pteron.load(path).load_method("forward")
    sets = []
    fed = list(prompt) + list(tokens[:-1])
    for pos, token in enumerate(fed):
        logits = method(torch.tensor([[token]]), torch.tensor([pos]))[0]
        if pos >= len(prompt) - 1:
            sets.append(set(torch.topk(logits[0, -1], k).indices.tolist()))
    return sets


def test_seeded_sampling_is_reproducible_and_stays_in_the_top_k(programs):
    args = ["--prompt-ids", "3,1,4,1,5", "-n", 15, "--temperature", 1.5, "--top-k", 5]
    first = generate_json(programs["static"], *args, "--seed", 7)["tokens"]
    assert generate_json(programs["static"], *args, "--seed", 7)["tokens"] == first
    # The dynamic program's logits match to rounding, so the same draws give the same tokens.
    assert generate_json(programs["dynamic"], *args, "--seed", 7)["tokens"] == first
    assert generate_json(programs["static"], *args, "--seed", 8)["tokens"] != first
    py = pteron.llm.generate(programs["static"], [3, 1, 4, 1, 5], 15, temperature=1.5, top_k=5, seed=7)
    assert py == first
    assert first != hf_greedy([3, 1, 4, 1, 5], 15)  # it did sample
    for step, (token, allowed) in enumerate(zip(first, top_k_sets(programs["static"], [3, 1, 4, 1, 5], first, 5))):
        assert token in allowed, f"step {step}: {token} not in the top 5 {sorted(allowed)}"
    # top-p: a tiny nucleus is the most likely token, that is greedy.
    nucleus = generate_json(programs["static"], "--prompt-ids", "3,1,4,1,5", "-n", 10, "--temperature", 1, "--top-p", 1e-6)
    assert nucleus["tokens"] == hf_greedy([3, 1, 4, 1, 5], 10)


@pytest.fixture(scope="module")
def not_a_decoder(zoo_pt2, tmp_path_factory):
    pte = tmp_path_factory.mktemp("zoo") / "fc-autoencoder.pte"
    run = cli("compile", zoo_pt2("fc-autoencoder"), "-o", pte)
    assert run.returncode == 0, run.stderr
    return pte


def test_bad_input_is_one_line(programs, not_a_decoder):
    pte = programs["static"]
    long_prompt = ",".join(["1"] * (CACHE + 1))
    assert_one_line_error(
        cli("generate", pte, "--prompt-ids", long_prompt), f"the prompt has {CACHE + 1} tokens", f"cache of {CACHE}"
    )
    assert_one_line_error(
        cli("generate", pte, "--prompt-ids", "1,2,3", "-n", CACHE - 1),
        f"asked for {CACHE - 1} new tokens",
        f"at most {CACHE - 2}",
    )
    assert_one_line_error(
        cli("generate", not_a_decoder, "--prompt-ids", "1,2"),
        "is not a decoder",
        "input_ids int64 [1, T] and cache_position int64 [T]",
        "float32 [1, 640]",
    )
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1,x"), "--prompt-ids: 'x' is not a token id")
    assert_one_line_error(cli("generate", pte, "--prompt-ids", ""), "--prompt-ids is empty")
    assert_one_line_error(
        cli("generate", pte, "--prompt-ids", f"1,{VOCAB}"), f"prompt token 1 is {VOCAB}, outside the vocabulary [0, {VOCAB})"
    )
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1", "-n", 0), "-n 0 is not a token count")
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1", "--warmup", -1), "--warmup -1 is negative")
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1", "--temperature", -1), "temperature -1")
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1", "--top-p", 0), "top-p 0 is outside (0, 1]")
    assert_one_line_error(cli("generate", pte, "--prompt-ids", "1", "--method", "decode"), "decode")
    # Python: the same messages as exceptions.
    with pytest.raises(RuntimeError, match=f"the prompt has {CACHE + 1} tokens"):
        pteron.llm.generate(pte, [1] * (CACHE + 1))
    with pytest.raises(RuntimeError, match="leaves room for at most"):
        pteron.llm.generate(pte, [1, 2, 3], max_new_tokens=CACHE)
    with pytest.raises(RuntimeError, match="is not a decoder"):
        pteron.llm.generate(not_a_decoder, [1])
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1"):
        pteron.llm.generate(pte, [1], max_new_tokens=0)
    with pytest.raises(ValueError, match="prompt_ids must be"):
        pteron.llm.generate(pte, [[1, 2], [3, 4]])
