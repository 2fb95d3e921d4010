"""Complex tensors (complex64, complex128) through the kernels ExecuTorch's portable list runs on
them, _conj_physical.out and view_as_real_copy.out, and the copies that move elements of any
size, against torch, exactly (no arithmetic beyond a sign flip); any dim orders; the compiler
refusing complex where no kernel computes on it; malformed arguments refused in one line.

Complex arithmetic (add, sub, mul with broadcasting and real operands, polar, abs,
view_as_complex_copy) and torch.complex (bit for bit) against torch: mul and polar within 1 ulp of the part type (torch's
vectorised complex multiply may fuse), add, sub, abs and the copies exact (add and sub up to the
sign of a zero or a NaN). Llama's reference RoPE
(view_as_complex, multiply by polar(1, freqs), view_as_real) compiles and matches torch."""

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
             ("aten::squeeze_copy.dims_out", [x[None], [0]], x),
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


def test_arithmetic_without_a_complex_kernel_is_refused_at_compile_time():
    class Exp(torch.nn.Module):
        def forward(self, x):
            return torch.exp(x)

    ep = pteron.export(Exp(), (torch.randn(3, dtype=torch.complex64),))
    with pytest.raises(pteron.CompileError, match="aten::exp.out with complex tensors"):
        pteron.to_edge_transform_and_lower(ep, kernels=["portable"])


def test_complex32_is_refused_at_compile_time():
    """view_as_complex of a float16 tensor makes complex32, which no kernel computes or converts:
    refused when compiling (it used to compile and fail on the first call)."""

    class HalfRotate(torch.nn.Module):
        def forward(self, x):
            return torch.view_as_real(torch.view_as_complex(x))

    ep = pteron.export(HalfRotate(), (torch.randn(4, 2, dtype=torch.float16),))
    with pytest.raises(pteron.CompileError, match="view_as_complex_copy.out with complex tensors"):
        pteron.to_edge_transform_and_lower(ep)


def close_bits(got, want):
    """Parts within 1 ulp of the part type, NaN in the same places."""
    eps = torch.finfo(torch.view_as_real(want).dtype).eps
    torch.testing.assert_close(torch.view_as_real(got), torch.view_as_real(want), rtol=2 * eps,
                               atol=4 * eps, equal_nan=True)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_complex_arithmetic_is_torchs(dtype, op):
    g = torch.Generator().manual_seed(5)
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    for a, b in [(crand((3, 4), dtype, g), crand((3, 4), dtype, g)),  # same shape, NaN and inf
                 (crand((2, 1, 5), dtype, g), crand((4, 1), dtype, g)),  # broadcast
                 (crand((3, 4), dtype, g), torch.randn(4, generator=g).to(part)),  # real operand
                 (torch.randint(-3, 3, (3, 1), generator=g), crand((3, 4), dtype, g))]:  # int64
        args = [a, b] + ([2.0] if op != "mul" else [])
        want = getattr(torch.ops.aten, op).Tensor(*args) if op == "mul" else \
            getattr(torch.ops.aten, op).Tensor(a, b, alpha=2.0)
        got = torch.empty_like(want)
        run_kernel(f"aten::{op}.out", args + [got])
        if op == "mul":
            close_bits(got, want)
        else:  # exact values; a zero's or NaN's sign may differ (torch's vectorised alpha * b)
            torch.testing.assert_close(torch.view_as_real(got), torch.view_as_real(want), rtol=0, atol=0,
                                       equal_nan=True)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_from_parts_is_torchs(dtype):
    # torch.complex(re, im), broadcasting; its -0.0, infinities and NaN parts kept bit for bit.
    g = torch.Generator().manual_seed(7)
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    re = torch.randn(4, 1, 3, generator=g).to(part)
    im = torch.randn(5, 3, generator=g).to(part)
    re.view(-1)[:3] = torch.tensor([-0.0, float("inf"), float("nan")])
    want = torch.complex(re, im)
    got = torch.empty_like(want)
    run_kernel("aten::complex.out", [re, im, got])
    assert torch.equal(torch.view_as_real(got).view(torch.int8 if part == torch.float32 else torch.int16),
                       torch.view_as_real(want).view(torch.int8 if part == torch.float32 else torch.int16))
    with pytest.raises(RuntimeError, match="complex.out: dtypes float32, float64"):
        run_kernel("aten::complex.out", [re.float(), im.double(), got])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_polar_abs_and_view_as_complex_are_torchs(dtype):
    g = torch.Generator().manual_seed(6)
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    r, theta = torch.rand(5, 3, generator=g).to(part) * 3, torch.randn(3, generator=g).to(part) * 4
    want = torch.polar(r.abs(), theta.expand(5, 3))
    got = torch.empty_like(want)
    run_kernel("aten::polar.out", [r.abs(), theta, got])
    close_bits(got, want)
    z = crand((4, 3), dtype, g)
    want = z.abs()
    got = torch.empty_like(want)
    run_kernel("aten::abs.out", [z, got])
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    pairs = torch.randn(2, 3, 2, generator=g).to(part)
    got = torch.empty(2, 3, dtype=dtype)
    run_kernel("aten::view_as_complex_copy.out", [pairs, got])
    assert torch.equal(got, torch.view_as_complex(pairs))
    with pytest.raises(RuntimeError, match="view_as_complex_copy.out: self's last dim must have size 2"):
        run_kernel("aten::view_as_complex_copy.out", [torch.randn(2, 3).to(part), torch.empty(2, dtype=dtype)])
    with pytest.raises(RuntimeError, match="polar.out: dtypes int64, int64"):
        run_kernel("aten::polar.out", [torch.ones(3, dtype=torch.long), torch.ones(3, dtype=torch.long), got[0]])


class LlamaReferenceRope(torch.nn.Module):
    """Meta's Llama reference attention's rotary embedding: precompute_freqs_cis (torch.polar) in
    the forward, and a freqs_cis buffer; apply_rotary_emb (view_as_complex, a complex multiply,
    view_as_real); then real attention scores."""

    def __init__(self, dim=16, length=32):
        super().__init__()
        freqs = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("angles", torch.outer(torch.arange(length).float(), freqs))
        self.register_buffer("freqs_cis", torch.polar(torch.ones(length, dim // 2), self.angles))

    def forward(self, q, k):
        seq = q.shape[1]
        computed = torch.polar(torch.ones_like(self.angles), self.angles)[:seq]

        def rotate(x, f):
            xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(xc * f.view(1, seq, 1, -1)).flatten(3).type_as(x)

        qr, kr = rotate(q, computed), rotate(k, self.freqs_cis[:seq])
        scores = torch.einsum("bqhd,bkhd->bhqk", qr, kr) / 4.0
        return qr, torch.softmax(scores, -1), (torch.view_as_complex(q.reshape(*q.shape[:-1], -1, 2)) * 2).abs()


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_llama_reference_rope_matches_torch(kernels):
    torch.manual_seed(0)
    model, q, k = LlamaReferenceRope().eval(), torch.randn(2, 10, 3, 16), torch.randn(2, 10, 3, 16)
    with torch.no_grad():
        want = model(q, k)
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (q, k)),
                                                 **({"kernels": kernels} if kernels else {}))
    got = program.load().forward(q, k)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(torch.as_tensor(g), w, rtol=1e-5, atol=1e-5)


class SpectralMix(torch.nn.Module):
    """A Fourier layer's pointwise complex weights built with torch.complex from real parameters
    (folded to a complex constant at compile time), and a runtime torch.complex of the input."""

    def __init__(self):
        super().__init__()
        self.wr, self.wi = torch.nn.Parameter(torch.randn(8)), torch.nn.Parameter(torch.randn(8))

    def forward(self, re, im):
        z = torch.complex(re, im) * torch.complex(self.wr, self.wi)
        return torch.view_as_real(z)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_torch_complex_in_a_model_matches_torch(kernels):
    torch.manual_seed(0)
    model, re, im = SpectralMix().eval(), torch.randn(3, 8), torch.randn(3, 8)
    with torch.no_grad():
        want = model(re, im)
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (re, im)),
                                                 **({"kernels": kernels} if kernels else {}))
    got = torch.as_tensor(program.load().forward(re, im)[0])
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
