"""_softmax.out and _log_softmax.out against torch: every dim (contiguous rows and strided
columns), odd and 1-element sizes, large logits, -inf masks, NaN rows, non-default dim orders,
half_to_float and dtypes.

Tolerance: float32 rtol 1e-5, atol 1e-6 (exp is a polynomial within 1e-7 relative error; sums in
another order); float64 1e-10 (libm exp); float16/bfloat16 compute in float and round once
(rtol 1e-2, atol 1e-3).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)
OPS = {"softmax": ("aten::_softmax.out", torch._softmax),
       "log_softmax": ("aten::_log_softmax.out", torch._log_softmax)}


def rand(*shape, dtype=torch.float32, scale=3.0):
    return (torch.randn(shape, generator=GEN) * scale).to(dtype)


def tol(dtype):
    if dtype == torch.float64:
        return dict(atol=1e-10, rtol=1e-10)
    if dtype in (torch.float16, torch.bfloat16):
        return dict(atol=1e-3, rtol=1e-2)
    return dict(atol=1e-6, rtol=1e-5)


def check(op, x, dim, what="", half_to_float=False, out=None):
    name, fn = OPS[op]
    ref = fn(x.double(), dim, False)
    ref = ref.float() if half_to_float else ref.to(x.dtype)
    if out is None:
        out = torch.empty_like(ref)
    run_kernel(name, [x, dim, half_to_float, out])
    assert_close(out, ref, what=f"{op} {what}", **tol(x.dtype if not half_to_float else
                                                     torch.float16))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,dim", [((1,), 0), ((7,), -1), ((3, 1000), 1), ((4, 5, 6), 0),
                                       ((4, 5, 6), 1), ((4, 5, 6), 2), ((2, 300, 3), 1),
                                       ((2, 3, 600), -2), ((12, 17, 17), -1), ((), 0)])
def test_softmax_dims(op, shape, dim):
    check(op, rand(*shape), dim, what=f"{shape} dim {dim}")


@pytest.mark.parametrize("op", OPS)
def test_softmax_large_logits_stay_finite(op):
    x = torch.tensor([[1000.0, 999.0, -1000.0], [-50.0, -50.0, -50.0]])
    check(op, x, 1, what="large logits")


@pytest.mark.parametrize("op", OPS)
def test_softmax_masked_positions(op):
    x = rand(3, 9)
    x[:, 4:] = float("-inf")
    check(op, x, 1, what="-inf mask")
    check(op, x.t().contiguous(), 0, what="-inf mask, columns")


def test_softmax_nan_row_is_nan():
    x = rand(2, 5)
    x[0, 2] = float("nan")
    out = torch.empty(2, 5)
    run_kernel("aten::_softmax.out", [x, 1, False, out])
    assert torch.isnan(out[0]).all()
    assert_close(out[1], torch.softmax(x[1], 0), what="row without NaN", **tol(torch.float32))


@pytest.mark.parametrize("op", OPS)
def test_softmax_channels_last(op):
    x = rand(2, 5, 4, 3).to(memory_format=torch.channels_last)
    for dim in range(4):
        out = torch.empty(2, 5, 4, 3).to(memory_format=torch.channels_last)
        check(op, x, dim, what=f"channels-last dim {dim}", out=out)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_softmax_dtypes(op, dtype):
    check(op, rand(5, 33, dtype=dtype), 1, what=str(dtype))
    check(op, rand(5, 33, dtype=dtype), 0, what=f"{dtype} columns")


@pytest.mark.parametrize("op", OPS)
def test_softmax_half_to_float(op):
    check(op, rand(4, 9, dtype=torch.float16), 1, what="half_to_float", half_to_float=True)


def test_softmax_attention_size():
    check("softmax", rand(12, 128, 128), -1, what="attention scores")


def test_softmax_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match="aten::_softmax.out"):
        run_kernel("aten::_softmax.out", [rand(2, 3), 1, False, torch.empty(3, 2)])


def test_softmax_rejects_bad_dim():
    with pytest.raises(RuntimeError, match="aten::_log_softmax.out: dim 2 out of range"):
        run_kernel("aten::_log_softmax.out", [rand(2, 3), 2, False, torch.empty(2, 3)])


def test_softmax_rejects_integer_input():
    x = torch.ones(2, 3, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="aten::_softmax.out: dtype int32 not supported"):
        run_kernel("aten::_softmax.out", [x, 1, False, torch.empty(2, 3, dtype=torch.int32)])


def test_softmax_rejects_wrong_out_dtype():
    with pytest.raises(RuntimeError, match="aten::_softmax.out: out dtype"):
        run_kernel("aten::_softmax.out", [rand(2, 3), 1, False, torch.empty(2, 3).double()])
