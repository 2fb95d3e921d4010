"""Dense linear algebra (portable kernels, kernels/portable/op_linalg_*.cpp): LU factorisation
and solves, inverse, determinant and log-determinant, Cholesky, triangular solves, against
torch.linalg over float32 and float64, batches whose dims broadcast, left and right sides,
adjoints, transposed (strided) inputs, singular and indefinite matrices (info, det 0, slogdet's
sign 0 and -inf as torch); models calling torch.linalg.inv / solve / cholesky / det / slogdet /
lu_factor / lu_solve / solve_triangular and a Gaussian process on the older torch.cholesky /
cholesky_solve / cholesky_inverse / triangular_solve compiled on the default program and on
portable, the error checks torch.linalg raises becoming one-line run-time errors.

Tolerance: pteron factors as LAPACK's unblocked getf2 / potf2 do, torch calls the blocked
routines (other rounding order): |diff| <= 1e-4 (float32) or 1e-10 (float64) relative, on
matrices of condition number below about 1e2 (diagonally dominated). Pivots and info exact.
"""

import pytest
import torch
from kernel_harness import run_kernel

import pteron

A_ = torch.ops.aten
G = torch.Generator().manual_seed(0)
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10)}


def well_conditioned(*shape, dtype=torch.float32):
    n = shape[-1]
    return (torch.randn(shape, generator=G, dtype=torch.float64) + 3 * torch.eye(n, dtype=torch.float64)).to(dtype)


def spd(*shape, dtype=torch.float32):
    a = torch.randn(shape, generator=G, dtype=torch.float64)
    return (a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)).to(dtype)


def close(got, want):
    atol, rtol = TOL[want.dtype]
    torch.testing.assert_close(got, want, atol=atol * max(1.0, float(want.abs().max())), rtol=rtol)


def empty(t, dtype=None):
    return torch.empty(t.shape, dtype=dtype or t.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5), (5, 3), (2, 3, 3, 3)])
def test_lu_factor_is_lapacks(dtype, shape):
    a = torch.randn(shape, generator=G, dtype=dtype)
    lu, piv, info = A_.linalg_lu_factor_ex(a)
    got = [empty(lu), empty(piv), empty(info)]
    run_kernel("aten::linalg_lu_factor_ex.out", [a, True, False, *got])
    close(got[0], lu)
    assert torch.equal(got[1], piv) and torch.equal(got[2], info)


def test_lu_factor_reports_the_first_zero_pivot_as_torch():
    a = torch.tensor([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],  # rank 2
                      [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]]])  # a zero column
    lu, piv, info = A_.linalg_lu_factor_ex(a)
    got = [empty(lu), empty(piv), empty(info)]
    run_kernel("aten::linalg_lu_factor_ex.out", [a, True, False, *got])
    assert info.tolist() == got[2].tolist() and info.tolist() != [0, 0]
    assert torch.equal(got[1], piv)
    with pytest.raises(RuntimeError, match=r"linalg_lu_factor_ex.out: batch element 0: the matrix is singular"):
        run_kernel("aten::linalg_lu_factor_ex.out", [a, True, True, *got])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_is_torchs(dtype, left, adjoint):
    a = well_conditioned(2, 4, 4, dtype=dtype)
    lu, piv, _ = A_.linalg_lu_factor_ex(a)
    b = torch.randn((3, 1, 4, 2) if left else (3, 1, 2, 4), generator=G, dtype=dtype)  # batch broadcasts
    want = torch.linalg.lu_solve(lu, piv, b, left=left, adjoint=adjoint)
    got = empty(want)
    run_kernel("aten::linalg_lu_solve.out", [lu, piv, b, left, adjoint, got])
    close(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape,b_shape,left", [
    ((4, 4), (4, 3), True), ((2, 4, 4), (4, 3), True), ((1, 3, 3), (5, 3, 2), True),
    ((2, 3, 3), (2, 3), True), ((2, 3, 3), (3,), True),  # torch's vector cases
    ((2, 3, 3), (2, 5, 3), False)])
def test_solve_is_torchs(dtype, a_shape, b_shape, left):
    a = well_conditioned(*a_shape, dtype=dtype)
    b = torch.randn(b_shape, generator=G, dtype=dtype)
    want = A_._linalg_solve_ex(a, b, left=left)
    got = [empty(t) for t in want]
    run_kernel("aten::_linalg_solve_ex.result", [a, b, left, False, *got])
    close(got[0], want[0])
    close(got[1], want[1])
    assert torch.equal(got[2], want[2]) and torch.equal(got[3], want[3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_is_torchs_including_transposed_input(dtype):
    a = well_conditioned(3, 5, 5, dtype=dtype).mT  # strided: column-major matrices
    inverse, info = A_.linalg_inv_ex(a)
    got = [empty(inverse), empty(info)]
    run_kernel("aten::linalg_inv_ex.inverse", [a, False, *got])
    close(got[0], inverse)
    assert torch.equal(got[1], info)


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_and_slogdet_are_torchs_including_singular_matrices(dtype):
    a = torch.randn(5, 4, 4, generator=G, dtype=dtype)
    a[1, :, 2] = 0  # exactly singular in any elimination order
    a[2] = 0
    a[3] = torch.diag(torch.tensor([-1.0, 2.0, -3.0, 0.5], dtype=dtype))
    det, lu, piv = A_._linalg_det(a)
    got = [empty(det), empty(lu), empty(piv)]
    run_kernel("aten::_linalg_det.result", [a, *got])
    close(got[0], det)
    sign, logabs, lu, piv = A_._linalg_slogdet(a)
    got = [empty(sign), empty(logabs), empty(lu), empty(piv)]
    run_kernel("aten::_linalg_slogdet.sign", [a, *got])
    assert torch.equal(got[0], sign)  # 0 for the singular ones, as torch
    assert got[1][1] == got[1][2] == logabs[1] == logabs[2] == float("-inf")
    close(got[1][[0, 3, 4]], logabs[[0, 3, 4]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_is_torchs(dtype, upper):
    a = spd(3, 5, 5, dtype=dtype)
    want, info = A_.linalg_cholesky_ex(a, upper=upper)
    got = [empty(want), empty(info)]
    run_kernel("aten::linalg_cholesky_ex.L", [a, upper, False, *got])
    close(got[0], want)
    assert torch.equal(got[1], info)


def test_cholesky_reports_the_minor_that_is_not_positive_definite():
    a = spd(2, 4, 4, dtype=torch.float64)
    a[1, 2, 2] = -50.0
    _, info = A_.linalg_cholesky_ex(a)
    got = [torch.empty(2, 4, 4, dtype=torch.float64), torch.empty(2, dtype=torch.int32)]
    run_kernel("aten::linalg_cholesky_ex.L", [a, False, False, *got])
    assert got[1].tolist() == info.tolist() == [0, 3]
    with pytest.raises(RuntimeError, match="batch element 1: the matrix is not positive-definite "
                                           r"\(its leading minor of order 3 is not\)"):
        run_kernel("aten::linalg_cholesky_ex.L", [a, False, True, *got])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_is_torchs(dtype, upper, left, unit):
    a = well_conditioned(2, 1, 4, 4, dtype=dtype)  # the other triangle must not be read
    b = torch.randn((3, 4, 2) if left else (3, 2, 4), generator=G, dtype=dtype)
    want = torch.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
    got = empty(want)
    run_kernel("aten::linalg_solve_triangular.out", [a, b, upper, left, unit, got])
    close(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_older_cholesky_apis_are_torchs(dtype, upper):
    """torch.cholesky, cholesky_solve, cholesky_inverse (not decomposed): batch dims broadcast."""
    a = spd(2, 4, 4, dtype=dtype)
    factor = torch.cholesky(a, upper=upper)
    got = empty(factor)
    run_kernel("aten::cholesky.out", [a, upper, got])
    close(got, factor)
    b = torch.randn(3, 1, 4, 2, generator=G, dtype=dtype)
    want = torch.cholesky_solve(b, factor, upper=upper)
    got = empty(want)
    run_kernel("aten::cholesky_solve.out", [b, factor, upper, got])
    close(got, want)
    want = torch.cholesky_inverse(factor[0], upper=upper)
    got = empty(want)
    run_kernel("aten::cholesky_inverse.out", [factor[0], upper, got])
    close(got, want)
    a[1, 0, 0] = -1.0
    with pytest.raises(RuntimeError, match="cholesky.out: batch element 1: the matrix is not positive-definite"):
        run_kernel("aten::cholesky.out", [a, upper, empty(a)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_older_triangular_solve_is_torchs(dtype, upper, transpose, unit):
    a = well_conditioned(4, 4, dtype=dtype)
    b = torch.randn(2, 4, 3, generator=G, dtype=dtype)
    x, m = torch.triangular_solve(b, a, upper=upper, transpose=transpose, unitriangular=unit)
    got = [empty(x), empty(m)]
    run_kernel("aten::triangular_solve.X", [b, a, upper, transpose, unit, *got])
    close(got[0], x)
    assert torch.equal(got[1], m)


def test_malformed_arguments_are_refused_in_one_line():
    a, b = torch.randn(3, 3), torch.randn(3, 2)
    with pytest.raises(RuntimeError, match="linalg_inv_ex.inverse: A must be a batch of square matrices"):
        run_kernel("aten::linalg_inv_ex.inverse", [torch.randn(3, 4), False, torch.empty(3, 4),
                                                   torch.empty((), dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="dtype int64 not supported"):
        run_kernel("aten::linalg_inv_ex.inverse", [torch.ones(3, 3, dtype=torch.int64), False,
                                                   torch.empty(3, 3, dtype=torch.int64),
                                                   torch.empty((), dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="linalg_solve_triangular.out: B has 2 rows, A is 3x3"):
        run_kernel("aten::linalg_solve_triangular.out", [a, b.T, True, True, False, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match="batch dims do not broadcast"):
        run_kernel("aten::_linalg_solve_ex.result", [torch.randn(2, 3, 3), torch.randn(4, 3, 2), True, False,
                                                     torch.empty(4, 3, 2), torch.empty(2, 3, 3),
                                                     torch.empty(2, 3, dtype=torch.int32),
                                                     torch.empty(2, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="a vector B is solved from the left only"):
        run_kernel("aten::_linalg_solve_ex.result", [a, torch.randn(3), False, False, torch.empty(3),
                                                     torch.empty(3, 3), torch.empty(3, dtype=torch.int32),
                                                     torch.empty((), dtype=torch.int32)])
    lu, piv, _ = A_.linalg_lu_factor_ex(a)
    with pytest.raises(RuntimeError, match="pivot 7 out of range 1..3"):
        run_kernel("aten::linalg_lu_solve.out", [lu, torch.tensor([7, 2, 3], dtype=torch.int32), b, True, False,
                                                 torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented"):
        run_kernel("aten::linalg_lu_factor_ex.out", [a, False, False, torch.empty(3, 3),
                                                     torch.empty(3, dtype=torch.int32), torch.empty((), dtype=torch.int32)])


class Geometry(torch.nn.Module):
    """What a pose / Kalman / flow model does with small matrices."""

    def forward(self, a, b, cov):
        inv = torch.linalg.inv(a)
        x = torch.linalg.solve(a, b)
        chol = torch.linalg.cholesky(cov)
        white = torch.linalg.solve_triangular(chol, b, upper=False)
        sign, logabs = torch.linalg.slogdet(cov)
        lu, piv = torch.linalg.lu_factor(a)
        y = torch.linalg.lu_solve(lu, piv, b, adjoint=True)
        return inv, x, white, torch.linalg.det(a), sign * logabs, y


class GaussianProcess(torch.nn.Module):
    """A GP posterior mean and variance the way older code writes it."""

    def forward(self, k, y, k_star):
        chol = torch.cholesky(k)
        alpha = torch.cholesky_solve(y, chol)
        v = torch.triangular_solve(k_star.mT, chol, upper=False).solution
        return k_star @ alpha, (v * v).sum(-2), torch.cholesky_inverse(chol)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_gaussian_process_matches_torch(kernels):
    k, y, k_star = spd(6, 6), torch.randn(6, 1, generator=G), torch.randn(3, 6, generator=G)
    model = GaussianProcess().eval()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (k, y, k_star)), kernels=kernels,
                                                 progress=False).load()
    for got, want in zip(program.forward(k, y, k_star), model(k, y, k_star)):
        close(torch.as_tensor(got), want)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_linalg_model_matches_torch_and_refuses_singular_input_at_run_time(kernels):
    a, b, cov = well_conditioned(2, 3, 3), torch.randn(2, 3, 2, generator=G), spd(2, 3, 3)
    model = Geometry().eval()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (a, b, cov)), kernels=kernels,
                                                 progress=False).load()
    for got, want in zip(program.forward(a, b, cov), model(a, b, cov)):
        close(torch.as_tensor(got), want)
    singular = a.clone()
    singular[1] = 0
    with pytest.raises(RuntimeError, match="batch element 1: the matrix is singular"):
        program.forward(singular, b, cov)
    indefinite = cov.clone()
    indefinite[0] = -indefinite[0]
    with pytest.raises(RuntimeError, match="batch element 0: the matrix is not positive-definite"):
        program.forward(a, b, indefinite)
    # the program keeps working after a refused call
    close(torch.as_tensor(program.forward(a, b, cov)[1]), model(a, b, cov)[1])


def test_a_check_of_no_linalg_result_is_refused_at_compile_time():
    class Checks(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten._linalg_check_errors(torch.zeros((), dtype=torch.int32), "x", is_matrix=True) or x

    # _linalg_check_errors on an info no linalg op computed: refused naming it.
    ep = pteron.export(Checks(), (torch.randn(3),))
    with pytest.raises(pteron.CompileError, match="which no linalg \\*_ex op computes"):
        pteron.to_edge_transform_and_lower(ep, progress=False)
