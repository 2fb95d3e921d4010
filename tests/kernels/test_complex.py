"""Complex tensors (complex64, complex128) through the kernels ExecuTorch's portable list runs on
them, _conj_physical.out and view_as_real_copy.out, and the copies that move elements of any
size, against torch, exactly (no arithmetic beyond a sign flip); any dim orders; the compiler
refusing complex where no kernel computes on it; malformed arguments refused in one line."""

import numpy as np
import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, empty_with_dim_order, rand, random_order, with_dim_order

import pteron

COMPLEX = [torch.complex64, torch.complex128]


def crand(shape, dtype, g):
    t = torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g)).to(dtype)
    flat = t.view(-1)
    if flat.numel() >= 3:  # the sign flip must reach -0.0, infinities and NaN too
        flat[0] = complex(0.0, -0.0)
        flat[1] = complex(float("inf"), float("nan"))
        flat[2] = complex(1.0, float("-inf"))
    return t


def same_bits(a, b):
    """Equal parts, NaN in the same places, and the same signs (-0.0 and NaN included)."""
    ra, rb = torch.view_as_real(a), torch.view_as_real(b)
    return (torch.equal(ra.isnan(), rb.isnan()) and torch.equal(ra.nan_to_num(), rb.nan_to_num())
            and torch.equal(torch.signbit(ra), torch.signbit(rb)))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_conj_physical_every_dim_order(dtype):
    g = torch.Generator().manual_seed(0)
    for shape in [(), (5,), (2, 3, 4), (0, 3)]:
        x = with_dim_order(crand(shape, dtype, g), random_order(len(shape), g))
        out = empty_with_dim_order(shape, dtype, random_order(len(shape), g))
        run_kernel("aten::_conj_physical.out", [x, out])
        assert same_bits(out, torch.conj_physical(x)), shape


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_conj_physical_of_a_real_tensor_is_a_copy(dtype):
    g = torch.Generator().manual_seed(1)
    x = rand((3, 4), dtype, g)
    out = torch.empty_like(x)
    run_kernel("aten::_conj_physical.out", [x, out])
    assert torch.equal(out, torch.conj_physical(x))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_view_as_real_copy_every_dim_order(dtype):
    g = torch.Generator().manual_seed(2)
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    for shape in [(), (4,), (2, 3, 5), (3, 0)]:
        x = with_dim_order(crand(shape, dtype, g), random_order(len(shape), g))
        want = torch.view_as_real(x)
        out = empty_with_dim_order(want.shape, part, random_order(len(shape) + 1, g))
        run_kernel("aten::view_as_real_copy.out", [x, out])
        assert torch.equal(out.nan_to_num(), want.nan_to_num()) and torch.equal(out.isnan(), want.isnan())


@pytest.mark.parametrize("dtype", COMPLEX)
def test_copies_move_complex_elements(dtype):
    g = torch.Generator().manual_seed(3)
    x = crand((2, 3), dtype, g)
    cases = [("aten::clone.out", [x, None], x.clone()),
             ("aten::permute_copy.out", [x, [1, 0]], x.permute(1, 0)),
             ("aten::view_copy.out", [x, [3, 2]], x.reshape(3, 2)),
             ("aten::expand_copy.out", [x[:1], [4, 3], False], x[:1].expand(4, 3)),
             ("aten::slice_copy.Tensor_out", [x, 1, 0, 2, 1], x[:, :2]),
             ("aten::select_copy.int_out", [x, 0, 1], x[1]),
             ("aten::unsqueeze_copy.out", [x, 0], x[None]),
             ("aten::cat.out", [[x, x], 0], torch.cat([x, x])),
             ("aten::alias_copy.out", [x], x),
             ("aten::_to_copy.out", [x, False, None], x)]
    for name, args, want in cases:
        out = torch.empty(want.shape, dtype=dtype)
        run_kernel(name, args + [out])
        assert same_bits(out, want), name


def test_malformed_arguments_are_refused_in_one_line():
    x = torch.randn(2, 3, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="view_as_real_copy.out: self must be complex"):
        run_kernel("aten::view_as_real_copy.out", [torch.randn(2, 3), torch.empty(2, 3, 2)])
    with pytest.raises(RuntimeError, match="view_as_real_copy.out: out has dtype float64"):
        run_kernel("aten::view_as_real_copy.out", [x, torch.empty(2, 3, 2, dtype=torch.float64)])
    with pytest.raises(RuntimeError, match="view_as_real_copy.out: out has rank 2, expected 3"):
        run_kernel("aten::view_as_real_copy.out", [x, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match="_conj_physical.out: out has dtype"):
        run_kernel("aten::_conj_physical.out", [x, torch.empty(2, 3)])


class _ConjToReal(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_real(x.conj_physical().permute(1, 0)) * 2.0


def test_complex_model_compiles_and_runs_against_torch():
    x = torch.randn(3, 4, dtype=torch.complex64)
    program = pteron.to_edge_transform_and_lower(pteron.export(_ConjToReal(), (x,)), kernels=["portable"])
    got = program.load().forward(x)[0]
    assert torch.equal(got, _ConjToReal()(x))
    out = program.load().load_method("forward").execute([x.numpy()])[0]
    np.testing.assert_array_equal(out, _ConjToReal()(x).numpy())


def test_arithmetic_on_complex_is_refused_at_compile_time():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2

    ep = pteron.export(Scale(), (torch.randn(3, dtype=torch.complex64),))
    with pytest.raises(pteron.CompileError, match="aten::mul.out with complex tensors"):
        pteron.to_edge_transform_and_lower(ep, kernels=["portable"])
