"""Orthogonal decompositions (portable kernels op_linalg_qr.cpp, op_linalg_eigh.cpp,
op_linalg_svd.cpp, op_linalg_pinv.cpp): models calling torch.linalg.qr (reduced, complete, r),
eigh (UPLO L and U), eigvalsh, svd (full_matrices True and False), svdvals, pinv (default, atol,
rtol, hermitian) and matrix_rank, exported, compiled onto the portable kernels and run, against
eager torch over float32 and float64, single matrices (square, tall, wide) and a batch.

Tolerance: |diff| <= 1e-4 (float32) or 1e-10 (float64) times max(1, max |A|) (atol), rtol the
same. QR follows LAPACK's geqr2 / org2r, so Q and R are compared with torch's directly (signs
included). eigh and svd are Jacobi iterations while torch calls syevd / gesdd: eigenvalues and
singular values are compared directly; vectors, whose signs are arbitrary, through A V = V diag(w)
/ U diag(S) Vh = A and orthonormality, and against torch's after flipping each column (each
singular pair together) so its largest-magnitude entry is positive (random matrices: distinct
eigen/singular values). Columns that full_matrices completes are checked for orthonormality only
(any basis of the complement is valid).
"""

import functools

import pytest
import torch
from kernel_harness import run_kernel

import pteron

A_ = torch.ops.aten
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: 1e-4, torch.float64: 1e-10}
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 4, 4)]
SQUARE = [(1, 1), (4, 4), (6, 6), (2, 3, 4, 4)]


def close(got, want, scale=1.0, what=""):
    tol = TOL[want.dtype]
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    torch.testing.assert_close(got, want, atol=tol * max(1.0, scale), rtol=tol, msg=lambda m: f"{what}: {m}")


def orthonormal_columns(q, what):
    eye = torch.eye(q.shape[-1], dtype=q.dtype).expand(*q.shape[:-2], -1, -1)
    close(q.mT @ q, eye, what=what)


def canonical(v):
    """v with each column flipped so that its largest-magnitude entry is positive, and the signs."""
    idx = v.abs().argmax(dim=-2, keepdim=True)
    sign = torch.sign(torch.gather(v, -2, idx))
    sign[sign == 0] = 1
    return v * sign, sign


def matrix(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


@functools.lru_cache(maxsize=None)
def run(model_cls, shape, dtype, seed=0):
    x = matrix(shape, dtype, seed)
    model = model_cls()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=["portable"], progress=False)
    return x, program.load().forward(x), model(x)


class QR(torch.nn.Module):
    def forward(self, x):
        q, r = torch.linalg.qr(x)
        qc, rc = torch.linalg.qr(x, mode="complete")
        q0, rr = torch.linalg.qr(x, mode="r")
        return q, r, qc, rc, q0, rr


class Eigh(torch.nn.Module):
    def forward(self, x):
        wl, vl = torch.linalg.eigh(x)  # x's lower triangle only: x itself is not symmetric
        wu, vu = torch.linalg.eigh(x, UPLO="U")
        w = torch.linalg.eigvalsh(x)
        w0, v0 = A_._linalg_eigh.default(x, "L", False)  # eigvalsh's form without autograd
        return wl, vl, wu, vu, w, w0, v0


class SVD(torch.nn.Module):
    def forward(self, x):
        u, s, vh = torch.linalg.svd(x, full_matrices=False)
        uf, sf, vhf = torch.linalg.svd(x)
        sv = torch.linalg.svdvals(x)
        u0, s0, vh0 = A_._linalg_svd.default(x, False, False)  # svdvals's form without autograd
        return u, s, vh, uf, sf, vhf, sv, u0, s0, vh0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_is_lapacks_in_every_mode(dtype, shape):
    x, got, want = run(QR, shape, dtype)
    scale = float(x.abs().max())
    names = ["Q reduced", "R reduced", "Q complete", "R complete", "Q (mode r)", "R (mode r)"]
    for g, w, name in zip(got, want, names):
        close(g, w, scale, name)
    q, r, qc, rc = got[:4]
    close(q @ r, x, scale, "Q R = A")
    close(qc @ rc, x, scale, "Q R = A (complete)")
    orthonormal_columns(qc, "Q complete orthogonal")
    assert got[4].shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_eigh_from_either_triangle(dtype, shape):
    x, got, want = run(Eigh, shape, dtype)
    wl, vl, wu, vu, w, w0, v0 = got
    for uplo, (gw, gv), (tw, tv) in [("L", (wl, vl), want[:2]), ("U", (wu, vu), want[2:4])]:
        sym = x.tril() + x.tril(-1).mT if uplo == "L" else x.triu() + x.triu(1).mT
        scale = float(sym.abs().max())
        close(gw, tw, scale, f"eigenvalues {uplo}")
        assert bool((gw[..., 1:] >= gw[..., :-1]).all()), "eigenvalues ascending"
        close(sym @ gv, gv * gw.unsqueeze(-2), scale, f"A V = V diag(w) {uplo}")
        orthonormal_columns(gv, f"V orthonormal {uplo}")
        close(canonical(gv)[0], canonical(tv)[0], 1.0, f"eigenvectors {uplo} (canonical signs)")
    close(w, want[4], float(x.abs().max()), "eigvalsh")
    close(w0, want[5], float(x.abs().max()), "eigenvalues (compute_v=False)")
    assert v0.shape == want[6].shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_reduced_full_and_values(dtype, shape):
    x, got, want = run(SVD, shape, dtype)
    u, s, vh, uf, sf, vhf, sv, u0, s0, vh0 = got
    k = min(shape[-2:])
    scale = float(x.abs().max())
    for g, w, name in [(s, want[1], "S"), (sf, want[4], "S full"), (sv, want[6], "svdvals"), (s0, want[8], "S only")]:
        close(g, w, scale, name)
    assert bool((s[..., 1:] <= s[..., :-1]).all()), "singular values descending"
    assert u0.shape == vh0.shape == want[7].shape == (0,)
    for gu, gvh, tu, tvh, name in [(u, vh, want[0], want[2], "reduced"), (uf, vhf, want[3], want[5], "full")]:
        assert gu.shape == tu.shape and gvh.shape == tvh.shape, name
        close(gu[..., :k] @ torch.diag_embed(s) @ gvh[..., :k, :], x, scale, f"U S Vh = A ({name})")
        orthonormal_columns(gu, f"U orthonormal ({name})")
        orthonormal_columns(gvh.mT, f"Vh orthonormal ({name})")
        # Each singular pair flipped together, by U's column.
        cu, sign = canonical(gu[..., :k])
        tcu, tsign = canonical(tu[..., :k])
        close(cu, tcu, 1.0, f"U (canonical signs, {name})")
        close(gvh[..., :k, :] * sign.mT, tvh[..., :k, :] * tsign.mT, 1.0, f"Vh (canonical signs, {name})")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_svd_of_rank_deficient_matrices_completes_the_bases(dtype, shape):
    # Rank 1 plus a zero column: U's columns past the rank come from the completion.
    a = matrix(shape[:-1] + (1,), torch.float64, 1) @ matrix((1, shape[-1]), torch.float64, 2)
    a[..., 0] = 0
    a = a.to(dtype)
    got = [torch.empty(t.shape, dtype=dtype) for t in A_._linalg_svd(a, True, True)]
    run_kernel("aten::_linalg_svd.U", [a, True, True, None, *got])
    u, s, vh = got
    k = min(shape)
    close(s, torch.linalg.svdvals(a), float(a.abs().max()), "S")
    close(u[:, :k] @ torch.diag(s) @ vh[:k], a, float(a.abs().max()), "U S Vh = A")
    orthonormal_columns(u, "U orthonormal")
    orthonormal_columns(vh.mT, "Vh orthonormal")


def test_qr_of_a_transposed_input_and_a_zero_column():
    a = matrix((3, 5), torch.float64, 3)
    a[:, 1] = 0

    class M(torch.nn.Module):
        def forward(self, x):
            q, r = torch.linalg.qr(x.mT, mode="complete")
            return q, r

    got = pteron.to_edge_transform_and_lower(pteron.export(M(), (a,)), kernels=["portable"], progress=False).load().forward(a)
    for g, w in zip(got, M()(a)):
        close(g, w, float(a.abs().max()))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_inputs_end_without_hanging(value):
    a = matrix((4, 4), torch.float32, 4)
    a[1, 0] = a[0, 1] = value
    q, r = torch.empty(4, 4), torch.empty(4, 4)
    run_kernel("aten::linalg_qr.out", [a, "reduced", q, r])
    assert not bool(torch.isfinite(r).all())
    w, v = torch.empty(4), torch.empty(4, 4)
    run_kernel("aten::_linalg_eigh.eigenvalues", [a, "L", True, w, v])
    assert bool(w.isnan().all() and v.isnan().all())
    u, s, vh = torch.empty(4, 4), torch.empty(4), torch.empty(4, 4)
    run_kernel("aten::_linalg_svd.U", [a, False, True, None, u, s, vh])
    assert bool(s.isnan().all() and u.isnan().all())


def test_integer_input_and_bad_mode_fail_in_one_line():
    a = torch.ones(3, 3, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="dtype int32 not supported"):
        run_kernel("aten::linalg_qr.out", [a, "reduced", torch.empty_like(a), torch.empty_like(a)])
    x = torch.randn(3, 3)
    with pytest.raises(RuntimeError, match="mode must be"):
        run_kernel("aten::linalg_qr.out", [x, "full", torch.empty(3, 3), torch.empty(3, 3)])
    with pytest.raises(RuntimeError, match="UPLO must be"):
        run_kernel("aten::_linalg_eigh.eigenvalues", [x, "X", True, torch.empty(3), torch.empty(3, 3)])


class Pinv(torch.nn.Module):
    def forward(self, a):
        h = a[..., : min(a.shape[-2:]), : min(a.shape[-2:])]
        h = h + h.mT
        return (torch.linalg.pinv(a), torch.linalg.pinv(h, hermitian=True), torch.linalg.pinv(a, atol=0.5),
                torch.linalg.pinv(a, rtol=0.3), torch.linalg.matrix_rank(a))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pseudo_inverse_drops_what_torch_drops(dtype, shape):
    # The pseudo-inverse is unique (no sign freedom): compared with torch's directly, with the
    # default tolerance, an atol and an rtol that drop singular values, the hermitian form and
    # the rank; a matrix whose third column is the sum of the first two loses one value.
    a = matrix(shape, dtype, 3)
    if shape == (5, 3):
        a[:, 2] = a[:, 0] + a[:, 1]
    program = pteron.to_edge_transform_and_lower(pteron.export(Pinv(), (a,)), kernels=["portable"], progress=False)
    got = program.load().forward(a)
    for k, (g, w) in enumerate(zip(got, Pinv()(a), strict=True)):
        if not w.is_floating_point():  # the rank
            assert torch.equal(torch.as_tensor(g), w)
            continue
        close(torch.as_tensor(g), w, scale=float(w.abs().max()) if w.numel() else 1.0, what=f"output {k}")
    if shape == (5, 3):
        assert int(torch.as_tensor(got[-1])) == 2


def test_pseudo_inverse_tolerances_of_the_wrong_dtype_fail_in_one_line():
    a = torch.randn(3, 3)
    with pytest.raises(RuntimeError, match="atol must be float32 or float64") as error:
        run_kernel("aten::linalg_pinv.atol_rtol_tensor_out", [a, torch.tensor(1), None, False, torch.empty(3, 3)])
    assert "\n" not in str(error.value)
