"""ExecuTorch's XNNPACK-delegated programs (backend "XnnpackBackend", backends/xnnpack/runtime/
et_payload.cpp, et_backend.cpp) on pteron, from tests/fixtures/executorch (written by
tools/fixtures/make_executorch_xnnpack_fixture.py in the ExecuTorch peer venv):

- the tiny Llama exported as ExecuTorch's users do with `export_llama -X` (fp32: its linears are
  XNNPACK fully-connected delegates whose weights are the program's named data, T dynamic)
  generates ExecuTorch's greedy tokens, each step's logits close to ExecuTorch's;
- a network over every node type pteron reads matches ExecuTorch's outputs;
- what Debian's 2022 XNNPACK cannot run is one line naming it: the 8da4w export's dynamically
  quantized values, a transpose node.
"""

import numpy as np
import pytest
import torch
from executorch_fixtures import FIXTURE_DIR as FIXTURES
from executorch_fixtures import MANIFEST

from llm.llm_cli import assert_one_line_error, cli, generate_json

import pteron

# Debian's XNNPACK sums its fully connected layers in another order than ExecuTorch's newer
# build: float rounding only (measured at most 3.1e-6 over the 27 steps; ExecuTorch's top-2 gap
# is >= 0.0073, so no greedy pick can change).
LOGITS_ATOL = 1e-5


def fixture(name):
    entry = MANIFEST["xnnpack_programs"][name]
    return FIXTURES / entry["file"], entry


def test_export_llama_x_generates_executorchs_greedy_tokens():
    pte, entry = fixture("et_llama_xnnpack")
    arrays = np.load(FIXTURES / "et_llama_xnnpack_greedy.npz")
    prompt, want = [int(t) for t in arrays["prompt"]], [int(t) for t in arrays["generated"]]
    assert want == entry["generated"] and len(want) == 32 - len(prompt) + 1
    got = generate_json(pte, "--prompt-ids", ",".join(map(str, prompt)), "--eos-ids", "")
    assert got["tokens"] == want and got["stop_reason"] == "cache_full"
    assert pteron.llm.generate(pte, prompt, eos_ids=[]) == want


def test_export_llama_x_logits_match_executorchs_at_every_step():
    pte, _ = fixture("et_llama_xnnpack")
    arrays = np.load(FIXTURES / "et_llama_xnnpack_greedy.npz")
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


def test_every_node_type_read_matches_executorch():
    pte, _ = fixture("et_xnnpack_ops")
    arrays = np.load(FIXTURES / "et_xnnpack_ops.npz")
    outputs = pteron.load(pte).forward(torch.from_numpy(arrays["input_0"]), torch.from_numpy(arrays["input_1"]))
    assert len(outputs) == 2
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out.numpy(), arrays[f"output_{i}"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out.numpy(), arrays[f"eager_{i}"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "name, fragments",
    [
        ("et_llama_xnnpack_8da4w", ["XNNPACK payload value 1 is quantized (xnn_datatype_qdint8)", "8da4w"]),
        ("et_xnnpack_transpose", ["XNNStaticTranspose, which Debian's XNNPACK (2022) does not have"]),
    ],
)
def test_what_debians_xnnpack_lacks_is_one_line(name, fragments):
    pte, _ = fixture(name)
    run = cli("run", pte) if name == "et_xnnpack_transpose" else cli("generate", pte, "--prompt-ids", "1,2")
    assert_one_line_error(run, str(pte), *fragments)
    with pytest.raises(RuntimeError, match=fragments[0].replace("(", r"\(").replace(")", r"\)")):
        pteron.load(pte).load_method()
