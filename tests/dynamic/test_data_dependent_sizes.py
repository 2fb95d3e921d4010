"""Data-dependent output sizes end to end (torch's unbacked SymInts): nonzero, masked_select,
x[mask] and argwhere export with a length u0 that only running the model tells. pteron plans
their outputs at the upper bound (range_constraints' max, else the input's numel) as
DYNAMIC_BOUND tensors the kernels resize, reads u0 at run time from the output right after its
node (for later view / zeros arguments), drops export's guards the bound implies and checks the
others at run time. Sizes read from tensor values (item(), tolist() split sizes) likewise. Checked
through `pteron compile` + `pteron run` and one loaded method rerun with results of every
length, empty and full included, against PyTorch (integers exactly, float32 within 1e-6)."""

import subprocess

import numpy as np
import pytest
import torch

import pteron
from pteron_cli import pteron_cli


class Nonzero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x)


class MaskedSelect(torch.nn.Module):
    """masked_select with a broadcast mask, then a view and a sum over the selection."""

    def forward(self, x, m):
        y = torch.masked_select(x, m)
        return y.view(-1, 1) * 2.0, y.sum()


class BoolIndex(torch.nn.Module):
    def forward(self, x):
        return x[x > 0]


class LengthOnly(torch.nn.Module):
    """Only nonzero's length is used: zeros(u0, 3), so u0 is read from an output no node reads."""

    def forward(self, x):
        return torch.zeros(torch.nonzero(x).shape[0], 3) + 1.0


class Argwhere(torch.nn.Module):
    def forward(self, x):
        i = torch.argwhere(x > 0.5)
        return i[:, 1] + 1, i.float().mean(0)


def cli(*args):
    return subprocess.run([pteron_cli(), *args], capture_output=True, text=True)


def _export(model, args, tmp_path, name):
    pt2 = tmp_path / f"{name}.pt2"
    torch.export.save(pteron.export(model, args), pt2)
    return pt2


def _compare(got, want):
    got = torch.as_tensor(np.asarray(got))
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    if want.is_floating_point():
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        assert torch.equal(got, want)


def _masks(shape):
    """Inputs giving every kind of length: none selected, all selected, some."""
    g = torch.Generator().manual_seed(0)
    return [torch.zeros(shape), torch.ones(shape), (torch.rand(shape, generator=g) > 0.6).float(),
            torch.randn(shape, generator=g)]


@pytest.mark.parametrize("backends", ["portable", "xnnpack,optimized,portable"])
def test_nonzero_compiles_with_the_cli_and_runs_every_length(backends, tmp_path):
    pt2 = _export(Nonzero(), (torch.randn(3, 4),), tmp_path, "nonzero")
    pte = tmp_path / "nonzero.pte"
    run = cli("compile", str(pt2), "-o", str(pte), "--backends", backends)
    assert run.returncode == 0, run.stderr
    for i, x in enumerate(_masks((3, 4))):
        np.savez(tmp_path / "in.npz", input_0=x.numpy())
        out = tmp_path / f"out{i}.npz"
        run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out))
        assert run.returncode == 0, run.stderr
        _compare(np.load(out)["output_0"], torch.nonzero(x))


def test_program_plans_the_output_at_its_bound(tmp_path):
    pt2 = _export(Nonzero(), (torch.randn(3, 4),), tmp_path, "nonzero")
    pte = tmp_path / "nonzero.pte"
    assert cli("compile", str(pt2), "-o", str(pte), "--backends", "portable").returncode == 0
    meta = pteron.load(pte).method_meta("forward")
    assert meta["outputs"][0]["shape"] == [12, 2], meta["outputs"]


@pytest.mark.parametrize("model, make_args", [
    (MaskedSelect(), lambda x: (x, torch.rand(1, 5) > 0.5)),
    (BoolIndex(), lambda x: (x,)),
    (LengthOnly(), lambda x: (x,)),
    (Argwhere(), lambda x: (x,)),
], ids=["masked_select_view_sum", "bool_index", "length_only", "argwhere"])
def test_one_loaded_method_runs_every_length(model, make_args, tmp_path):
    pt2 = _export(model, make_args(torch.randn(4, 5)), tmp_path, "m")
    program = pteron.to_edge_transform_and_lower(str(pt2), kernels=["portable"])
    method = program.load().load_method("forward")
    for x in _masks((4, 5)) + [torch.randn(4, 5)]:
        args = make_args(x)
        want = model(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = method.execute([a.numpy() for a in args])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)


class AtLeastTwo(torch.nn.Module):
    def forward(self, x):
        i = torch.nonzero(x)
        torch._check(i.shape[0] >= 2)
        return i


def test_a_guard_the_bound_does_not_imply_is_checked_at_run_time(tmp_path):
    pt2 = _export(AtLeastTwo(), (torch.ones(3, 4),), tmp_path, "guard")
    pte = tmp_path / "g.pte"
    run = cli("compile", str(pt2), "-o", str(pte), "--backends", "portable")
    assert run.returncode == 0, run.stderr
    one = torch.zeros(3, 4)
    one[1, 2] = 1.0
    for x, holds in [(torch.ones(3, 4), True), (torch.eye(3, 4), True), (one, False)]:
        np.savez(tmp_path / "in.npz", input_0=x.numpy())
        run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz"))
        if holds:
            assert run.returncode == 0, run.stderr
            _compare(np.load(tmp_path / "out.npz")["output_0"], torch.nonzero(x))
            continue
        assert run.returncode == 1, run.stdout
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "Runtime assertion failed for expression u0 >= 2" in lines[0], run.stderr
        assert "(sizes 1 and 2)" in lines[0], run.stderr


class PairsOfSelected(torch.nn.Module):
    """x[x > 0].view(-1, 2): export asserts the selection's length is even."""

    def forward(self, x):
        return x[x > 0].view(-1, 2).sum(1)


class SameLength(torch.nn.Module):
    """Two selections asserted equal in length (torch._check), then added."""

    def forward(self, x, m1, m2):
        a, b = x[m1], x[m2]
        torch._check(a.shape[0] == b.shape[0])
        return a * b + 1.0


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_size_checks_run_with_the_program_and_fail_one_call(kernels):
    pairs = pteron.to_edge_transform_and_lower(pteron.export(PairsOfSelected(), (torch.tensor([1.0, -1, 2, 3]),)),
                                               kernels=kernels, progress=False).load()
    for x in [torch.tensor([1.0, -1, 2, -3]), torch.tensor([-1.0, -2, 0, 0]), torch.arange(1.0, 5.0)]:
        _compare(pairs.forward(x)[0], PairsOfSelected()(x))
    with pytest.raises(RuntimeError, match=r"Eq\(Mod\(u0, 2\), 0\).*\(sizes 1 and 0\)"):
        pairs.forward(torch.tensor([1.0, 2, 3, -4]))
    _compare(pairs.forward(torch.tensor([1.0, 2, -3, -4]))[0], torch.tensor([3.0]))  # still usable

    x = torch.randn(8)
    m1 = torch.tensor([1, 0, 1, 0, 1, 0, 0, 0], dtype=torch.bool)
    same = pteron.to_edge_transform_and_lower(pteron.export(SameLength(), (x, m1, m1.roll(1))),
                                              kernels=kernels, progress=False).load()
    for shift in (1, 3):
        _compare(same.forward(x, m1, m1.roll(shift))[0], SameLength()(x, m1, m1.roll(shift)))
    with pytest.raises(RuntimeError, match=r"Eq\(u0, u1\).*\(sizes 3 and 2\)"):
        same.forward(x, m1, torch.tensor([0, 1, 0, 0, 0, 1, 0, 0], dtype=torch.bool))
    _compare(same.forward(x, m1, m1)[0], SameLength()(x, m1, m1))


class FewHits(torch.nn.Module):
    """At most 4 hits in 4096 scores, as the model asserts: memory is planned for 4 rows."""

    def forward(self, x):
        i = torch.nonzero(x > 3.0)
        torch._check(i.shape[0] <= 4)
        return i.flatten() * 2


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_torch_check_tighter_than_the_operators_bound_is_what_memory_is_planned_at(kernels):
    x = torch.zeros(4096)
    x[[7, 100]] = 5.0
    few = pteron.to_edge_transform_and_lower(pteron.export(FewHits(), (x,)), kernels=kernels, progress=False)
    # nonzero's own bound is 4096 rows of int64 (32 KiB, twice with the product): the check's is 4
    assert few.report["planned_bytes"] < 4096 * 8, few.report["planned_bytes"]
    loaded = few.load()
    for hits in ([7, 100], [], [0, 1, 2, 4095]):
        x = torch.zeros(4096)
        x[hits] = 5.0
        _compare(loaded.forward(x)[0], FewHits()(x))
    x[[9, 10, 11]] = 5.0  # 7 hits: the call fails in one line, as torch's check does
    with pytest.raises(RuntimeError, match=r"nonzero.out: .*a result of 7 elements exceeds the 4 the program was planned for"):
        loaded.forward(x)
    _compare(loaded.forward(torch.zeros(4096))[0], torch.zeros(0, dtype=torch.long))


def test_an_unbounded_data_dependent_size_is_refused_in_one_line(tmp_path):
    class FromValue(torch.nn.Module):
        def forward(self, n):
            k = n.item()
            torch._check_is_size(k)
            return torch.ones(k) * 2.0

    pt2 = _export(FromValue(), (torch.tensor(3),), tmp_path, "unbounded")  # the pinned torch exports it
    run = cli("compile", str(pt2), "-o", str(tmp_path / "u.pte"), "--backends", "portable")
    assert run.returncode == 1, run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr


class SliceToValue(torch.nn.Module):
    """x[:n.item()] and arange(n.item()), bounded by torch._check."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k <= 8)
        return x[:k] * 2.0, torch.arange(k)


class RoutedExperts(torch.nn.Module):
    """A mixture of experts as JetMoE routes it: tokens sorted by expert, per-expert counts from
    .tolist() as split sizes (no torch._check: export asserts they add up to the token count,
    which bounds each), one linear layer per expert."""

    def __init__(self):
        super().__init__()
        self.router = torch.nn.Linear(6, 3)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(6, 4) for _ in range(3))

    def forward(self, x):
        expert = self.router(x).argmax(-1)
        sizes = torch.nn.functional.one_hot(expert, 3).sum(0).tolist()
        order = expert.argsort(stable=True)
        parts = x[order].split(sizes)
        y = torch.cat([e(p) for e, p in zip(self.experts, parts)])
        return torch.empty_like(y).index_copy(0, order, y)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_sizes_read_from_tensor_values(kernels):
    x = torch.randn(8)
    program = pteron.to_edge_transform_and_lower(pteron.export(SliceToValue(), (x, torch.tensor(3))), kernels=kernels,
                                                 progress=False).load()
    for n in (5, 0, 8, 3):
        got = program.forward(x, torch.tensor(n))
        for g, w in zip(got, SliceToValue()(x, torch.tensor(n))):
            _compare(g, w)
    with pytest.raises(RuntimeError, match=r"u0 = item\(\) must be at most 8, the bound the program was planned for"):
        program.forward(x, torch.tensor(9))
    with pytest.raises(RuntimeError, match=r"u0 = item\(\) must be at least 0"):
        program.forward(x, torch.tensor(-1))
    _compare(program.forward(x, torch.tensor(2))[0], x[:2] * 2.0)

    torch.manual_seed(0)
    moe = RoutedExperts().eval()
    tokens = torch.randn(16, 6)
    program = pteron.to_edge_transform_and_lower(pteron.export(moe, (tokens,)), kernels=kernels, progress=False).load()
    for seed in range(4):  # other routings: other split sizes, an expert with none included
        t = torch.randn(16, 6, generator=torch.Generator().manual_seed(seed)) * (3.0 if seed == 3 else 1.0)
        with torch.no_grad():
            want = moe(t)
        torch.testing.assert_close(torch.as_tensor(program.forward(t)[0]), want, rtol=1e-5, atol=1e-6)


def test_an_item_size_with_no_bound_is_refused_naming_the_check_that_bounds_it(tmp_path):
    class Unbounded(torch.nn.Module):  # a slice would clamp; arange's length is the value
        def forward(self, x, n):
            return torch.arange(n.item()) + x.sum()

    pt2 = _export(Unbounded(), (torch.randn(8), torch.tensor(3)), tmp_path, "unbounded_item")
    run = cli("compile", str(pt2), "-o", str(tmp_path / "u.pte"), "--backends", "portable")
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1, run.stderr
    assert "(a tensor's value, Tensor.item()) has no upper bound; torch._check(u0 <= N)" in lines[0], run.stderr


def test_masked_select_beyond_torchs_own_range_runs():
    """A mask broadcasting self ([1, 5] under [4, 5]) selects up to 20 elements, where torch's
    range (and export's guard of it) says self's 5: the guard is torch's error, not checked."""
    x = torch.randn(1, 5)
    program = pteron.to_edge_transform_and_lower(pteron.export(MaskedSelect(), (x, torch.rand(4, 5) > 0.5)),
                                                 kernels=["portable"], progress=False).load()
    for mask in (torch.ones(4, 5, dtype=torch.bool), torch.rand(4, 5) > 0.5, torch.zeros(4, 5, dtype=torch.bool)):
        for g, w in zip(program.forward(x, mask), MaskedSelect()(x, mask)):
            _compare(g, w)


class ValuesFromItems(torch.nn.Module):
    """Values read with item() used as values, not sizes: no torch._check needed (no memory
    depends on them). A row picked by index, a roll by a shift (torch's decomposition takes
    Python's modulo of a value that may be negative), an offset added."""

    def forward(self, x, i, shift, offset):
        return x[i.item()] * 2, torch.roll(x, shift.item(), 0), x.long() + offset.item()


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_values_read_with_item_need_no_bound(kernels):
    x = torch.randn(8, 3)
    args = (x, torch.tensor(2), torch.tensor(3), torch.tensor(5))
    program = pteron.to_edge_transform_and_lower(pteron.export(ValuesFromItems(), args), kernels=kernels,
                                                 progress=False).load()
    for i, shift, offset in [(0, 1, 0), (7, -3, -7), (-1, 9, 1 << 40), (-8, -17, 2)]:
        call = (x, torch.tensor(i), torch.tensor(shift), torch.tensor(offset))
        for g, w in zip(program.forward(*call), ValuesFromItems()(*call)):
            _compare(g, w)
    with pytest.raises(RuntimeError, match=r"select"):  # torch raises IndexError here
        program.forward(x, torch.tensor(8), torch.tensor(0), torch.tensor(0))
