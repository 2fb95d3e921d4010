"""torch.cond: data-dependent control flow. Export writes the two branches as subgraphs of a
higher-order cond node; pteron compiles each branch as a model of its own (partitioners and
kernel libraries included) and emits ExecuTorch's form: JumpFalse on the predicate around the
branches' instructions, each branch copying its results into the node's outputs. Every test
runs inputs that take each branch and checks the results against PyTorch (float32: within
1e-5 absolute and relative, the kernels' rounding and summation order)."""

import subprocess

import numpy as np
import pytest
import torch
from torch.export import Dim

import pteron
from control_flow_models import Gate
from pt2_damage import json_mutations, read_model_json, with_model_json
from pteron_cli import assert_compiles_or_one_line_error, assert_one_line_error, pteron_cli

TOL = 1e-5


class ThreeOutputs(torch.nn.Module):
    def forward(self, x, y):
        a, b, c = torch.cond(x.sum() > 0, lambda x, y: (x + y, x - y, x.clone()), lambda x, y: (x * y, y.clone(), x + 1), (x, y))
        return a + b, c


class Nested(torch.nn.Module):
    """A cond inside a branch: three ways through."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        def inner(x):
            return torch.cond(x.mean() > 0.5, lambda x: self.a(x), lambda x: self.b(x), (x,))

        return torch.cond(x.sum() > 0, inner, lambda x: x.tanh(), (x,))


class Chained(torch.nn.Module):
    """Three conds, each on the previous one's result, and an int64 predicate (nonzero is true)."""

    def forward(self, x):
        for i in range(3):
            x = torch.cond(x.sum() > i, lambda x: x - 1, lambda x: x * 2 + 1, (x,))
        return torch.cond((x > 0).sum().long(), lambda x: x + 10, lambda x: x - 10, (x,))


class EarlyExit(torch.nn.Module):
    """A score decides whether the convolutions run at all."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        conv = torch.nn.Conv2d
        self.heavy = torch.nn.Sequential(conv(3, 16, 3, padding=1), torch.nn.ReLU(), conv(16, 3, 3, padding=1))
        self.light = torch.nn.Conv2d(3, 3, 5, padding=2)
        self.score = torch.nn.Linear(3, 1)

    def forward(self, x):
        s = self.score(x.mean((2, 3))).sigmoid().squeeze()
        return torch.cond(s > 0.5, lambda x: self.heavy(x), lambda x: self.light(x) * 0.5, (x,))


def _inputs(model):
    """Inputs taking each way through `model`."""
    torch.manual_seed(1)
    x, y = torch.randn(2, 8), torch.randn(2, 8)
    if isinstance(model, (Gate, ThreeOutputs)):
        return [(x.abs(), y), (-x.abs(), y)]
    if isinstance(model, Nested):
        return [(x.abs() + 1,), (x.abs() * 0.1,), (-x.abs(),)]
    if isinstance(model, Chained):
        return [(torch.randn(4) + k,) for k in (-3.0, 0.0, 3.0, 10.0)]
    # channel means along the score's weights push it above 0.5 (k > 0) or below
    along = model.score.weight.detach().sign().reshape(1, 3, 1, 1)
    return [(torch.randn(1, 3, 16, 16) * 0.1 + k * along,) for k in (-3.0, 3.0, 2.0)]


def _check(loaded, model, inputs):
    for args in inputs:
        expected = model(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = loaded.forward(*args)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            g = torch.as_tensor(g)
            assert g.shape == e.shape
            torch.testing.assert_close(g, e, atol=TOL, rtol=TOL)


@pytest.mark.parametrize("model_type", [Gate, ThreeOutputs, Nested, Chained, EarlyExit])
@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_each_branch_matches_torch(model_type, kernels):
    model = model_type().eval()
    inputs = _inputs(model)
    program = pteron.to_edge_transform_and_lower(pteron.export(model, inputs[0]), kernels=kernels, progress=False)
    _check(program.load(), model, inputs)


def test_the_inputs_take_both_branches():
    """The test inputs are worth something only if each predicate goes both ways."""
    gate, early = Gate().eval(), EarlyExit().eval()
    assert {bool(x.sum() > 0) for x, _ in _inputs(gate)} == {True, False}
    scores = {bool(early.score(x.mean((2, 3))).sigmoid().squeeze() > 0.5) for (x,) in _inputs(early)}
    assert scores == {True, False}
    assert {bool(x.sum() > 0) for (x,) in _inputs(Nested())} == {True, False}
    assert {bool(x.mean() > 0.5) for (x,) in _inputs(Nested()) if x.sum() > 0} == {True, False}


def test_a_size_predicate_over_a_dynamic_dimension():
    """`x.shape[0] > 4` with a dynamic batch: the predicate is computed from the input's size each
    call, and the branches run at that size."""

    class BySize(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.shape[0] > 4, lambda x: x.cos() * 2, lambda x: x.sin(), (x,)) + 1

    model = BySize()
    ep = pteron.export(model, (torch.randn(6, 8),), dynamic_shapes={"x": {0: Dim("n", max=32)}})
    for kernels in (None, ["portable"]):
        loaded = pteron.to_edge_transform_and_lower(ep, kernels=kernels, progress=False).load()
        _check(loaded, model, [(torch.randn(n, 8),) for n in (2, 4, 5, 32, 3)])


def test_both_branches_delegate_to_xnnpack():
    """Each branch is partitioned on its own: a region in each, both in the one program."""
    model = EarlyExit().eval()
    inputs = _inputs(model)
    program = pteron.to_edge_transform_and_lower(
        pteron.export(model, inputs[0]), partitioner=[pteron.XnnpackPartitioner()], kernels=("portable",), progress=False
    )
    regions = program.report["delegated_regions"]
    assert sum(r["backend"] == "xnnpack" for r in regions) >= 2, regions
    _check(program.load(), model, inputs)


def test_the_branches_share_their_memory():
    """Only one branch runs per call, so both are planned from the same offset: the program plans
    about one branch's temporaries, not the two together."""

    def heavy(x, fn):
        return fn(x.repeat(64, 1)).sum(0, keepdim=True)

    class Both(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: heavy(x, torch.exp), lambda x: heavy(x, torch.sin), (x,))

    class One(torch.nn.Module):
        def forward(self, x):
            return heavy(x, torch.exp)

    x = torch.randn(1, 1024)
    planned = {}
    for model in (Both(), One()):
        program = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=["portable"], progress=False)
        planned[type(model).__name__] = program.report["planned_bytes"]
    temporaries = 64 * 1024 * 4
    assert planned["One"] >= temporaries
    assert planned["Both"] < planned["One"] + temporaries / 2, planned
    _check(program.load(), One(), [(x,)])


def test_compile_and_run_from_the_cli(tmp_path):
    model = Gate().eval()
    inputs = _inputs(model)
    pt2, pte = tmp_path / "gate.pt2", tmp_path / "gate.pte"
    torch.export.save(pteron.export(model, inputs[0]), pt2)
    run = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(pte)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for i, args in enumerate(inputs):
        np.savez(tmp_path / f"in{i}.npz", **{f"input_{k}": t.numpy() for k, t in enumerate(args)})
        out = tmp_path / f"out{i}.npz"
        run = subprocess.run(
            [pteron_cli(), "run", str(pte), "--inputs", str(tmp_path / f"in{i}.npz"), "--outputs", str(out)],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        got = np.load(out)["output_0"]
        np.testing.assert_allclose(got, model(*args).detach().numpy(), atol=TOL, rtol=TOL)


def test_other_higher_order_ops_are_refused_in_one_line(tmp_path):
    """A higher-order op pteron does not run (flex_attention, invoke_subgraph, ...): here a cond's
    target renamed, so its arguments are well formed."""
    import json
    import zipfile

    model = Gate().eval()
    pt2, renamed = tmp_path / "gate.pt2", tmp_path / "renamed.pt2"
    torch.export.save(pteron.export(model, _inputs(model)[0]), pt2)
    with zipfile.ZipFile(pt2) as src, zipfile.ZipFile(renamed, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("models/model.json"):
                text = json.dumps(json.loads(data))
                data = text.replace('"torch.ops.higher_order.cond"', '"torch.ops.higher_order.flex_attention"').encode()
            dst.writestr(item, data)
    run = subprocess.run([pteron_cli(), "compile", str(renamed), "-o", str(tmp_path / "r.pte")], capture_output=True, text=True)
    assert_one_line_error(run, "control flow (torch.ops.higher_order.flex_attention) is not supported")
    assert not (tmp_path / "r.pte").exists()


def test_numerics_debug_of_a_cond_is_refused_in_one_line(tmp_path):
    """`pteron debug` runs the model node by node on the host kernels for its reference."""
    model = Gate().eval()
    pt2, pte = tmp_path / "gate.pt2", tmp_path / "gate.pte"
    torch.export.save(pteron.export(model, _inputs(model)[0]), pt2)
    assert subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(pte)], capture_output=True).returncode == 0
    run = subprocess.run([pteron_cli(), "debug", str(pte), "--pt2", str(pt2)], capture_output=True, text=True)
    assert_one_line_error(run, "node 'cond'", "control flow runs in compiled programs only")


def test_int8_quantization_with_a_cond_is_refused():
    model = Gate().eval()
    inputs = _inputs(model)
    with pytest.raises(pteron.CompileError, match="control flow runs in compiled programs only"):
        pteron.to_edge_transform_and_lower(
            pteron.export(model, inputs[0]), quantize="xnnpack", calibration=inputs, progress=False
        )


def test_damaged_cond_nodes_are_refused_in_one_line(tmp_path):
    """Structure-aware damage inside the cond node (its branches' inputs, nodes, outputs and
    tensor metadata, the operands, the predicate): the compile succeeds or fails with one line
    naming the problem (exit 1), and never crashes."""
    import random

    model = Gate().eval()
    pt2 = tmp_path / "gate.pt2"
    torch.export.save(pteron.export(model, _inputs(model)[0]), pt2)
    model_json = read_model_json(pt2)
    nodes = model_json["graph_module"]["graph"]["nodes"]
    cond_index = next(i for i, n in enumerate(nodes) if n["target"] == "torch.ops.higher_order.cond")
    under = [("graph_module", "graph", "nodes", cond_index)]
    for case, damaged in enumerate(json_mutations(model_json, random.Random(0), 40, under)):
        out = with_model_json(pt2, tmp_path / f"case{case}.pt2", damaged)
        assert_compiles_or_one_line_error(out, tmp_path / f"case{case}.pte")


@pytest.mark.parametrize(
    "name",
    [
        "cond_branch_class_method",
        "cond_branch_nested_function",
        "cond_branch_nonlocal_variables",
        "cond_closed_over_variable",
        "cond_operands",
        "cond_predicate",
        "dynamic_shape_map",
    ],
)
def test_torch_export_db_control_flow_examples(name):
    """torch's own export examples of control flow (torch._export.db.examples), with their
    example inputs and dynamic shapes (an unbounded Dim given a max: pteron plans at it)."""
    import importlib

    example = importlib.import_module(f"torch._export.db.examples.{name}")
    model = example.model
    dynamic = getattr(example, "dynamic_shapes", None)
    if dynamic is not None:
        dynamic = {k: ({d: Dim(f"{k}_{d}", max=16) for d in v} if v else v) for k, v in dynamic.items()}
    ep = torch.export.export(model, example.example_args, dynamic_shapes=dynamic, strict=False)
    loaded = pteron.to_edge_transform_and_lower(ep, progress=False).load()
    calls = [example.example_args] + ([getattr(example, "extra_inputs")] if hasattr(example, "extra_inputs") else [])
    _check(loaded, model, calls)


def test_only_the_branch_taken_runs(tmp_path):
    """The event tracer's per-call counts: the heavy branch's two convolutions and ReLU run when
    the score picks it, the light branch's one convolution otherwise (two JumpFalse on the true
    branch's way, one on the false branch's)."""
    import json

    model = EarlyExit().eval()
    light, heavy, _ = _inputs(model)
    pt2, pte = tmp_path / "early.pt2", tmp_path / "early.pte"
    torch.export.save(pteron.export(model, heavy), pt2)
    assert subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(pte), "--backends", "portable"]).returncode == 0
    calls = {}
    for name, args in (("heavy", heavy), ("light", light)):
        np.savez(tmp_path / f"{name}.npz", input_0=args[0].numpy())
        run = subprocess.run(
            [pteron_cli(), "profile", str(pte), "--inputs", str(tmp_path / f"{name}.npz"), "-o", str(tmp_path / f"trace_{name}"),
             "--iters", "2", "--warmup", "0", "--json"],
            capture_output=True, text=True,
        )
        assert run.returncode == 0, run.stderr
        calls[name] = {op["name"]: op["calls"] for op in json.loads(run.stdout)["ops"]}
    assert calls["heavy"]["aten::convolution.out"] == 2 and calls["heavy"]["aten::relu.out"] == 1
    assert calls["heavy"]["jump_false"] == 2
    assert calls["light"]["aten::convolution.out"] == 1 and "aten::relu.out" not in calls["light"]
    assert calls["light"]["jump_false"] == 1


class CondThenMore(torch.nn.Module):
    """Work before and after a cond, so a wrong instruction-to-node map shows after it."""

    def forward(self, x):
        y = torch.cond(x.sum() > 0, lambda x: (x * 2).sin() + 1, lambda x: x.cos(), (x,))
        return (y.exp() - x).tanh()


def test_the_graph_info_maps_every_instruction_to_its_node():
    # One entry per instruction, in execution order: the cond's jumps, copies and branch
    # instructions map to the cond node, the nodes before and after it to themselves (what
    # pteron profile's per-module breakdown and the explorer's labels read).
    model = CondThenMore()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (torch.randn(4),)), kernels=["portable"], progress=False)
    info = pteron.get_delegation_info(program.buffer())
    loaded = program.load()
    names = loaded.load_method().instruction_names()
    entries = info.graph_info["instructions"]
    assert len(entries) == len(names)
    nodes = info.graph_info["nodes"]
    ops = [nodes[e["nodes"][0]]["op"] for e in entries]
    cond = [i for i, op in enumerate(ops) if op == "pteron::cond.default"]
    assert cond == list(range(cond[0], cond[-1] + 1)) and len(cond) >= 6  # 2 jumps, 3 + 1 ops, copies
    assert ops[cond[-1] + 1:] == ["aten::exp.default", "aten::sub.Tensor", "aten::tanh.default"]
    for op, name in zip(ops[cond[-1] + 1:], names[cond[-1] + 1:]):
        assert name.startswith(op.split(".")[0]), (op, name)


class SizeReadMidway(torch.nn.Module):
    def forward(self, x):
        picked = x[x > 0]  # its length is read after the selection runs
        return picked.view(-1, 1) * 2, x.exp()


def test_the_graph_info_places_size_reads_where_they_run():
    program = pteron.to_edge_transform_and_lower(pteron.export(SizeReadMidway(), (torch.randn(6),)), kernels=["portable"],
                                                 progress=False)
    entries = pteron.get_delegation_info(program.buffer()).graph_info["instructions"]
    names = program.load().load_method().instruction_names()
    assert len(entries) == len(names)
    for entry, name in zip(entries, names):
        assert ("prim" in entry) == (not entry["nodes"]), entry
        if "prim" in entry:
            assert name.startswith(entry["prim"].rsplit(".", 1)[0]), (entry, name)
    assert any("prim" in e for e in entries[1:]), "the size read follows the selection"
