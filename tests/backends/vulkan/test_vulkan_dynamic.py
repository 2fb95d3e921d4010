"""Bounded dynamic shapes on the Vulkan delegate ("resize at execute", lavapipe): a transformer
block over a dynamic sequence and a CNN over a dynamic batch, compiled once with
`--backends vulkan,portable`, run several sizes (minimum, maximum, between, repeated) through one
loaded method and match torch; the delegation report shows their dynamic nodes in Vulkan; a
size beyond the bound is the one-line error every path gives.

Tolerance (fp32, Vulkan vs torch eager): max abs error within 1e-4 * (1 + max |reference|), as
test_vulkan_lowering.py (the shaders sum in their own order; the device's exp differs from libm
by a few ulp).
"""

import json
import os
import subprocess

import numpy as np
import pytest
import torch
from torch.export import Dim

_LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if os.path.exists(_LAVAPIPE):
    os.environ.setdefault("VK_ICD_FILENAMES", _LAVAPIPE)  # before the device context is made

import pteron  # noqa: E402
from pteron_cli import pteron_cli  # noqa: E402

TOL = 1e-4


class Block(torch.nn.Module):
    """A pre-norm transformer block: layer norm, q/k/v linears, heads by view + transpose,
    scaled scores by bmm, softmax, bmm, output projection, residual; layer norm, GELU MLP,
    residual. Every size follows the sequence length."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))
        self.proj = torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)

        def heads(t):  # [b, s, d] -> [b * heads, s, dh]
            return t.view(b, s, self.heads, self.dh).transpose(1, 2).reshape(b * self.heads, s, self.dh)

        q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
        att = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * self.dh**-0.5, dim=-1)
        o = torch.bmm(att, v).view(b, self.heads, s, self.dh).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(o)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class Cnn(torch.nn.Module):
    """conv + batch norm (folded) + relu, max pool, strided conv + relu, average pool, adaptive
    average pool (a mean over H, W), flatten, linear head."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
        x = torch.nn.functional.avg_pool2d(torch.relu(self.c2(x)), 2)
        return self.fc(torch.flatten(self.pool(x), 1))


# name: (model, example shape, dynamic_shapes, shapes to run in one loaded method, bound error)
CASES = {
    "block-seq": (Block, (2, 16, 32), {"x": {1: Dim("seq", min=2, max=48)}},
                  [(2, 2, 32), (2, 48, 32), (2, 17, 32), (2, 17, 32), (2, 5, 32)], (2, 49, 32)),
    "cnn-batch": (Cnn, (2, 3, 32, 32), {"x": {0: Dim("batch", min=1, max=6)}},
                  [(1, 3, 32, 32), (6, 3, 32, 32), (3, 3, 32, 32), (3, 3, 32, 32), (1, 3, 32, 32)],
                  (7, 3, 32, 32)),
}

# Ops whose every node the report must show on Vulkan (all of them dynamic here).
ON_VULKAN = {
    "block-seq": ["aten::linear.default", "aten::bmm.default", "aten::_softmax.default",
                  "aten::native_layer_norm.default", "aten::gelu.default", "aten::add.Tensor"],
    "cnn-batch": ["aten::convolution.default", "aten::max_pool2d_with_indices.default",
                  "aten::avg_pool2d.default", "aten::mean.dim", "aten::relu.default",
                  "aten::linear.default"],
}


def cli(*args):
    return subprocess.run([pteron_cli(), *args], capture_output=True, text=True)


@pytest.fixture(scope="module", params=sorted(CASES))
def compiled(request, tmp_path_factory):
    name = request.param
    make, shape, dynamic, _, _ = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    folder = tmp_path_factory.mktemp(name)
    torch.export.save(pteron.export(model, (torch.randn(*shape),), dynamic_shapes=dynamic),
                      folder / "m.pt2")
    run = cli("compile", str(folder / "m.pt2"), "-o", str(folder / "m.pte"), "--backends",
              "vulkan,portable")
    assert run.returncode == 0, run.stderr
    return name, model, folder / "m.pte"


def test_one_method_runs_every_size_and_matches_torch(compiled):
    name, model, pte = compiled
    method = pteron.load(pte).load_method("forward")
    torch.manual_seed(1)
    for shape in CASES[name][3]:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x).numpy()
        got = method.execute([x.numpy()])[0]
        assert got.shape == want.shape, (shape, got.shape)
        err = float(np.abs(got - want).max())
        assert err <= TOL * (1 + float(np.abs(want).max())), (name, shape, err)


def test_delegation_report_shows_the_dynamic_nodes_in_vulkan(compiled):
    name, _, pte = compiled
    run = cli("inspect", str(pte), "--delegation", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    ops = {o["op"]: o for o in report["ops"]}
    for op in ON_VULKAN[name]:
        assert op in ops, (op, sorted(ops))
        assert ops[op]["not_delegated"] == 0, (op, ops[op], report["portable_nodes"])
        assert set(ops[op]["runs_on"]) == {"vulkan"}, ops[op]
    reasons = [r for n in report["portable_nodes"] for r in n["reasons"]]
    assert not any("records its dispatches for static shapes" in r for r in reasons), reasons


def test_size_beyond_the_bound_is_the_one_line_error(compiled, tmp_path):
    name, _, pte = compiled
    shape = CASES[name][4]
    dim = next(d for d, (a, b) in enumerate(zip(shape, CASES[name][1])) if a != b)
    np.savez(tmp_path / "in.npz", input_0=np.zeros(shape, np.float32))
    run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"))
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert f"input 0: size {shape[dim]} in dim {dim} is outside the program's bounds" in lines[0], lines[0]


def test_ops_the_delegate_does_not_resize_are_refused_with_the_reason(tmp_path):
    """A dynamic upsample stays on the kernels, saying why; the conv after it runs on Vulkan
    only if its spatial sizes are static (here they follow the dynamic image: refused too)."""

    class Up(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x):
            return self.c(torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"))

    ep = pteron.export(Up().eval(), (torch.randn(2, 4, 8, 8),),
                       dynamic_shapes={"x": {2: Dim("h", min=4, max=16)}})
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VulkanPartitioner()])
    refusals = "\n".join(program.report["refusals"])
    assert "resizes linear/matmul, elementwise, softmax, layer norm, mean, view/permute and " \
           "batch-dynamic conv/pool at execute, not aten::upsample_nearest2d.vec" in refusals, refusals
    assert "with a dynamic channel, height or width (the Vulkan delegate resizes its batch only)" \
           in refusals, refusals


@pytest.mark.parametrize("name", sorted(CASES))
def test_fp16_regions_resize_too(name):
    """`vulkan:fp16=on`: the boundary converts follow the sizes as well. Tolerance as every fp16
    region's (README): 3e-2 * (1 + max |reference|)."""
    make, shape, dynamic, runs, _ = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    ep = pteron.export(model, (torch.randn(*shape),), dynamic_shapes=dynamic)
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VulkanPartitioner(fp16=True)])
    assert [r["backend"] for r in program.report["delegated_regions"]] == ["vulkan:fp16=on"]
    method = program.load()
    for shape in runs[:3]:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x).numpy()
        got = np.asarray(method.forward(x)[0])
        assert got.shape == want.shape, (shape, got.shape)
        assert float(np.abs(got - want).max()) <= 3e-2 * (1 + float(np.abs(want).max())), shape
