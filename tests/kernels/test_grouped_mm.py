"""Mixture-of-experts grouped products against a per-expert torch loop, on the portable and the
optimized kernels: pteron::_grouped_mm.out (aten::_grouped_mm's out-variant) and
transformers::grouped_mm_fallback.out (transformers' MoE layers export it for fp32 weights).

Rows [offs[g - 1], offs[g]) times expert g's matrix; experts without rows, rows past the last
offset (zero, not left unwritten) and a transposed expert weight (transformers' layout) are
covered. The offsets are computed by the program, so bad ones must fail cleanly.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) (sums of K products in another order);
bfloat16 accumulates in float and rounds once (rtol 1e-2, atol 1e-2 * sqrt(K)).
"""

import math

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)
LIBRARIES = ["portable", "optimized"]
OPS = {
    "aten": ("pteron::_grouped_mm.out", lambda x, w, offs, out: [x, w, offs, None, None, out]),
    "transformers": ("transformers::grouped_mm_fallback.out", lambda x, w, offs, out: [x, w, offs, out]),
}


def reference(x, w, ends):
    out = torch.zeros(x.shape[0], w.shape[2], dtype=torch.float32)
    start = 0
    for g, end in enumerate(ends):
        out[start:end] = x[start:end].float() @ w[g].float()
        start = end
    return out.to(x.dtype)


def tol(dtype, k):
    if dtype == torch.bfloat16:
        return dict(atol=1e-2 * math.sqrt(k), rtol=1e-2)
    return dict(atol=1e-4 * math.sqrt(k), rtol=1e-4)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "ends,k,n",
    [
        ([3, 3, 7, 12], 16, 24),  # an expert without rows
        ([1, 2, 3, 4, 5, 6, 7, 8], 64, 96),  # one row each: decode's matrix-vector products
        ([40, 130, 200], 300, 70),  # past one K block, partial tiles
        ([5, 9], 8, 8),  # rows 9.. belong to no expert: zero
    ],
)
def test_grouped_mm_matches_per_expert_products(library, op, ends, k, n):
    rows = max(ends) + (3 if ends == [5, 9] else 0)
    x = torch.randn(rows, k, generator=GEN)
    w = torch.randn(len(ends), k, n, generator=GEN)
    out = torch.full((rows, n), float("nan"))
    name, args = OPS[op]
    run_kernel(name, args(x, w, torch.tensor(ends, dtype=torch.int32), out), library)
    assert_close(out, reference(x, w, ends), what=f"{name} {library}", **tol(torch.float32, k))


@pytest.mark.parametrize("library", LIBRARIES)
def test_transposed_expert_weights_and_int64_offsets(library):
    # transformers passes weight.transpose(-2, -1) of [E, N, K] parameters.
    x = torch.randn(10, 12, generator=GEN)
    w = torch.randn(3, 20, 12, generator=GEN).transpose(-2, -1)
    out = torch.empty(10, 20)
    ends = [4, 4, 10]
    run_kernel("transformers::grouped_mm_fallback.out", [x, w, torch.tensor(ends), out], library)
    assert_close(out, reference(x, w, ends), what=library, **tol(torch.float32, 12))


@pytest.mark.parametrize("library", LIBRARIES)
def test_bfloat16(library):
    x = torch.randn(9, 32, generator=GEN).bfloat16()
    w = torch.randn(2, 32, 16, generator=GEN).bfloat16()
    out = torch.empty(9, 16, dtype=torch.bfloat16)
    run_kernel("pteron::_grouped_mm.out", [x, w, torch.tensor([4, 9], dtype=torch.int32), None,
                                           None, out], library)
    assert_close(out, reference(x, w, [4, 9]), what=library, **tol(torch.bfloat16, 32))


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    "ends,match",
    [
        ([4, 2, 6], r"offs\[1\] = 2 after 4"),  # decreasing
        ([3, 5, 7], r"at most the 6 rows; offs\[2\] = 7"),  # past the input's rows
        ([-1, 3, 6], r"offs\[0\] = -1"),
        ([3, 6], "2 offsets for 3 experts"),
    ],
)
def test_bad_offsets_fail_cleanly(library, ends, match):
    x, w, out = torch.randn(6, 4), torch.randn(3, 4, 5), torch.empty(6, 5)
    with pytest.raises(RuntimeError, match="transformers::grouped_mm_fallback: .*" + match):
        run_kernel("transformers::grouped_mm_fallback.out",
                   [x, w, torch.tensor(ends, dtype=torch.int32), out], library)


@pytest.mark.parametrize("library", LIBRARIES)
def test_unsupported_forms_are_refused(library):
    x, w, out = torch.randn(6, 4), torch.randn(3, 4, 5), torch.empty(6, 5)
    offs = torch.tensor([2, 4, 6], dtype=torch.int32)
    with pytest.raises(RuntimeError, match="aten::_grouped_mm: bias is not supported"):
        run_kernel("pteron::_grouped_mm.out", [x, w, offs, torch.zeros(3, 5), None, out], library)
    with pytest.raises(RuntimeError, match="only the 2-D input x 3-D weight form with offs"):
        run_kernel("pteron::_grouped_mm.out", [x, w, None, None, None, out], library)
    with pytest.raises(RuntimeError, match=r"cannot multiply rows of 4 by experts' 5x5"):
        run_kernel("pteron::_grouped_mm.out",
                   [x, torch.randn(3, 5, 5), offs, None, None, out], library)
    with pytest.raises(RuntimeError, match="offs must be int32 or int64"):
        run_kernel("pteron::_grouped_mm.out", [x, w, offs.float(), None, None, out], library)


def test_empty_permuted_checks_its_layout():
    out = torch.empty(2, 3)
    run_kernel("aten::empty_permuted.out", [[2, 3], [1, 0], out])
    with pytest.raises(RuntimeError, match="physical_layout is not a permutation"):
        run_kernel("aten::empty_permuted.out", [[2, 3], [0, 0], out])
    with pytest.raises(RuntimeError, match="physical_layout has 1 dims for 2 sizes"):
        run_kernel("aten::empty_permuted.out", [[2, 3], [0], out])
