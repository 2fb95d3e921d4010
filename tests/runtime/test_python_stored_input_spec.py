"""A program file says how the model's nested arguments flatten (the plan's container metadata:
torch's treespec_dumps text of (args, kwargs) and of the result, as ExecuTorch's emitter writes
it), so a program loaded from a file takes the model's own arguments (tuples, dicts, keywords)
as eager does, not only the flat list. Results exact (float32 elementwise arithmetic, the same
operations as eager)."""

from pathlib import Path

import pteron_native
import pytest
import torch
from torch.utils._pytree import treespec_dumps

import pteron
from pteron.inputs import InputLayout
from pt2_damage import read_model_json, with_model_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "executorch"


class Nested(torch.nn.Module):
    def forward(self, x, pair, extra, *, scale):
        return {"sum": x + pair[0] * extra["y"], "parts": (pair[1] - scale, extra["y"] * 2)}


class Flagged(torch.nn.Module):
    def forward(self, x, flag=True):
        return x + 1 if flag else x - 1


def compile_archive(pt2):
    """The default host program of a .pt2, loaded from its bytes (as from a file)."""
    return pteron.load(pteron_native.compile_pt2(str(pt2))[0])


def arguments():
    torch.manual_seed(0)
    x, a, b, y, s = (torch.randn(3, 4) for _ in range(5))
    return (x, (a, b), {"y": y}), {"scale": s}


def flat(args, kwargs):
    x, (a, b), extra = args
    return [x, a, b, extra["y"], kwargs["scale"]]


@pytest.fixture(scope="module")
def exported():
    args, kwargs = arguments()
    return pteron.export(Nested(), args, kwargs)


@pytest.fixture(scope="module")
def saved(exported, tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "nested.pte"
    pteron.to_edge_transform_and_lower(exported, progress=False).save(path)
    return path


def test_the_program_stores_torchs_specs(exported, saved):
    meta = pteron.load(saved).method_meta("forward")
    assert meta["input_spec"] == treespec_dumps(exported.call_spec.in_spec)
    assert meta["output_spec"] == treespec_dumps(exported.call_spec.out_spec)


def test_a_program_loaded_from_a_file_takes_the_models_arguments(saved):
    args, kwargs = arguments()
    expected = Nested()(*args, **kwargs)
    program = pteron.load(saved)
    outputs = program.forward(*args, **kwargs)
    assert torch.equal(outputs[0], expected["sum"])
    assert torch.equal(outputs[1], expected["parts"][0])
    assert torch.equal(outputs[2], expected["parts"][1])
    for got, want in zip(program.forward(*flat(args, kwargs)), outputs):  # flat, as before
        assert torch.equal(got, want)


def test_arguments_of_another_structure_are_refused_in_one_line(saved):
    args, kwargs = arguments()
    program = pteron.load(saved)
    with pytest.raises(TypeError, match=r"the arguments do not match the model's: it takes \(x, tuple\[x, x\]") as e:
        program.forward(args[0], args[1], args[2])  # the keyword left out
    assert "\n" not in str(e.value)


def test_constants_export_specialised_on_are_checked_and_dropped(tmp_path):
    x = torch.randn(5)
    ep = pteron.export(Flagged(), (x,), {"flag": False})
    path = tmp_path / "flagged.pte"
    pteron.to_edge_transform_and_lower(ep, progress=False).save(path)
    program = pteron.load(path)
    assert torch.equal(program.forward(x, flag=False)[0], x - 1)
    with pytest.raises(TypeError, match="is True; the program was exported with False") as e:
        program.forward(x, flag=True)
    assert "\n" not in str(e.value)
    assert torch.equal(program.forward(x)[0], x - 1)  # flat
    ep = pteron.export(Flagged(), (x, False))  # the flag passed by position
    positional = pteron.load(pteron.to_edge_transform_and_lower(ep, progress=False).buffer())
    assert torch.equal(positional.forward(x, False)[0], x - 1)
    with pytest.raises(TypeError, match="is True; the program was exported with False"):
        positional.forward(x, True)


def test_a_constant_of_another_kind_is_refused_in_one_line(tmp_path):
    """torch writes a constant argument as a bool, int, float, string or None; anything else in
    the file is refused, not compared."""
    x = torch.randn(5)
    pt2 = tmp_path / "flagged.pt2"
    torch.export.save(pteron.export(Flagged(), (x,), {"flag": False}), pt2)
    model = read_model_json(pt2)
    for spec in model["graph_module"]["signature"]["input_specs"]:
        if "constant_input" in spec:
            spec["constant_input"]["value"] = {"as_ints": [1, 2]}
    program = compile_archive(with_model_json(pt2, tmp_path / "damaged.pt2", model))
    with pytest.raises(TypeError, match="stored input spec cannot be read .*of a kind pteron does not compare") as e:
        program.forward(x, flag=False)
    assert "\n" not in str(e.value)
    assert torch.equal(program.forward(x)[0], x - 1)  # flat


def test_an_archive_without_specs_compiles_to_a_flat_program(exported, tmp_path):
    pt2 = tmp_path / "nested.pt2"
    torch.export.save(exported.run_decompositions({}), pt2)
    model = read_model_json(pt2)
    del model["graph_module"]["module_call_graph"][0]["signature"]["in_spec"]
    program = compile_archive(with_model_json(pt2, tmp_path / "no_spec.pt2", model))
    assert program.method_meta("forward")["input_spec"] == ""
    args, kwargs = arguments()
    with pytest.raises(TypeError, match=r"keyword arguments \['scale'\]: a loaded program takes its inputs in order"):
        program.forward(*args, **kwargs)
    assert torch.equal(program.forward(*flat(args, kwargs))[0], Nested()(*args, **kwargs)["sum"])


def test_an_unreadable_stored_spec_is_refused_in_one_line(exported, tmp_path):
    pt2 = tmp_path / "nested.pt2"
    torch.export.save(exported.run_decompositions({}), pt2)
    model = read_model_json(pt2)
    model["graph_module"]["module_call_graph"][0]["signature"]["in_spec"] = '[1, {"type": "no.such'
    program = compile_archive(with_model_json(pt2, tmp_path / "bad_spec.pt2", model))
    args, kwargs = arguments()
    with pytest.raises(TypeError, match="the program's stored input spec cannot be read") as e:
        program.forward(*args, **kwargs)
    assert "\n" not in str(e.value)


def test_a_spec_of_bytes_that_are_not_text_is_refused_in_one_line(exported):
    data = bytearray(pteron.to_edge_transform_and_lower(exported, progress=False).buffer())
    spec = treespec_dumps(exported.call_spec.in_spec).encode()
    at = bytes(data).index(spec)
    data[at + 1] = 0xFF  # the file's text is no longer UTF-8
    program = pteron.load(bytes(data))
    assert "\ufffd" in program.method_meta("forward")["input_spec"]
    args, kwargs = arguments()
    with pytest.raises(TypeError, match="the program's stored input spec cannot be read") as e:
        program.forward(*args, **kwargs)
    assert "\n" not in str(e.value)


def test_executorchs_programs_store_specs_pteron_reads():
    """ExecuTorch writes the same JSON into its programs' plans (its constant methods carry a
    format of its own, "$" or "L2#1#1($,$)", for their outputs only)."""
    read = 0
    for fixture in sorted(FIXTURES.glob("*.pte")):
        program = pteron.load(fixture)
        for name in program.method_names:
            meta = program.method_meta(name)
            if meta["input_spec"]:
                layout = InputLayout.stored(meta["input_spec"], len(meta["inputs"]))
                assert layout.num_inputs == len(meta["inputs"]), (fixture.name, name)
                read += 1
    assert read >= 10
