"""Linears with few output columns (N <= 16, at least 16 rows and 16 inputs: heads) on the
optimized library's unpacked dot-product path, against torch: every tail of the 4-column
blocks, of the rows each pass shares (4, or 2 on AVX2) and of the vector along K, with and
without bias, linear_relu, a batch of sequences, 1 and 2 threads (the same bits), NaN.

Tolerance: atol 1e-5 x sqrt(K) and rtol 1e-5 (float32 dot products summed in another order).
"""

import pteron_native
import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


@pytest.mark.parametrize("N", [1, 3, 4, 5, 8, 13, 16])
@pytest.mark.parametrize("M,K", [(16, 16), (17, 255), (33, 256), (4096, 63)])
def test_matches_torch(threads, M, N, K):
    x = torch.randn(M, K, generator=GEN)
    w = torch.randn(N, K, generator=GEN)
    b = torch.randn(N, generator=GEN)
    for bias in (b, None):
        out = torch.full((M, N), 7.0)
        run_kernel("aten::linear.out", [x, w, bias, out], library="optimized")
        want = torch.nn.functional.linear(x, w, bias)
        torch.testing.assert_close(out, want, atol=1e-5 * K**0.5, rtol=1e-5)
    out = torch.full((M, N), 7.0)
    run_kernel("pteron::linear_relu.out", [x, w, b, out], library="optimized")
    torch.testing.assert_close(out, torch.relu(torch.nn.functional.linear(x, w, b)), atol=1e-5 * K**0.5,
                               rtol=1e-5)


def test_batches_and_thread_counts():
    x = torch.randn(3, 40, 64, generator=GEN)
    w, b = torch.randn(6, 64, generator=GEN), torch.randn(6, generator=GEN)
    outs = []
    for t in (1, 2):
        pteron_native.set_num_threads(t)
        out = torch.empty(3, 40, 6)
        run_kernel("aten::linear.out", [x, w, b, out], library="optimized")
        outs.append(out)
    pteron_native.set_num_threads(0)
    assert torch.equal(outs[0], outs[1])
    torch.testing.assert_close(outs[0], torch.nn.functional.linear(x, w, b), atol=1e-4, rtol=1e-5)


def test_nan_stays_nan_through_the_relu():
    x = torch.randn(32, 32, generator=GEN)
    x[5, 3] = float("nan")
    w = torch.randn(2, 32, generator=GEN)
    out = torch.empty(32, 2)
    run_kernel("pteron::linear_relu.out", [x, w, None, out], library="optimized")
    assert out[5].isnan().all() and not out[[0, 6]].isnan().any()
