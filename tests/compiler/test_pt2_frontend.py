"""The compiler frontend on .pt2 archives torch writes, and on broken ones.

torch exports the models of pt2_models.py into a temporary folder; the C++ frontend tests
(compiler_frontend_tests) check the graphs against torch there. Malformed archives are derived
from those files and given to pt2_dump, which must exit with status 1 and a one-line message
naming what is wrong.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import pt2_models  # noqa: E402
from pt2_damage import json_mutations  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PTERON_BUILD_DIR", REPO / "build"))
PT2_DUMP = BUILD / "compiler" / "pt2_dump"
FRONTEND_TESTS = BUILD / "tests" / "compiler" / "compiler_frontend_tests"


def binary(path):
    assert path.exists(), f"{path} is missing: build first (ninja -C {BUILD})"
    return str(path)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pt2")
    pt2_models.write_fixtures(folder)
    return folder


def test_frontend_reads_what_torch_wrote(fixtures):
    run = subprocess.run([binary(FRONTEND_TESTS)], capture_output=True, text=True,
                         env={**os.environ, "PTERON_PT2_FIXTURES": str(fixtures)})
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_pt2_dump_prints_the_graph(fixtures):
    run = subprocess.run([binary(PT2_DUMP), str(fixtures / "mlp.pt2")], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert "aten::addmm.default(self=%p_fc1_bias, mat1=%x, mat2=%permute, beta=1, alpha=1)" \
        in run.stdout
    assert "# torch_version: 2.13" in run.stdout


# ---- Malformed archives -------------------------------------------------------------------

def rewrite(src, dst, edits=None, drop=(), deflate=()):
    """Copies archive `src` to `dst`; `edits` maps an entry suffix to a bytes -> bytes function."""
    edits = edits or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            name = info.filename
            if any(name.endswith(d) for d in drop):
                continue
            data = zin.read(name)
            for suffix, edit in edits.items():
                if name.endswith(suffix):
                    data = edit(data)
            method = zipfile.ZIP_DEFLATED if any(name.endswith(d) for d in deflate) \
                else zipfile.ZIP_STORED
            zout.writestr(name, data, compress_type=method)
    return dst


def edit_model(change):
    def edit(data):
        model = json.loads(data)
        change(model)
        return json.dumps(model).encode()
    return {"models/model.json": edit}


def nodes(model):
    return model["graph_module"]["graph"]["nodes"]


def set_version(model):
    model["schema_version"] = {"major": 7, "minor": 3}
    model["torch_version"] = "2.5.1"


def rename_op(model):
    nodes(model)[1]["target"] = "torch.ops.aten.not_an_op.default"


def rename_to_custom_op(model):
    nodes(model)[1]["target"] = "torch.ops.mylib.fused_mlp.default"


def unknown_kind(model):
    nodes(model)[1]["inputs"][1]["arg"] = {"as_foo": 1}


def drop_mat1(model):
    del nodes(model)[1]["inputs"][1]


def dangling(model):
    nodes(model)[1]["inputs"][1]["arg"] = {"as_tensor": {"name": "nope"}}


def untyped(model):
    del model["graph_module"]["graph"]["tensor_values"]["relu"]


def wrong_type(model):
    nodes(model)[0]["inputs"][1]["arg"] = {"as_tensor": {"name": "x"}}


def unlisted_constant(model):
    model["graph_module"]["signature"]["input_specs"][0]["parameter"]["parameter_name"] = "ghost"


def missing_field(model):
    del nodes(model)[2]["target"]


def broken_json(data):
    return data[: len(data) // 2]


def truncate(data):
    return data[:-12]


def make_case(name, fixtures, tmp_path):
    mlp = fixtures / "mlp.pt2"
    out = tmp_path / "mlp.pt2"  # same root folder name as the original
    if name == "missing model.json":
        return rewrite(mlp, out, drop=["models/model.json"])
    if name == "bad json":
        return rewrite(mlp, out, {"models/model.json": broken_json})
    if name == "schema version":
        return rewrite(mlp, out, edit_model(set_version))
    if name == "unknown op":
        return rewrite(mlp, out, edit_model(rename_op))
    if name == "unknown custom op":
        return rewrite(mlp, out, edit_model(rename_to_custom_op))
    if name == "unknown arg kind":
        return rewrite(mlp, out, edit_model(unknown_kind))
    if name == "missing argument":
        return rewrite(mlp, out, edit_model(drop_mat1))
    if name == "unknown tensor":
        return rewrite(mlp, out, edit_model(dangling))
    if name == "missing tensor meta":
        return rewrite(mlp, out, edit_model(untyped))
    if name == "argument type":
        return rewrite(mlp, out, edit_model(wrong_type))
    if name == "constant not listed":
        return rewrite(mlp, out, edit_model(unlisted_constant))
    if name == "missing field":
        return rewrite(mlp, out, edit_model(missing_field))
    if name == "truncated weights":
        return rewrite(mlp, out, {"data/weights/weight_0": truncate})
    if name == "compressed weights":
        return rewrite(mlp, out, deflate=["data/weights/weight_0"])
    if name == "truncated file":
        data = mlp.read_bytes()
        out.write_bytes(data[: len(data) // 2])
        return out
    if name == "not a zip":
        out.write_text("hello")
        return out
    if name == "no such file":
        return tmp_path / "absent.pt2"
    if name == "legacy layout":
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("serialized_exported_program.json", "{}")
            z.writestr("version", "7.3")
        return out
    if name == "symbolic shapes":
        class Dyn(torch.nn.Module):
            def forward(self, x):
                return x.view(x.shape[0] * 2, -1) + 1
        batch = torch.export.Dim("batch")
        ep = torch.export.export(Dyn(), (torch.randn(4, 6),), dynamic_shapes={"x": {0: batch}})
        torch.export.save(ep.run_decompositions(), out)
        return out
    raise AssertionError(name)


MALFORMED = {
    "missing model.json": ["missing entry mlp/models/model.json"],
    "bad json": ["mlp/models/model.json", "invalid JSON"],
    "schema version": ["schema version 7.3", "torch 2.5.1", "re-export with torch 2.13"],
    "unknown op": ["node 'addmm'", "aten::not_an_op.default is not in pteron's operator table",
                   "pteron has no kernel for it", "pt2_models.py:"],
    # Decomposing does not remove another library's op: the message says what would.
    "unknown custom op": ["node 'addmm'", "mylib::fused_mlp.default is not in pteron's operator",
                          "a custom operator pteron has no kernel for",
                          "export the model with plain torch ops in its place"],
    "unknown arg kind": ["node 'addmm'", "argument 'mat1'", "unknown argument kind 'as_foo'"],
    "missing argument": ["node 'addmm'", "missing required argument 'mat1'"],
    "unknown tensor": ["node 'addmm'", "argument 'mat1'", "tensor 'nope'"],
    "missing tensor meta": ["tensor 'relu' has no entry in tensor_values"],
    "argument type": ["node 'permute'", "argument 'dims' is as_tensor", "int[]"],
    "constant not listed": ["constant 'ghost' is not listed in",
                            "mlp/data/weights/model_weights_config.json"],
    "missing field": ["node 2", "missing field 'target'"],
    "truncated weights": ["constant 'fc1.weight'", "mlp/data/weights/weight_0", "holds 116 bytes",
                          "needs 128"],
    "compressed weights": ["mlp/data/weights/weight_0 is compressed"],
    "truncated file": ["mlp.pt2", "not a valid zip archive"],
    "not a zip": ["not a valid zip archive"],
    "no such file": ["absent.pt2: cannot open"],
    "legacy layout": ["older torch.export.save", "schema version 7.3"],
    "symbolic shapes": ["input", "('x'): dimension 0 is dynamic with no upper bound",
                        "give its torch.export.Dim a max"],
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_archive_gives_one_line_error(case, fixtures, tmp_path):
    path = make_case(case, fixtures, tmp_path)
    run = subprocess.run([binary(PT2_DUMP), str(path)], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    for expected in MALFORMED[case]:
        assert expected in lines[0], f"{expected!r} not in {lines[0]!r}"


def test_damaged_archives_never_crash(fixtures, tmp_path):
    """Whatever the damage, pt2_dump reads the graph or explains in one line; no crash."""
    import random

    rng = random.Random(0)
    mlp = fixtures / "mlp.pt2"
    data = mlp.read_bytes()
    model_json = json.loads(zipfile.ZipFile(mlp).read("mlp/models/model.json"))
    cases = []
    for i in range(12):  # truncated or bit-flipped bytes anywhere in the file
        damaged = bytearray(data)
        if i % 2:
            damaged = damaged[: rng.randrange(len(data))]
        else:
            for _ in range(4):
                damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        path = tmp_path / f"bytes{i}.pt2"
        path.write_bytes(bytes(damaged))
        cases.append(path)
    for i, model in enumerate(json_mutations(model_json, rng, 40)):
        path = tmp_path / f"json{i}" / "mlp.pt2"
        path.parent.mkdir()
        cases.append(rewrite(mlp, path, {"models/model.json": lambda _, m=model: json.dumps(m)
                                         .encode()}))
    for path in cases:
        run = subprocess.run([binary(PT2_DUMP), str(path)], capture_output=True, text=True)
        assert run.returncode in (0, 1), f"{path}: exit {run.returncode}: {run.stderr[-2000:]}"
        if run.returncode == 1:
            lines = run.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), f"{path}: {run.stderr}"
