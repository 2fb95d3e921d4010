"""The select_before_linear pass: a causal LM's last-token logits (linear over every position,
then select one position) compile to one row-vector linear, and programs where the selection
is not one row of the linear keep the full product. Outputs match torch either way
(float32, atol 1e-5)."""

import pteron
import torch


class Head(torch.nn.Module):
    def __init__(self, pick):
        super().__init__()
        self.proj = torch.nn.Linear(16, 40)
        self.pick = pick

    def forward(self, x):
        return self.pick(self.proj(x))


def compile_and_run(pick, x):
    model = Head(pick).eval()
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)))
    passes = {}
    for line in lowered.report["passes"]:  # "select_before_linear: 1 node(s), 0.0 ms"
        name, rest = line.split(":", 1)
        passes[name] = int(rest.split()[0])
    out = lowered.load().forward(x)[0]
    with torch.no_grad():
        torch.testing.assert_close(out, model(x), atol=1e-5, rtol=1e-5)
    return passes["select_before_linear"]


def test_last_token_logits_become_one_row():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 7, 16, generator=gen)
    assert compile_and_run(lambda y: y[:, -1, :], x) == 1
    assert compile_and_run(lambda y: y[:, 2, :], x) == 1


def test_selections_that_are_not_one_row_keep_the_product():
    gen = torch.Generator().manual_seed(1)
    assert compile_and_run(lambda y: y[:, -1, :], torch.randn(3, 7, 16, generator=gen)) == 0
    assert compile_and_run(lambda y: y[:, :, 5], torch.randn(1, 7, 16, generator=gen)) == 0
    # The full logits are used too: the product must stay.
    x = torch.randn(1, 7, 16, generator=gen)
    assert compile_and_run(lambda y: y[:, -1, :] + y.sum(1), x) == 0
