"""Weights several XNNPACK regions share are stored once in the program (its named data, as
ExecuTorch's XNNPACK payloads reference theirs), not copied into every region's payload.

An unrolled recurrent cell is the case that needs it: tanh and the gate slices stay on the
kernels, so every time step is a region of its own holding the same two weight matrices.
Numerics: fp32, XNNPACK vs torch eager, max abs error within 1e-5 * (1 + max |reference|) per
step (XNNPACK's sums are reordered, as in test_xnnpack_lowering.py).
"""

import pteron
import torch

torch.manual_seed(0)

HIDDEN = 64
STEPS = 12


class UnrolledGatedRnn(torch.nn.Module):
    """h = tanh(x W + h U) * sigmoid-gate, over STEPS steps of the same weights."""

    def __init__(self):
        super().__init__()
        self.ih = torch.nn.Linear(HIDDEN, 2 * HIDDEN)
        self.hh = torch.nn.Linear(HIDDEN, 2 * HIDDEN)

    def forward(self, x):
        h = torch.zeros(x.shape[0], HIDDEN)
        for t in range(STEPS):
            g = self.ih(x[:, t]) + self.hh(h)
            h = torch.tanh(g[:, :HIDDEN]) * torch.sigmoid(g[:, HIDDEN:])
        return h


def _compile(model, x, partitioner):
    ep = pteron.export(model, (x,))
    return pteron.to_edge_transform_and_lower(ep, partitioner=partitioner, kernels=("portable",))


def test_regions_sharing_weights_store_them_once():
    model = UnrolledGatedRnn().eval()
    x = torch.randn(2, STEPS, HIDDEN)
    weight_bytes = sum(p.numel() * 4 for p in model.parameters())

    delegated = _compile(model, x, [pteron.XnnpackPartitioner()])
    portable = _compile(model, x, [])
    report = delegated.report
    assert len(report["delegated_regions"]) >= STEPS, report["refusals"]
    # Both matrices and biases stored once (plus a constant or two the compiler derives from
    # them, e.g. a folded bias), every later step referring to them.
    assert report["delegate_named_bytes"] <= 1.1 * weight_bytes, report["delegate_named_bytes"]
    assert report["delegate_named_shared"] >= 4 * (STEPS - 2), report["delegate_named_shared"]

    # Without sharing each region would hold both matrices: STEPS times the weights.
    # Stored once, the program is the portable program (which holds every weight once) plus
    # each payload's graph and small constants: well under one more copy of the weights.
    size, portable_size = len(delegated.buffer()), len(portable.buffer())
    assert size <= portable_size + weight_bytes // 2, (size, portable_size, weight_bytes)
    assert size <= 2 * weight_bytes + 64 * 1024, (size, weight_bytes)

    with torch.no_grad():
        expected = model(x)
    actual = delegated.load().forward(x)[0]
    err = float((actual - expected).abs().max())
    assert err <= 1e-5 * (1 + float(expected.abs().max())), err
