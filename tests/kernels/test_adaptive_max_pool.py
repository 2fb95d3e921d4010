"""adaptive_max_pool2d.out and adaptive_max_pool3d.out against torch (values and int64 indices):
3-D/4-D and 4-D/5-D inputs, windows that divide and that overlap, outputs larger than the input,
NaN (a later NaN wins, as ATen's CPU kernel) and -inf windows, malformed arguments; and models
calling them (timm's max / avg-max global pooling, return_indices, AdaptiveMaxPool1d) together
with an antialiased bicubic resize, compiled on the default program and on portable alone.

Tolerance: max pooling is exact (values and indices), every dtype torch's CPU kernel takes.
"""

import pteron
import pytest
import torch
from kernel_harness import run_kernel

A = torch.ops.aten
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
CASES = {
    2: [((2, 3, 9, 7), [3, 2]), ((3, 5, 6), [1, 1]), ((1, 2, 4, 5), [7, 9]), ((1, 1, 6, 6), [6, 6])],
    3: [((2, 3, 5, 7, 6), [2, 3, 4]), ((3, 4, 4, 4), [1, 1, 1]), ((1, 1, 2, 3, 3), [4, 5, 7])],
}


def run(rank, x, size):
    values, indices = getattr(A, f"adaptive_max_pool{rank}d")(x, size)
    out, idx = torch.empty_like(values), torch.empty_like(indices)
    run_kernel(f"aten::adaptive_max_pool{rank}d.out", [x, size, out, idx])
    return (out, idx), (values, indices)


@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_values_and_indices_are_torchs(rank, dtype):
    g = torch.Generator().manual_seed(rank)
    for shape, size in CASES[rank]:
        x = torch.randn(shape, generator=g).to(dtype)
        (out, idx), (values, indices) = run(rank, x, size)
        assert torch.equal(out, values), (shape, size)
        assert torch.equal(idx, indices), (shape, size)


@pytest.mark.parametrize("rank", [2, 3])
def test_nan_and_infinite_windows(rank):
    shape = (1, 2) + (4,) * rank
    x = torch.randn(shape)
    x.view(-1)[[3, 4, 5, 9]] = float("nan")  # two in one window: the later wins
    x[0, 1] = float("-inf")
    (out, idx), (values, indices) = run(rank, x, [2] * rank)
    torch.testing.assert_close(out, values, equal_nan=True, atol=0, rtol=0)
    assert torch.equal(idx, indices)


@pytest.mark.parametrize(
    "args,message",
    [
        (lambda x: [x, [2], torch.empty(1, 2, 2), torch.empty(1, 2, 2, dtype=torch.long)],
         "output_size must have 2 values, got 1"),
        (lambda x: [x, [2, 2], torch.empty(1, 2, 2, 2), torch.empty(1, 2, 2, 2)],
         "indices must be int64, got float32"),
        (lambda x: [x, [2, 2], torch.empty(1, 2, 3, 2), torch.empty(1, 2, 2, 2, dtype=torch.long)],
         "out shape"),
        (lambda x: [x.int(), [2, 2], torch.empty(1, 2, 2, 2, dtype=torch.int32),
                    torch.empty(1, 2, 2, 2, dtype=torch.long)], "dtypes int32 -> int32 not supported"),
        (lambda x: [x[0, 0, 0], [2, 2], torch.empty(2, 2), torch.empty(2, 2, dtype=torch.long)],
         "expected 3-D or 4-D input, got 1-D"),
        (lambda x: [x[:, :, :0], [2, 2], torch.empty(1, 2, 2, 2), torch.empty(1, 2, 2, 2, dtype=torch.long)],
         "spatial dim 2 is empty"),
    ],
)
def test_bad_arguments_are_one_line(args, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel("aten::adaptive_max_pool2d.out", args(torch.randn(1, 2, 5, 5)))


class Pools(torch.nn.Module):
    """What vision models do with these ops: timm's 'avgmax' head (average + max global pool),
    max pooling to a grid with indices, a 1-D max pool over a sequence, a 3-D one over a clip, and
    a position-embedding grid resized with antialiased bicubic interpolation."""

    def __init__(self):
        super().__init__()
        self.grid = torch.nn.AdaptiveMaxPool2d((3, 2), return_indices=True)
        self.seq = torch.nn.AdaptiveMaxPool1d(5)
        self.clip = torch.nn.AdaptiveMaxPool3d((1, 2, 2))
        self.pos = torch.nn.Parameter(torch.randn(1, 8, 7, 7))

    def forward(self, x):
        head = 0.5 * (torch.nn.functional.adaptive_avg_pool2d(x, 1) +
                      torch.nn.functional.adaptive_max_pool2d(x, 1))
        grid, where = self.grid(x)
        seq = self.seq(x.flatten(2))
        clip = self.clip(x.unsqueeze(2).expand(-1, -1, 3, -1, -1))
        pos = torch.nn.functional.interpolate(self.pos, size=x.shape[-2:], mode="bicubic",
                                              antialias=True, align_corners=False)
        return head, grid, where, seq, clip, x + pos


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_models_calling_them_match_torch(kernels):
    torch.manual_seed(0)
    model, x = Pools().eval(), torch.randn(2, 8, 11, 10)
    with torch.no_grad():
        want = model(x)
    ep = pteron.export(model, (x,))
    used = {n.target.__name__ for n in ep.graph.nodes if n.op == "call_function"}
    assert {"adaptive_max_pool2d.default", "adaptive_max_pool3d.default",
            "_upsample_bicubic2d_aa.default"} <= used
    lowered = pteron.to_edge_transform_and_lower(ep, **({"kernels": kernels} if kernels else {}))
    got = lowered.load().forward(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = torch.as_tensor(g)
        if w.dtype == torch.long:
            assert torch.equal(g, w)
        else:
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
