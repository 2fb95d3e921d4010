"""pteron generates with Llama programs ExecuTorch's own LLM export wrote
(tests/fixtures/executorch/et_llama*.pte, made by tools/fixtures/make_executorch_llm_fixture.py:
export_llama with use_kv_cache, dynamic shape and metadata, no delegate): forward(tokens int64
[1, T], input_pos int64 [1]) with the start position, not Hugging Face's cache_position [T].
With no flags, `pteron generate` and pteron.llm.generate take the cache length and stop ids
from the program's metadata methods and give the token ids ExecuTorch's runtime gave greedily;
each step's logits match ExecuTorch's within LOGITS_ATOL."""

import json
import subprocess

import numpy as np
import pytest
import torch
from executorch_fixtures import FIXTURE_DIR, MANIFEST

import pteron
from pteron_cli import pteron_cli

NAMES = list(MANIFEST["llm_programs"])
# Both runtimes compute in float32 with their own summation orders; the logits (|x| < 6 here)
# differ by at most 5.3e-6 (measured, both variants). ExecuTorch's top-2 gap is >= min_top2_gap
# (0.007), so differences this small cannot change a greedy pick.
LOGITS_ATOL = 5e-5


def fixture(name):
    entry = MANIFEST["llm_programs"][name]
    arrays = np.load(FIXTURE_DIR / f"{name}_greedy.npz")
    return FIXTURE_DIR / entry["file"], entry, arrays


def cli(*args):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", NAMES)
def test_generate_gives_executorchs_tokens_through_the_cli(name):
    pte, entry, arrays = fixture(name)
    prompt = ",".join(str(int(t)) for t in arrays["prompt"])
    run = cli("generate", pte, "--prompt-ids", prompt, "--json")  # no -n: until the cache is full
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["tokens"] == arrays["generated"].tolist() == entry["generated"]
    meta = entry["metadata"]
    assert got["max_seq_len"] == meta["get_max_context_len"][0] == 32
    assert got["stop_reason"] == "cache_full"  # the recorded run met no get_eos_ids id either
    # The prompt goes in one call, as ExecuTorch's runner prefills a dynamic-shape program.
    assert got["prefill_calls"] == 1 and got["max_tokens_per_call"] == meta["get_max_seq_len"][0] - 1


@pytest.mark.parametrize("name", NAMES)
def test_generate_gives_executorchs_tokens_through_python(name):
    pte, entry, arrays = fixture(name)
    prompt = arrays["prompt"].tolist()
    want = arrays["generated"].tolist()
    assert pteron.llm.generate(pte, prompt) == want
    assert pteron.llm.generate(pteron.load(pte), torch.tensor([prompt]), max_new_tokens=5) == want[:5]
    # get_eos_ids (here [2]) stops generation unless the caller names other stop ids.
    stream = pteron.llm.stream(pte, prompt, eos_ids=[want[3]])
    assert list(stream) == want[:4] and stream.figures["stop_reason"] == "eos"


@pytest.mark.parametrize("name", NAMES)
def test_each_steps_logits_match_executorchs(name):
    pte, entry, arrays = fixture(name)
    program = pteron.load(pte)
    tokens = torch.from_numpy(arrays["prompt"]).reshape(1, -1)
    pos = 0
    for step, (want_token, want_logits) in enumerate(zip(arrays["generated"], arrays["logits"])):
        (logits,) = program.forward(tokens, torch.tensor([pos]))
        last = logits.reshape(-1, logits.shape[-1])[-1].numpy()
        np.testing.assert_allclose(last, want_logits, rtol=0, atol=LOGITS_ATOL, err_msg=f"step {step}")
        assert int(last.argmax()) == int(want_token), step
        pos += tokens.shape[1]
        tokens = torch.tensor([[int(want_token)]])
    assert pos == 32  # the last step used the cache's last position


@pytest.mark.parametrize("name", NAMES)
def test_metadata_is_what_the_export_wrote(name):
    pte, entry, _ = fixture(name)
    got = pteron.load(pte).metadata()
    want = {k: v[0] for k, v in entry["metadata"].items()}
    want["get_eos_ids"] = entry["metadata"]["get_eos_ids"]
    assert got == want  # the runner's eight and get_n_layers, which export_llama writes too
    assert got["use_sdpa_with_kv_cache"] == name.endswith("_sdpa") and got["get_n_layers"] == 2


def test_a_prompt_too_long_for_the_cache_is_one_line():
    pte, _, _ = fixture(NAMES[0])
    run = cli("generate", pte, "--prompt-ids", ",".join(["1"] * 33))
    assert run.returncode == 1
    assert run.stderr.strip() == f"pteron: error: {pte}: the prompt has 33 tokens, more than the program's cache of 32 positions"
