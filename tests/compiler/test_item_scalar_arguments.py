"""Numbers read from tensors with item(), and floats computed from sizes, passed to tensor ops:
`x / x.abs().max().item()`, `x.clamp(-m, m)`, `torch.full(shape, t.item())`, a temperature
`logits / t.item()`, `x * (x.shape[0] / 2)`. Export writes them as SymFloat / SymBool arguments;
pteron computes them as 0-dim tensors in the program (Python's float in f64, cast to the op's
floating type as torch does with a Python number) and calls an op taking a Scalar through its
Tensor overload. Each call's value differs, so a value fixed at compile time would fail.
Outputs match eager in dtype and shape, and within 1e-5 (f32, f64) or 1e-3 (f16)."""

import random

import pytest
import torch
import torch.nn.functional as F
from torch._higher_order_ops.scan import scan

import pteron
from pt2_damage import json_mutations, read_model_json, with_model_json
from pteron_cli import assert_compiles_or_one_line_error


class Normalize(torch.nn.Module):
    """Symmetric int8-style scaling by the tensor's own range."""

    def forward(self, x):
        s = x.abs().max().item()
        return x / s, (x * 127 / s).round().clamp(-127, 127), torch.full_like(x, s)


class ScalarPositions(torch.nn.Module):
    """The value where ops take a Scalar: each goes through its Tensor overload, or is broadcast."""

    def forward(self, x, mask):
        m = x.abs().max().item()
        return (
            torch.clamp(x, -0.5 * m, m * 0.5),
            torch.clamp(x, m * 0.1, 1.0),  # one bound a literal
            x.clamp_min(m * 0.2),
            x.abs() ** m,
            x > m * 0.3,
            x.masked_fill(mask, m),
            torch.where(mask, x, m),
            torch.lerp(x, x * 2, m),
            m - x,
            x.sub(m, alpha=2),
            torch.full((3,), m),
            x.new_full((2,), m),
            torch.scalar_tensor(m),
            torch.tensor(m),
        )


class IntegerInput(torch.nn.Module):
    """An int tensor with a float value: torch's promotion to float32, as with a Python float."""

    def forward(self, x, t):
        s = t.max().item()
        return x / s, x * s, x > s, x.clamp(max=s), torch.where(x > 2, x, s)


class Temperature(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)

    def forward(self, x, temperature):
        return torch.softmax(self.proj(x) / temperature.item(), -1)


class BoolValue(torch.nn.Module):
    """A bool read with item() as an op's argument and as a cond predicate."""

    def forward(self, x):
        positive = (x > 0).all().item()
        return x * positive, torch.cond(positive, lambda x: x + 1, lambda x: x - 1, (x,))


class IntItemAsSizeAndFloat(torch.nn.Module):
    """An int item slices (a size symbol) and, halved, scales (a float computed from the size)."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= 4)
        return x[:k] * (k / 2)


class SizeFloats(torch.nn.Module):
    """Floats computed from a dynamic size: a scale, a square root, a cond predicate."""

    def forward(self, x):
        n = x.shape[0]
        scaled = torch.cond(n / 2 > 3, lambda x: x.sin(), lambda x: x.cos(), (x,))
        return x * (n / 2), x / n**0.5, scaled


class InBranchAndScan(torch.nn.Module):
    def forward(self, x, xs):
        def branch(x):
            return x / x.max().item()

        def step(carry, row):
            carry = carry + row / row.abs().max().item()
            return carry, carry.clone()

        return torch.cond(x.sum() > 0, branch, lambda x: x * 2, (x,)), scan(step, torch.zeros(4), xs)


ROWS = torch.export.Dim("rows", min=1, max=16)
CASES = {
    "normalize, dynamic rows": (
        Normalize,
        [(torch.randn(5, 3),), (torch.randn(9, 3) * 4,), (torch.randn(1, 3) / 8,)],
        ({0: ROWS},),
    ),
    "normalize f64": (Normalize, [(torch.randn(4, 3, dtype=torch.float64) * s,) for s in (1, 3)], None),
    "normalize f16": (Normalize, [(torch.randn(4, 3).half() * s,) for s in (1, 3)], None),
    "scalar positions": (
        ScalarPositions,
        [(torch.randn(4, 5), torch.rand(4, 5) > 0.5), (torch.randn(4, 5) * 3, torch.rand(4, 5) > 0.5)],
        None,
    ),
    "integer input": (
        IntegerInput,
        [(torch.arange(12).reshape(3, 4), torch.tensor([2.5, 1.0])), (torch.arange(12).reshape(3, 4), torch.tensor([0.5, 7.0]))],
        None,
    ),
    "temperature": (Temperature, [(torch.randn(2, 8), torch.tensor(0.7)), (torch.randn(2, 8), torch.tensor(2.0))], None),
    "bool value": (BoolValue, [(torch.ones(3),), (torch.tensor([1.0, -1.0, 2.0]),)], None),
    "int item as a size and a float": (IntItemAsSizeAndFloat, [(torch.randn(5), torch.tensor(k)) for k in (3, 1)], None),
    "floats from sizes": (SizeFloats, [(torch.randn(n, 2),) for n in (5, 9, 2)], ({0: torch.export.Dim("n", min=2, max=16)},)),
    "in a branch and a scan step": (
        InBranchAndScan,
        [(torch.rand(4) + 0.5, torch.randn(3, 4)), (-torch.rand(4), torch.randn(3, 4) * 5)],
        None,
    ),
}


def _eager(model, args):
    return tuple(torch.utils._pytree.tree_leaves(model(*args)))


def _lower(case, **options):
    model_type, calls, dynamic = CASES[case]
    model = model_type()
    program = pteron.export(model, calls[0], dynamic_shapes=dynamic)
    return model, calls, pteron.to_edge_transform_and_lower(program, progress=False, **options).load()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_each_call_computes_the_value_eager_computes(case, kernels):
    model, calls, loaded = _lower(case, kernels=kernels)
    for args in calls:
        for got, expected in zip(loaded.forward(*args), _eager(model, args), strict=True):
            got = torch.as_tensor(got)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
            tol = 1e-3 if expected.dtype == torch.float16 else 1e-5
            torch.testing.assert_close(got, expected, atol=tol, rtol=tol, equal_nan=True)


@pytest.mark.parametrize("case", ["normalize, dynamic rows", "temperature"])
def test_xnnpack_programs_take_the_value_too(case):
    model, calls, loaded = _lower(case, partitioner=[pteron.XnnpackPartitioner()])
    for args in calls:
        for got, expected in zip(loaded.forward(*args), _eager(model, args), strict=True):
            torch.testing.assert_close(torch.as_tensor(got), expected, atol=1e-5, rtol=1e-5)


def test_the_values_differ_between_calls():
    # Guards the cases above: a value fixed at the first call would give another answer later.
    for case in ("normalize, dynamic rows", "scalar positions", "temperature", "floats from sizes"):
        model_type, calls, _ = CASES[case]
        first, second = (_eager(model_type(), args)[0] for args in calls[:2])
        assert first.shape != second.shape or not torch.allclose(first, second), case


class SlopeFromValue(torch.nn.Module):
    def forward(self, x):
        return F.leaky_relu(x, x.abs().max().item() * 0.01)


class RangeToValue(torch.nn.Module):
    def forward(self, x):
        return torch.arange(0, x.max().item())


def test_ops_without_a_tensor_overload_are_refused_in_one_line():
    with pytest.raises(pteron.CompileError, match="argument 'negative_slope' is a value read from a tensor") as error:
        pteron.to_edge_transform_and_lower(pteron.export(SlopeFromValue(), (torch.randn(3),)), progress=False)
    assert "has no overload taking a Tensor there" in str(error.value)
    assert "\n" not in str(error.value)
    with pytest.raises(pteron.CompileError) as error:  # a size from a float: not a number to lift
        pteron.to_edge_transform_and_lower(pteron.export(RangeToValue(), (torch.tensor([3.0]),)), progress=False)
    assert "\n" not in str(error.value)


def test_damaged_value_chains_compile_or_fail_in_one_line(tmp_path):
    """Structure-aware damage to the item() reads, the arithmetic on them and the ops taking
    them: the compile succeeds or fails in one line, never crashes."""
    pt2 = tmp_path / "scalar_positions.pt2"
    torch.export.save(pteron.export(ScalarPositions(), CASES["scalar positions"][1][0]), pt2)
    model_json = read_model_json(pt2)
    nodes = model_json["graph_module"]["graph"]["nodes"]
    lifted = [i for i, n in enumerate(nodes) if "_local_scalar_dense" in n["target"] or n["target"].startswith("_operator.")]
    users = [i for i, n in enumerate(nodes) if any("as_sym_float" in a.get("arg", {}) for a in n["inputs"])]
    assert len(lifted) >= 4 and len(users) >= 8
    under = [("graph_module", "graph", "nodes", i) for i in lifted + users]
    for case, damaged in enumerate(json_mutations(model_json, random.Random(2), 30, under)):
        assert_compiles_or_one_line_error(with_model_json(pt2, tmp_path / f"c{case}.pt2", damaged), tmp_path / "c.pte")
