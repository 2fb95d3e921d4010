"""Non-GEMM optimized kernels on both sides of the threading threshold (util/parallel.h: work
under ~1M units runs on the caller, larger work is split over the shared pool), with 2 threads:
layer norm and relu against torch. Tolerances as in test_optimized_kernels.py: layer norm atol
1e-5, relu exact."""

import pteron_native
import pytest
import torch
from kernel_harness import assert_close, run_kernel


@pytest.fixture
def two_threads():
    pteron_native.set_num_threads(2)
    yield
    pteron_native.set_num_threads(0)


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("rows", [128, 2048])  # OPT's [128, 768] inline; 2048 rows split
def test_layer_norm(two_threads, rows):
    x, w, b = rand(rows, 768, seed=1), rand(768, seed=2), rand(768, seed=3)
    y, mean, rstd = torch.ops.aten.native_layer_norm(x, [768], w, b, 1e-5)
    outs = [torch.empty_like(y), torch.empty_like(mean), torch.empty_like(rstd)]
    run_kernel("aten::native_layer_norm.out", [x, [768], w, b, 1e-5, *outs], library="optimized")
    assert_close(outs[0], y, atol=1e-5, rtol=1e-5, what=f"layer_norm {rows} rows")
    assert_close(outs[2], rstd, atol=1e-5, rtol=1e-5, what=f"layer_norm rstd {rows} rows")


@pytest.mark.parametrize("n", [1000, 3_000_001])
def test_relu(two_threads, n):
    x = rand(n, seed=4)
    out = torch.empty_like(x)
    run_kernel("aten::relu.out", [x, out], library="optimized")
    assert torch.equal(out, torch.relu(x))
