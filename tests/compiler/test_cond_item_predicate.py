"""torch.cond predicates computed from tensor values with item(): `x.sum().item() > 0.5`,
`(x > 0).all().item()`, two items and a size combined. Export writes Python arithmetic on the
scalars; pteron computes it with tensor ops in the program (Python's int and float: i64, f64),
so every call takes the branch eager takes. Float outputs within 1e-5 of torch."""

import pytest
import torch
from torch._higher_order_ops.scan import scan

import pteron
from pt2_damage import json_mutations, read_model_json, with_model_json
from pteron_cli import assert_compiles_or_one_line_error

TOL = 1e-5


class FloatItem(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum().item() > 0.1, lambda x: x.sin(), lambda x: x.cos(), (x,))


class BoolItem(torch.nn.Module):
    def forward(self, x):
        return torch.cond((x > 0).all().item(), lambda x: x.sin(), lambda x: x.cos(), (x,))


class TwoItems(torch.nn.Module):
    def forward(self, x, t):
        big = x.abs().max().item() * 2 - 1 > t.item()
        return torch.cond(big & (x.mean().item() < 3), lambda x: x.sin(), lambda x: x.cos(), (x,))


class IntItemAndSize(torch.nn.Module):
    def forward(self, x, n):
        return torch.cond(n.item() / 3 > x.shape[0] // 2 - 0.5, lambda x: x.sin(), lambda x: x.cos(), (x,))


class PowersOfItems(torch.nn.Module):
    def forward(self, x, n):
        return torch.cond(x.sum().item() ** 2 + n.item() ** 3 > 5.0, lambda x: x.sin(), lambda x: x.cos(), (x,))


class ItemInScanStep(torch.nn.Module):
    def forward(self, xs):
        def step(c, x):
            c = torch.cond(x.sum().item() > 0, lambda c, x: c + x, lambda c, x: c * x, (c, x))
            return c, c.clone()

        return scan(step, torch.ones(4), xs)


class ItemInBranch(torch.nn.Module):
    def forward(self, x):
        def outer(x):
            return torch.cond(x.max().item() > 1.5, lambda x: x * 3, lambda x: x - 3, (x,))

        return torch.cond(x.sum() > 0, outer, lambda x: x.cos(), (x,))


class ItemAlsoASize(torch.nn.Module):
    """The item also slices: it stays a size symbol, the predicate compares it as sizes do."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= 4)
        return torch.cond(k > 2, lambda x: x.sin(), lambda x: x.cos(), (x,)), x[:k]


CASES = {
    # f32(0.1) is above the f64 0.1 as Python compares them (sin), equal in f32 (cos).
    "float": (FloatItem, [(torch.tensor([0.1]),), (torch.tensor([0.05]),), (torch.tensor([2.0]),)]),
    "bool": (BoolItem, [(torch.ones(4),), (-torch.ones(4),)]),
    "two items": (
        TwoItems,
        [(torch.full((4,), 0.2), torch.tensor(-1.0)), (torch.full((4,), 0.2), torch.tensor(0.5)),
         (torch.full((4,), 5.0), torch.tensor(0.5))],
    ),
    "int and size": (IntItemAndSize, [(torch.randn(4), torch.tensor(5)), (torch.randn(4), torch.tensor(4))]),
    "powers": (
        PowersOfItems,
        [(torch.tensor([0.5]), torch.tensor(1)), (torch.tensor([0.5]), torch.tensor(2)), (torch.tensor([-2.0]), torch.tensor(1))],
    ),
    "in a scan step": (ItemInScanStep, [(torch.tensor([[1.0] * 4, [-1.0] * 4, [0.5] * 4]),)]),
    "in a branch": (ItemInBranch, [(torch.full((3,), 2.0),), (torch.full((3,), 1.0),), (-torch.ones(3),)]),
    "also a size": (ItemAlsoASize, [(torch.randn(5), torch.tensor(3)), (torch.randn(5), torch.tensor(1))]),
}


def _eager(model, args):
    out = model(*args)
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_each_call_takes_the_branch_eager_takes(case, kernels):
    model_type, calls = CASES[case]
    model = model_type()
    loaded = pteron.to_edge_transform_and_lower(pteron.export(model, calls[0]), kernels=kernels, progress=False).load()
    for args in calls:
        for got, expected in zip(loaded.forward(*args), _eager(model, args), strict=True):
            torch.testing.assert_close(torch.as_tensor(got), expected, atol=TOL, rtol=TOL)


def test_the_calls_take_both_branches():
    # Guards the cases above: each model's calls see both branches in eager.
    sin_taken = {case: {torch.equal(_eager(m(), a)[0], a[0].sin()) for a in calls} for case, (m, calls) in CASES.items()}
    for case in ("float", "bool", "two items", "int and size", "also a size", "powers"):
        assert sin_taken[case] == {True, False}, case
    assert torch.equal(FloatItem()(torch.tensor([0.1])), torch.tensor([0.1]).sin())


class BitsOfItem(torch.nn.Module):
    def forward(self, x, n):
        return torch.cond((n.item() & 3) > 1, lambda x: x.sin(), lambda x: x.cos(), (x,))


def test_arithmetic_it_does_not_compute_is_refused_in_one_line():
    with pytest.raises(pteron.CompileError, match="bitwise operations on numbers") as error:
        pteron.to_edge_transform_and_lower(pteron.export(BitsOfItem(), (torch.ones(3), torch.tensor(6))), progress=False)
    assert "\n" not in str(error.value)


def test_damaged_predicate_chains_are_refused_in_one_line(tmp_path):
    """Structure-aware damage to the item() reads and the arithmetic on them, and a chain that
    reads its own result: the compile succeeds or fails in one line, never crashes."""
    import random

    pt2 = tmp_path / "two_items.pt2"
    torch.export.save(pteron.export(TwoItems(), CASES["two items"][1][0]), pt2)
    model_json = read_model_json(pt2)
    nodes = model_json["graph_module"]["graph"]["nodes"]
    chain = [i for i, n in enumerate(nodes) if n["target"].startswith(("_operator.", "torch.ops.aten._local_scalar"))]
    assert len(chain) >= 6
    under = [("graph_module", "graph", "nodes", i) for i in chain]
    for case, damaged in enumerate(json_mutations(model_json, random.Random(1), 30, under)):
        assert_compiles_or_one_line_error(with_model_json(pt2, tmp_path / f"c{case}.pt2", damaged), tmp_path / "c.pte")
    # A subtraction reads the comparison computed from it; then takes a third operand.
    sub = next(n for n in nodes if n["target"] == "_operator.sub")
    gt = next(n for n in nodes if n["target"] == "_operator.gt")
    sub["inputs"][1]["arg"] = {"as_sym_bool": gt["outputs"][0]["as_sym_bool"]}
    cycle = with_model_json(pt2, tmp_path / "cycle.pt2", model_json)
    assert "is computed from itself" in assert_compiles_or_one_line_error(cycle, tmp_path / "c.pte").stderr
    sub["inputs"].append({"name": "c", "arg": {"as_float": 1.0}, "kind": 1})
    extra = with_model_json(pt2, tmp_path / "extra.pt2", model_json)
    assert "takes 2 operand(s)" in assert_compiles_or_one_line_error(extra, tmp_path / "c.pte").stderr
