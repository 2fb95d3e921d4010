"""bitwise_and/or/xor (Tensor and Scalar forms) and the shifts (bitwise_left/right_shift,
__lshift__/__rshift__, with amounts at and beyond the type width and negative) against torch:
bool and integer tensors with broadcasting, mixed dtypes, channels-last inputs. Results are
exact."""

import pytest
import torch
from kernel_harness import run_kernel

OPS = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((2, 1, 5), (4, 1)), ((), (3,)), ((0, 2), (2,))])
def test_bitwise_matches_torch(op, dtype, sa, sb):
    g = torch.Generator().manual_seed(1)
    a = torch.randint(0, 100, sa, generator=g).to(dtype)
    b = torch.randint(0, 100, sb, generator=g).to(dtype)
    expected = OPS[op](a, b)
    out = torch.empty_like(expected)
    run_kernel(f"aten::bitwise_{op}.Tensor_out", [a, b, out])
    assert torch.equal(out, expected)


def test_bitwise_rejects_float():
    a = torch.randn(3)
    with pytest.raises(RuntimeError, match="bitwise_and"):
        run_kernel("aten::bitwise_and.Tensor_out", [a, a, torch.empty(3)])


INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [torch.bool] + INT_DTYPES)
def test_bitwise_scalar_matches_torch(op, dtype):
    g = torch.Generator().manual_seed(2)
    for shape in [(), (0,), (3, 4), (2, 3, 4, 5)]:
        a = torch.randint(0, 100, shape, generator=g).to(dtype)
        for s in (0, 5, 77, True):
            expected = OPS[op](a, s)  # a bool tensor with an int scalar promotes to int64
            out = torch.empty_like(expected)
            run_kernel(f"aten::bitwise_{op}.Scalar_out", [a, s, out])
            assert torch.equal(out, expected), (op, dtype, shape, s)
    # Channels-last input into a row-major out.
    a = torch.randint(-50, 50, (2, 3, 4, 5), generator=g).to(dtype)
    a = a.to(memory_format=torch.channels_last)
    expected = OPS[op](a, 6)
    out = torch.empty(a.shape, dtype=expected.dtype)
    run_kernel(f"aten::bitwise_{op}.Scalar_out", [a, 6, out])
    assert torch.equal(out, expected)


def test_bitwise_scalar_rejects_float():
    a = torch.arange(3)
    with pytest.raises(RuntimeError, match="aten::bitwise_or.Scalar_out: the scalar must be an integer"):
        run_kernel("aten::bitwise_or.Scalar_out", [a, 1.5, torch.empty_like(a)])
    with pytest.raises(RuntimeError, match="aten::bitwise_or.Scalar_out: out dtype"):
        run_kernel("aten::bitwise_or.Scalar_out", [a, 1, torch.empty(3)])


SHIFTS = {
    "bitwise_left_shift": (torch.bitwise_left_shift, "Tensor_out", "Tensor_Scalar_out"),
    "bitwise_right_shift": (torch.bitwise_right_shift, "Tensor_out", "Tensor_Scalar_out"),
    "__lshift__": (torch.Tensor.__lshift__, "Tensor_out", "Scalar_out"),
    "__rshift__": (torch.Tensor.__rshift__, "Tensor_out", "Scalar_out"),
}


@pytest.mark.parametrize("name", sorted(SHIFTS))
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts_match_torch(name, dtype):
    fn, tensor_overload, scalar_overload = SHIFTS[name]
    g = torch.Generator().manual_seed(3)
    lo = 0 if dtype == torch.uint8 else -100
    bits = torch.iinfo(dtype).bits
    for sa, sb in [((3, 4), (3, 4)), ((2, 1, 5), (4, 1)), ((), (3,)), ((0, 2), (2,))]:
        a = torch.randint(lo, 100, sa, generator=g).to(dtype)
        # Amounts in range, at and beyond the width, and negative: torch's defined results.
        b = torch.randint(-2 if dtype != torch.uint8 else 0, bits + 3, sb, generator=g).to(dtype)
        expected = fn(a, b)
        out = torch.empty_like(expected)
        run_kernel(f"aten::{name}.{tensor_overload}", [a, b, out])
        assert torch.equal(out, expected), (name, dtype, sa, sb, a, b, out, expected)
        for s in (0, 1, 3, bits - 1, bits, bits + 5):
            expected = fn(a, s)
            out = torch.empty_like(expected)
            run_kernel(f"aten::{name}.{scalar_overload}", [a, s, out])
            assert torch.equal(out, expected), (name, dtype, s)


@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_shifts_mixed_dtypes_and_layouts(name):
    fn, tensor_overload, scalar_overload = SHIFTS[name]
    a = torch.tensor([[1, -3, 100, -128]], dtype=torch.int8)
    b = torch.tensor([[0], [1], [7], [9], [40]], dtype=torch.int64)  # promoted to int64
    expected = fn(a, b)
    out = torch.empty_like(expected)
    run_kernel(f"aten::{name}.{tensor_overload}", [a, b, out])
    assert torch.equal(out, expected)
    t = torch.tensor([True, False, True])
    expected = fn(t, 2)  # bool tensor, int scalar: int64
    out = torch.empty_like(expected)
    run_kernel(f"aten::{name}.{scalar_overload}", [t, 2, out])
    assert torch.equal(out, expected)
    x = torch.randint(-1000, 1000, (2, 3, 4, 5), dtype=torch.int32).to(memory_format=torch.channels_last)
    out = torch.empty(x.shape, dtype=torch.int32)
    run_kernel(f"aten::{name}.{scalar_overload}", [x, 3, out])
    assert torch.equal(out, fn(x, 3))


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_scalar_shifted_by_a_tensor(name, dtype):
    """Scalar_Tensor: the scalar shifted by each element (what run_decompositions() makes of
    uint8 bicubic resizes), out in the tensor's dtype."""
    fn = getattr(torch, name)
    bits = torch.iinfo(dtype).bits
    b = torch.arange(-2 if dtype != torch.uint8 else 0, bits + 3).to(dtype).reshape(1, -1)
    for s in (1, 3, 100, -7):
        if dtype == torch.uint8 and s < 0:
            continue
        expected = fn(s, b)
        out = torch.empty_like(expected)
        run_kernel(f"aten::{name}.Scalar_Tensor_out", [s, b, out])
        assert torch.equal(out, expected), (name, dtype, s, out, expected)
    with pytest.raises(RuntimeError, match=f"aten::{name}.Scalar_Tensor_out: the shifted value"):
        run_kernel(f"aten::{name}.Scalar_Tensor_out", [1.5, b, torch.empty_like(b)])


def test_shifts_reject_floats():
    f = torch.rand(3)
    i = torch.arange(3)
    with pytest.raises(RuntimeError, match="aten::__lshift__.Tensor_out: shifts take integer tensors"):
        run_kernel("aten::__lshift__.Tensor_out", [f, i, torch.empty(3)])
    with pytest.raises(RuntimeError, match="aten::bitwise_right_shift.Tensor_Scalar_out: the shift amount"):
        run_kernel("aten::bitwise_right_shift.Tensor_Scalar_out", [i, 1.5, torch.empty_like(i)])
    with pytest.raises(RuntimeError, match="aten::__rshift__.Tensor_out: .*shape"):
        run_kernel("aten::__rshift__.Tensor_out", [i, i, torch.empty(4, dtype=torch.int64)])
