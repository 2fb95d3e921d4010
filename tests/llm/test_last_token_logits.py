"""`last_token_logits` (compiler/passes/last_token_logits.cpp, `pteron compile
--last-token-logits`): a decoder's logits [1, T, vocab] become the last token's row [1, 1,
vocab], as ExecuTorch's LLM export computes them, so a prefill call runs the vocabulary
projection once. The row equals the full program's last row (1e-5 of its scale: the same
arithmetic, a GEMV instead of a GEMM), greedy generation still matches Hugging Face token for
token, and the quantized programs take it too. A program whose first output is not a linear
over tokens is refused in one line.
"""

import subprocess

import pteron
import pytest
import torch
from pteron_cli import pteron_cli
from test_generate import CHUNK, PROMPT, hf_greedy, llama
from torch.export import Dim


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from transformers.integrations.executorch import convert_and_export_with_cache

    seq = Dim("seq", min=1, max=CHUNK)
    ep = convert_and_export_with_cache(llama(), torch.tensor([[1, 2]]), torch.tensor([0, 1]),
                                       dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
    path = tmp_path_factory.mktemp("last") / "llama.pt2"
    torch.export.save(ep.run_decompositions(), path)
    return path


def test_last_row_equals_the_full_programs(exported):
    full = pteron.to_edge_transform_and_lower(str(exported)).load().load_method("forward")
    lowered = pteron.to_edge_transform_and_lower(str(exported), last_token_logits=True)
    assert "last_token_logits: the first output is the last token's row" in lowered.report["passes"]
    last = lowered.load().load_method("forward")
    pos = 0
    for ids in ([5, 9, 3, 17], [60, 2], [41]):
        inputs = [torch.tensor([ids]), torch.arange(pos, pos + len(ids))]
        want = full.execute(inputs)[0]
        got = last.execute(inputs)[0]
        assert tuple(got.shape) == (1, 1, want.shape[-1])
        torch.testing.assert_close(got[0, 0], want[0, -1], rtol=0, atol=1e-5 * float(want.abs().max()))
        pos += len(ids)


@pytest.mark.parametrize("quantize", [None, "llm-8da4w", "llm-int8"])
def test_generation_is_unchanged(exported, tmp_path, quantize):
    kwargs = {"quantize": quantize} if quantize else {}
    full = pteron.to_edge_transform_and_lower(str(exported), **kwargs)
    last = pteron.to_edge_transform_and_lower(str(exported), last_token_logits=True, **kwargs)
    if quantize is None:
        assert pteron.llm.generate(last.buffer(), PROMPT, 8) == hf_greedy(PROMPT, 8)
    else:  # the same quantized arithmetic on the last row: the same greedy tokens
        assert pteron.llm.generate(last.buffer(), PROMPT, 8) == pteron.llm.generate(full.buffer(), PROMPT, 8)


def test_a_program_without_logits_is_one_line(tmp_path):
    ep = torch.export.export(torch.nn.Sequential(torch.nn.ReLU()), (torch.randn(1, 4, 8),))
    pt2 = tmp_path / "relu.pt2"
    torch.export.save(ep, pt2)
    with pytest.raises(pteron.CompileError, match="not a linear's result over the tokens"):
        pteron.to_edge_transform_and_lower(str(pt2), last_token_logits=True)
    r = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(tmp_path / "r.pte"), "--last-token-logits"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
