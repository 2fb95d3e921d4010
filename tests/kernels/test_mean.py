"""mean.out and mean.dtype_out against torch: single and multiple dims (contiguous blocks and
scattered), negative dims, all dims (None / []), keepdim, 0-d and empty inputs, permuted
layouts, the dtype argument (including integer inputs).

Tolerance: float32 rtol 1e-5, atol 1e-6 (sums accumulate in double, so ours is the more exact);
float64 1e-12; float16/bfloat16 rtol 1e-2, atol 1e-3.
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)
MEAN = "aten::mean.out"


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def tol(dtype):
    if dtype == torch.float64:
        return dict(atol=1e-12, rtol=1e-12)
    if dtype in (torch.float16, torch.bfloat16):
        return dict(atol=1e-3, rtol=1e-2)
    return dict(atol=1e-6, rtol=1e-5)


def check(x, dims, keepdim, dtype=None, out=None, what=""):
    ref = torch.mean(x.double(), dims if dims is not None else [], keepdim=keepdim)
    ref = ref.to(dtype or x.dtype)
    out = torch.empty_like(ref) if out is None else out
    run_kernel(MEAN, [x, dims, keepdim, None if dtype is None else dtype_code(dtype), out])
    assert_close(out, ref, what=f"mean {tuple(x.shape)} dims={dims} keepdim={keepdim} {what}",
                 **tol(ref.dtype))


def dtype_code(dtype):
    return {torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bfloat16: 15}[dtype]


@pytest.mark.parametrize("shape,dims", [
    ((1, 1280, 7, 7), [2, 3]),  # global average pooling
    ((1, 1280, 7, 7), [-1, -2]),
    ((128, 768), [-1]),
    ((4, 5, 6), [1]),  # reduce a middle dim: inner > 1
    ((4, 5, 6), [0]),
    ((4, 5, 6), [0, 2]),  # not one block: strided walk
    ((3, 4, 5, 6), [1, 2]),
    ((2, 3, 4), None),
    ((2, 3, 4), []),
    ((7,), [0]),
    ((1, 1), [0, 1]),
    ((2, 300, 3), [1]),
])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(shape, dims, keepdim):
    check(rand(*shape), dims, keepdim)


def test_mean_empty_reduction_is_nan():
    out = torch.empty(3, 2)
    run_kernel(MEAN, [torch.empty(3, 0, 2), [1], False, None, out])
    assert torch.isnan(out).all()


def test_mean_zero_dim_tensor():
    check(torch.tensor(2.5), [0], False, what="0-d")
    check(torch.tensor(2.5), None, True, what="0-d")


def test_mean_permuted_layouts():
    x = rand(2, 3, 4, 5).to(memory_format=torch.channels_last)
    check(x, [2, 3], True, what="channels-last input")
    check(rand(6, 4).t(), [0], False, what="transposed input")
    out = torch.empty(5, 2).t()
    check(rand(2, 3, 5), [1], False, out=out, what="transposed out")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_mean_dtypes(dtype):
    check(rand(3, 50, dtype=dtype), [1], False)
    check(rand(3, 50, dtype=dtype), [0], True)


def test_mean_dtype_argument():
    check(rand(4, 6, dtype=torch.float16), [1], False, dtype=torch.float32, what="half->float")
    x = torch.arange(12, dtype=torch.int64).reshape(3, 4)
    ref = torch.mean(x, [0], dtype=torch.float32)
    out = torch.empty(4)
    run_kernel(MEAN, [x, [0], False, 6, out])
    assert_close(out, ref, what="int64 with dtype=float", **tol(torch.float32))


def test_mean_dtype_out_overload():
    x = rand(3, 4, 5)
    out = torch.empty(())
    run_kernel("aten::mean.dtype_out", [x, None, out])
    assert_close(out, x.double().mean().float(), what="mean.dtype_out", **tol(torch.float32))


def test_mean_rejects_repeated_dim():
    with pytest.raises(RuntimeError, match=f"{MEAN}: dim 1 appears multiple times"):
        run_kernel(MEAN, [rand(2, 3), [1, -1], False, None, torch.empty(2)])


def test_mean_rejects_integer_input_without_dtype():
    x = torch.ones(2, 3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=f"{MEAN}: input dtype int64 needs a floating dtype"):
        run_kernel(MEAN, [x, [0], False, None, torch.empty(3)])


def test_mean_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match=MEAN):
        run_kernel(MEAN, [rand(2, 3), [1], True, None, torch.empty(2)])


def test_mean_rejects_dtype_mismatch():
    with pytest.raises(RuntimeError, match=f"{MEAN}: out dtype"):
        run_kernel(MEAN, [rand(2, 3), [1], False, 6, torch.empty(2, dtype=torch.float64)])
