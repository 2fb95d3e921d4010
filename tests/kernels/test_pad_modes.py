"""reflection_pad{1,2,3}d.out and replication_pad{1,2,3}d.out against torch: batched and
unbatched inputs, asymmetric, zero and negative (cropping) pads, every dtype torch accepts, any
dim order; and malformed pads.

Tolerance: none (the ops copy elements).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import assert_equal, rand, random_order, with_dim_order

A = torch.ops.aten
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8, torch.int8,
          torch.int16, torch.int32, torch.int64]

CASES = [  # (k, shape, pad)
    (1, (2, 3, 7), [2, 3]),
    (1, (3, 5), [4, 0]),
    (1, (1, 2, 6), [-2, 3]),
    (2, (2, 3, 6, 7), [1, 2, 3, 4]),
    (2, (3, 5, 5), [4, 4, 0, 1]),
    (2, (1, 2, 8, 9), [0, 0, -3, 2]),
    (2, (1, 64, 16, 16), [1, 1, 1, 1]),
    (3, (1, 2, 4, 5, 6), [1, 2, 0, 3, 2, 1]),
    (3, (2, 3, 4, 5), [3, 3, 1, 1, 2, 2]),
]


def ref_op(mode, k):
    return getattr(A, f"{mode}_pad{k}d")


@pytest.mark.parametrize("mode", ["reflection", "replication"])
@pytest.mark.parametrize("k,shape,pad", CASES)
def test_pad_matches_torch(mode, k, shape, pad):
    g = torch.Generator().manual_seed(len(shape) * 10 + k)
    for dtype in DTYPES:
        x = rand(shape, dtype, g)
        expected = ref_op(mode, k)(x, pad)
        out = torch.empty_like(expected)
        run_kernel(f"aten::{mode}_pad{k}d.out", [x, pad, out])
        assert_equal(out, expected, f"{mode} {k}d {shape} {pad} {dtype}")


@pytest.mark.parametrize("mode", ["reflection", "replication"])
def test_pad_any_dim_order(mode):
    g = torch.Generator().manual_seed(3)
    for trial in range(6):
        x = with_dim_order(rand((2, 3, 5, 6), torch.float32, g), random_order(4, g))
        pad = [1, 3, 2, 0]
        expected = ref_op(mode, 2)(x, pad)
        out = with_dim_order(torch.empty(expected.shape), random_order(4, g))
        run_kernel(f"aten::{mode}_pad2d.out", [x, pad, out])
        assert_equal(out, expected, f"{mode} trial {trial}")


@pytest.mark.parametrize(
    "name,shape,pad,out_shape,match",
    [
        ("reflection_pad2d", (1, 1, 3, 3), [3, 0, 0, 0], (1, 1, 3, 6), "must be less than dim 3"),
        ("reflection_pad1d", (1, 4), [1, 4], (1, 9), "must be less than dim 1"),
        ("replication_pad2d", (1, 1, 3, 3), [1, 1], (1, 1, 3, 5), "padding must have 4 values"),
        ("replication_pad2d", (3, 3), [1, 1, 1, 1], (5, 5), "expects a 3D or 4D input"),
        ("replication_pad1d", (1, 3), [-2, -2], (1, 1), "gives size -1"),
        ("replication_pad2d", (1, 1, 3, 3), [1, 1, 1, 1], (1, 1, 5, 4), "out shape does not match"),
        ("replication_pad1d", (1, 3), [1 << 40, 0], (1, 3), "pad out of range"),
    ],
)
def test_bad_pads_fail_cleanly(name, shape, pad, out_shape, match):
    with pytest.raises(RuntimeError, match=match):
        run_kernel(f"aten::{name}.out", [torch.zeros(shape), pad, torch.empty(out_shape)])


def test_out_dtype_must_match():
    with pytest.raises(RuntimeError, match="out"):
        run_kernel("aten::reflection_pad1d.out", [torch.zeros(1, 4), [1, 1], torch.empty(1, 6, dtype=torch.int32)])
