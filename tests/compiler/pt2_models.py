"""Small models exported with torch.export.save for the compiler frontend tests.

`write_fixtures(folder)` writes, for every model, NAME.pt2 (after ep.run_decompositions()),
the model's constants as raw bytes (NAME.FQN.bin, laid out as pteron must map them) and one
expectations.json with what torch knows about each graph: ops in order, output shapes and
dtypes, inputs, outputs, constants, and the source lines marked `# line: NAME` below.

    python tests/compiler/pt2_models.py OUTPUT_FOLDER
"""

import json
import re
import sys
from pathlib import Path

import torch
import torch._prims_common as prims
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from torch import nn
from torch.nn import functional as F

# c10::ScalarType numbers of the dtypes these models use.
C10_DTYPE = {torch.float32: 6, torch.int64: 4, torch.bool: 11, torch.float16: 5, torch.int8: 1}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)  # line: mlp.fc1
        return self.fc2(torch.relu(h))  # line: mlp.fc2


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)))  # line: convnet.bn
        return self.pool(y).mean((2, 3))


class Block(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 32), nn.GELU(approximate="tanh"), nn.Linear(32, dim))

    def forward(self, x, mask):
        y = self.norm(x)
        a, _ = self.attn(y, y, y, attn_mask=mask, need_weights=False)  # line: block.attn
        x = x + a
        return x + self.ff(x)


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)  # line: transformer.layer
        return x


class Constants(nn.Module):
    """Parameters and buffers sharing storage, views, a non-dense buffer, a lifted tensor
    constant, a non-persistent buffer, a Python scalar in a tensor position and a mutation."""

    def __init__(self):
        super().__init__()
        base = torch.arange(24, dtype=torch.float32).view(6, 4) / 10
        self.w = nn.Parameter(base[2:4])  # storage offset 8 into `base`
        self.register_buffer("wt", base[4:6].t())  # same storage, transposed
        self.register_buffer("gappy", torch.arange(12.0).view(3, 4)[:, ::2])  # not dense
        self.register_buffer("offset", torch.full((4,), 0.5), persistent=False)
        self.register_buffer("steps", torch.zeros(1))
        self.table = torch.tensor([1.0, -2.0, 3.0, -4.0])  # lifted as a tensor constant

    def forward(self, x):
        self.steps.add_(1)
        y = x * 3 + self.table  # line: constants.scale
        return y + self.w.sum(0) + self.wt.sum(1) + self.offset + self.gappy.sum(), self.steps


class Quantized(nn.Module):
    """A PT2E-style graph: per-tensor activation Q/DQ, per-channel int8 weight."""

    def __init__(self):
        super().__init__()
        self.register_buffer("weight", torch.randint(-127, 128, (3, 4), dtype=torch.int8))
        self.register_buffer("scales", torch.tensor([0.1, 0.2, 0.3]))
        self.register_buffer("zero_points", torch.zeros(3, dtype=torch.int64))

    def forward(self, x):
        qd = torch.ops.quantized_decomposed
        q = qd.quantize_per_tensor(x, 0.05, 2, -128, 127, torch.int8)
        x = qd.dequantize_per_tensor(q, 0.05, 2, -128, 127, torch.int8)
        w = qd.dequantize_per_channel(self.weight, self.scales, self.zero_points, 0, -127, 127,
                                      torch.int8)
        return F.linear(x, w)


def build():
    """name -> (module, example inputs)."""
    torch.manual_seed(0)
    mask = torch.triu(torch.full((5, 5), float("-inf")), 1)
    return {
        "mlp": (Mlp(), (torch.randn(2, 4),)),
        "convnet": (ConvNet(), (torch.randn(1, 3, 8, 8),)),
        "transformer": (Transformer(), (torch.randn(1, 5, 16), mask)),
        "constants": (Constants(), (torch.randn(4),)),
        "quantized": (Quantized(), (torch.randn(2, 4),)),
    }


def export(module, inputs):
    return torch.export.export(module.eval(), inputs).run_decompositions()


def tensor_info(t):
    if t is None:
        return None
    return {"sizes": list(t.shape), "dtype": C10_DTYPE[t.dtype]}


def stored_layout(t):
    """The dim order pteron keeps for a constant, and its bytes in that layout."""
    order = list(t.dim_order()) if prims.is_non_overlapping_and_dense_or_false(t) else list(range(t.dim()))
    return order, t.detach().permute(order).contiguous().numpy().tobytes()


def flat_outputs(val):
    if isinstance(val, (tuple, list)):
        return [x for v in val for x in flat_outputs(v)]
    return [val]


def describe(ep, name, folder):
    graph_inputs = [n for n in ep.graph.nodes if n.op == "placeholder"]
    spec_by_name = {s.arg.name: s for s in ep.graph_signature.input_specs}
    user_inputs, constants = [], {}
    for node in graph_inputs:
        spec = spec_by_name[node.name]
        if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT:
            user_inputs.append({"name": node.name, **tensor_info(node.meta["val"])})
            continue
        fqn = spec.target
        value = ep.state_dict[fqn] if fqn in ep.state_dict else ep.constants[fqn]
        order, data = stored_layout(value)
        (folder / f"{name}.{fqn}.bin").write_bytes(data)
        constants[node.name] = {
            "fqn": fqn,
            "kind": spec.kind.name,
            "persistent": spec.persistent if spec.persistent is not None else True,
            "dim_order": order,
            "bin": f"{name}.{fqn}.bin",
            **tensor_info(value),
        }
    nodes = []
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.target.__module__ == "_operator":
            continue
        op = node.target._schema
        nodes.append({
            "name": node.name,
            "op": f"{op.name}.{op.overload_name or 'default'}",
            "outputs": [tensor_info(v) for v in flat_outputs(node.meta["val"])],
        })
    user_outputs = [s.arg.name for s in ep.graph_signature.output_specs
                    if s.kind == torch.export.graph_signature.OutputKind.USER_OUTPUT]
    by_name = {n.name: n for n in ep.graph.nodes}
    return {
        "inputs": user_inputs,
        "constants": constants,
        "nodes": nodes,
        "outputs": [tensor_info(by_name[n].meta["val"]) for n in user_outputs],
    }


def source_lines():
    lines = {}
    for number, text in enumerate(Path(__file__).read_text().splitlines(), start=1):
        if match := re.search(r"# line: (\S+)$", text):
            lines[match.group(1)] = number
    return lines


def write_fixtures(folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    expectations = {"source_file": str(Path(__file__).resolve()), "lines": source_lines(),
                    "models": {}}
    for name, (module, inputs) in build().items():
        ep = export(module, inputs)
        torch.export.save(ep, folder / f"{name}.pt2")
        expectations["models"][name] = describe(ep, name, folder)
    (folder / "expectations.json").write_text(json.dumps(expectations, indent=1))
    return expectations


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: pt2_models.py OUTPUT_FOLDER")
    write_fixtures(sys.argv[1])
