"""pteron's programs open in Google's Model Explorer through ExecuTorch's PTE adapter (PyPI
pte-adapter-model-explorer, pinned in requirements.txt): `PTEAdapter().convert(path, {})`
returns a graph with one node per instruction plus the graph's inputs and outputs, labelled
with the program's operator names (overload dropped) and its delegates' backend ids.

Programs: the zoo's digits-cnn exported and compiled by pteron here (portable kernels), and a
pteron XNNPACK-mixed transformer block (tests/fixtures/explorer).
"""

import json
import subprocess
from collections import Counter
from pathlib import Path

from pte_adapter_model_explorer.main import PTEAdapter

from pteron import get_delegation_info, zoo
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "tests" / "fixtures" / "explorer" / "transformer_block_xnnpack.pte"


def pteron_json(*args) -> dict:
    done = subprocess.run([pteron_cli(), *args, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def adapter_graph(program: Path):
    result = PTEAdapter().convert(str(program), {})
    collections = result["graphCollections"]
    assert len(collections) == 1
    graphs = collections[0].graphs
    assert [g.id for g in graphs] == ["forward"]
    return graphs[0]


def expected_labels(program: Path) -> Counter:
    """Operator and backend labels per instruction, from `pteron inspect --json`."""
    method = pteron_json("inspect", str(program))["methods"][0]
    labels = Counter()
    for op in method.get("operators", []):
        labels[op["name"].rsplit(".", 1)[0]] += op["calls"]
    for d in method.get("delegates", []):
        labels[d["backend"]] += d["calls"]
    assert sum(labels.values()) == method["instructions"]
    return labels


def memory_view_readers(program: Path) -> int:
    """Nodes that read only memory views' outputs (no instruction makes those values:
    compiler/memory/memory_views.h), so the adapter finds no producer to wire them to."""
    nodes = get_delegation_info(program).graph_info.get("nodes", [])
    alias = {i for i, n in enumerate(nodes) if n.get("runs_on") == "alias"}
    return sum(1 for n in nodes if n.get("runs_on") != "alias" and
               any(isinstance(p, int) and p in alias for p in n["inputs"]))


def check(program: Path):
    graph = adapter_graph(program)
    labels = Counter(n.label for n in graph.nodes)
    assert labels.pop("Graph Inputs") == 1
    assert labels.pop("Graph Outputs") == 1
    assert labels == expected_labels(program)
    # Instructions are wired to their producers. The adapter does not follow tensor lists
    # (split_with_sizes outputs), so the readers of list items (q, k, v: 3 per split here) may
    # stand alone, as may readers of memory views; every other node is wired.
    unwired = [n.id for n in graph.nodes if n.label != "Graph Inputs" and not n.incomingEdges]
    allowed = 3 * labels["aten::split_with_sizes_copy"] + memory_view_readers(program)
    assert len(unwired) <= allowed, unwired
    return graph, labels


def test_zoo_program_opens_in_model_explorer(tmp_path):
    pt2, pte = tmp_path / "digits-cnn.pt2", tmp_path / "digits-cnn.pte"
    zoo.export("digits-cnn", pt2, log=lambda msg: None)
    compile_portable = [pteron_cli(), "compile", str(pt2), "-o", str(pte), "--backends", "portable"]
    done = subprocess.run(compile_portable, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _, labels = check(pte)
    assert labels["aten::convolution"] == 2
    assert labels["aten::linear"] + labels["aten::addmm"] == 1


def test_delegated_program_opens_in_model_explorer():
    graph, labels = check(MIXED)
    assert labels["PteronXnnpackBackend"] == 8
    delegate = next(n for n in graph.nodes if n.label == "PteronXnnpackBackend")
    assert delegate.incomingEdges
    attrs = {a.key: a.value for a in delegate.attrs}
    assert attrs["Instruction Type"] == "DelegateCall"
