"""The optimized library's max.dim, min.dim, argmax and argmin on float32 against torch, exactly
(values and positions), at 1 and 2 threads: along the last dim (rows) and along others
(columns, vectorised across the inner dims), ties (the first position), NaN (the extreme, its
first position), signed zeros, keepdim; and what goes to the portable kernels (other dtypes,
non-contiguous inputs, argmax over all dims, bad dims)."""

import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


def data(shape):
    x = torch.randint(-4, 5, shape, generator=GEN).float()  # many ties
    x += torch.randn(shape, generator=GEN) * (torch.rand(shape, generator=GEN) > 0.5)
    flat = x.view(-1)
    flat[::211] = float("nan")
    flat[5::97] = -0.0
    return x


SHAPES = [((2, 4000, 20), -1), ((8000, 21), 1), ((1, 21, 64, 64), 1), ((3, 5, 7), 0), ((3, 5, 7), 1),
          ((1, 1000), 1), ((17,), 0), ((4, 1, 3), 1), ((2, 3, 2100), 1)]


def same(got, want):
    return torch.equal(got.nan_to_num(7.0), want.nan_to_num(7.0)) and torch.equal(torch.signbit(got),
                                                                                  torch.signbit(want))


@pytest.mark.parametrize("shape,dim", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_extreme_along_dim_matches_torch(threads, shape, dim, op, keepdim):
    x = data(shape)
    want_v, want_i = getattr(torch, op)(x, dim, keepdim)
    v, i = torch.empty_like(want_v), torch.empty_like(want_i)
    run_kernel(f"aten::{op}.dim_{op}", [x, dim, keepdim, v, i], library="optimized")
    assert torch.equal(i, want_i)
    assert same(v, want_v)
    fn = getattr(torch, f"arg{op}")
    out = torch.empty_like(want_i)
    run_kernel(f"aten::arg{op}.out", [x, dim, keepdim, out], library="optimized")
    assert torch.equal(out, fn(x, dim, keepdim))


def test_argmax_of_a_vector_and_other_layouts_match_torch():
    v = data((1000,))
    out = torch.empty((), dtype=torch.int64)
    run_kernel("aten::argmax.out", [v, None, False, out], library="optimized")
    assert out.item() == torch.argmax(v).item()
    x = data((6, 9, 4))
    for inp, dim in ((x.double(), 1), (x.transpose(0, 2), 1), (x, None)):
        want = torch.argmax(inp) if dim is None else torch.argmax(inp, dim)
        out = torch.empty_like(want)
        run_kernel("aten::argmax.out", [inp, dim, False, out], library="optimized")
        assert torch.equal(out, want), (inp.dtype, inp.stride(), dim)


def test_bad_dims_get_the_portable_error():
    x = data((3, 4))
    with pytest.raises(RuntimeError, match="max.dim"):
        run_kernel("aten::max.dim_max", [x, 2, False, torch.empty(3), torch.empty(3, dtype=torch.int64)],
                   library="optimized")
    with pytest.raises(RuntimeError, match="argmin"):
        run_kernel("aten::argmin.out", [torch.empty(3, 0), 1, False, torch.empty(3, dtype=torch.int64)],
                   library="optimized")
