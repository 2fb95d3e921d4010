"""Graph info in programs and what reads it (`pteron inspect --delegation/--graph`,
`pteron.get_delegation_info`), `pteron bench`, and `pteron run --threads/--kernels`.

One small conv + linear model is exported and compiled once per module; FLOPs of its
convolution and linear are checked exactly (2 per multiply-add, bias not counted).
"""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from pteron_cli import assert_one_line_error, pteron_cli

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "python"), str(REPO / "build" / "python")]


class ConvLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1)).sigmoid()


CONV_FLOPS = 2 * (8 * 6 * 6) * (3 * 3 * 3)
LINEAR_FLOPS = 2 * 10 * (8 * 6 * 6)


def cli(*args, check=True):
    proc = subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("delegation")
    torch.manual_seed(0)
    ep = torch.export.export(ConvLinear().eval(), (torch.randn(1, 3, 6, 6),)).run_decompositions()
    torch.export.save(ep, tmp / "m.pt2")
    cli("compile", tmp / "m.pt2", "-o", tmp / "m.pte", "--backends", "portable")
    cli("compile", tmp / "m.pt2", "-o", tmp / "stripped.pte", "--strip-debug-info", "--backends", "portable")
    cli("compile", tmp / "m.pt2", "-o", tmp / "xnnpack.pte", "--backends", "xnnpack,portable")
    return tmp


def test_delegation_json_has_every_field_and_counts_add_up(programs):
    r = json.loads(cli("inspect", programs / "m.pte", "--delegation", "--json").stdout)
    assert r["graph_info"] is True
    for key in ("nodes", "delegated_nodes", "kernel_nodes", "ops", "regions", "boundaries", "flops",
                "portable_nodes", "backends", "instructions"):
        assert key in r, key
    assert r["delegated_nodes"] + r["kernel_nodes"] == r["nodes"]
    assert sum(o["delegated"] + o["not_delegated"] for o in r["ops"]) == r["nodes"]
    assert sum(r["runs_on"].values()) == r["nodes"]
    # Portable only: nothing delegated, every FLOP on portable kernels, a reason for each node.
    assert r["regions"]["count"] == 0 and r["boundaries"] == {"crossings": 0, "bytes": 0}
    assert r["flops"]["portable"] == r["flops"]["total"] and r["flops"]["share"]["portable"] == 1.0
    # ... but the flatten, a memory view sharing the convolution's output (no instruction)
    assert len(r["portable_nodes"]) + r["runs_on"].get("alias", 0) == r["nodes"]
    assert r["runs_on"].get("alias", 0) == 1 and r["instructions"] == r["nodes"] - 1
    assert all(n["reasons"] for n in r["portable_nodes"])
    assert r["flops"]["total"] >= CONV_FLOPS + LINEAR_FLOPS


def test_flops_of_convolution_and_linear_are_exact(programs):
    import pteron

    info = pteron.get_delegation_info(programs / "m.pte")
    flops = {n["op"]: n["flops"] for n in info.graph_info["nodes"]}
    assert flops["aten::convolution.default"] == CONV_FLOPS
    assert flops["aten::linear.default"] == LINEAR_FLOPS
    conv = next(n for n in info.graph_info["nodes"] if n["op"] == "aten::convolution.default")
    assert conv["module"] == "conv" and "test_delegation_and_bench.py:" in conv["source"]
    assert conv["outputs"] == [{"dtype": "f32", "shape": [1, 8, 6, 6]}]


def test_python_report_is_the_cli_report(programs):
    import pteron

    cli_report = json.loads(cli("inspect", programs / "m.pte", "--delegation", "--json").stdout)
    for key in ("file", "graph_info"):
        cli_report.pop(key)
    info = pteron.get_delegation_info(programs / "m.pte")
    assert info.report == cli_report
    assert info.num_nodes == cli_report["nodes"]
    text = cli("inspect", programs / "m.pte", "--delegation").stdout
    assert info.summary() == text
    assert "left on portable kernels" in text and "aten::convolution.default" in text
    # Bytes and loaded programs give the same answer as the path.
    data = (programs / "m.pte").read_bytes()
    assert pteron.get_delegation_info(data).report == info.report
    assert pteron.get_delegation_info(pteron.load(data)).report == info.report


def test_delegated_program_reports_its_region_and_boundaries(programs):
    import pteron

    info = pteron.get_delegation_info(programs / "xnnpack.pte")
    r = info.report
    assert r["backends"] == ["xnnpack", "portable"]
    assert r["regions"]["per_backend"] == {"xnnpack": r["regions"]["count"]} and r["regions"]["count"] >= 1
    assert r["delegated_nodes"] + r["kernel_nodes"] == r["nodes"]
    assert r["runs_on"]["xnnpack"] == r["delegated_nodes"] >= 5
    # Every FLOP of conv, relu, linear and sigmoid runs in the delegate.
    assert r["flops"]["delegated"] == r["flops"]["total"] >= CONV_FLOPS + LINEAR_FLOPS
    # Into the delegate and back out: 2 crossings, the input and the output bytes.
    assert r["boundaries"]["crossings"] == 2 * r["regions"]["count"]
    region_bytes = sum(g["bytes_in"] + g["bytes_out"] for g in r["regions"]["list"])
    assert r["boundaries"]["bytes"] == region_bytes >= (3 * 6 * 6 + 10) * 4
    # Instructions map back to every node exactly once.
    covered = sorted(n for ins in info.graph_info["instructions"] for n in ins["nodes"])
    assert covered == list(range(r["nodes"]))
    assert "region #0 [xnnpack]" in info.graph()
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(pteron.load(programs / "xnnpack.pte").forward(x)[0],
                               pteron.load(programs / "m.pte").forward(x)[0], rtol=1e-4, atol=1e-5)


def test_graph_view_lists_nodes_in_execution_order(programs):
    text = cli("inspect", programs / "m.pte", "--graph").stdout
    lines = text.splitlines()
    assert lines[0].startswith("graph(x: f32[1, 3, 6, 6]):")
    ops = [line.split(" = ")[1].split("(")[0] for line in lines[1:-1]]
    assert ops == ["aten::convolution.default", "aten::relu.default", "aten::view.default",
                   "aten::linear.default", "aten::sigmoid.default"]
    assert lines[-1].startswith("  return (")


def test_program_without_graph_info_says_so_in_one_line(programs):
    import pteron

    assert (programs / "stripped.pte").stat().st_size < (programs / "m.pte").stat().st_size
    for flag in ("--delegation", "--graph"):
        out = cli("inspect", programs / "stripped.pte", flag).stdout
        assert out.count("\n") == 1 and "no graph info" in out
    j = json.loads(cli("inspect", programs / "stripped.pte", "--delegation", "--json").stdout)
    assert j["graph_info"] is False
    info = pteron.get_delegation_info(programs / "stripped.pte")
    assert not info.has_graph_info and "no graph info" in info.summary()
    # The stripped program still runs, with the same result.
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float32)
    full = pteron.load(programs / "m.pte").forward(x)[0]
    stripped = pteron.load(programs / "stripped.pte").forward(x)[0]
    np.testing.assert_array_equal(full, stripped)


def test_bench_json_reports_latency_memory_and_settings(programs):
    r = json.loads(cli("bench", programs / "m.pte", "--warmup", "1", "--iters", "7", "--threads", "2",
                       "--kernels", "portable", "--json").stdout)
    assert r["iterations"] == 7 and len(r["times_ms"]) == 7 and r["warmup"] == 1
    assert r["min_ms"] <= r["median_ms"] <= r["p90_ms"] <= r["max_ms"]
    assert r["min_ms"] == min(r["times_ms"]) and r["max_ms"] == max(r["times_ms"])
    assert r["median_ms"] == sorted(r["times_ms"])[3]
    assert r["load_ms"] > 0 and r["peak_rss_bytes"] > 1 << 20
    import pteron

    meta = pteron.load(programs / "m.pte").method_meta()
    assert r["planned_bytes"] == sum(meta["planned_buffer_sizes"]) > 0
    assert r["threads"] == 2 and r["kernels"] == "portable"
    assert r["kernel_libraries"] == {"portable": meta["num_instructions"]}
    assert r["inputs"].startswith("random")
    assert r["isa"] in {"avx512", "avx2", "baseline", "neon", "scalar"}
    assert r["median_cpu_ms"] > 0 and r["load_average_1m"] >= 0


def _cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _bench_isa(programs, env_isa):
    env = dict(os.environ, PTERON_ISA=env_isa)
    r = subprocess.run([pteron_cli(), "bench", str(programs / "m.pte"), "--iters", "2", "--json"],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout)["isa"], r.stderr


def test_pteron_isa_forces_a_lower_level_and_refuses_a_higher_one(programs):
    # Figures for an AVX2-only machine are measured on an AVX-512 one by forcing the level; a
    # level the CPU lacks is never used (it would fault) and says so. The levels are x86-64's:
    # elsewhere the kernels' one vector ISA (NEON on aarch64) runs whatever is asked.
    if platform.machine() != "x86_64":
        isa, _ = _bench_isa(programs, "avx2")
        assert isa == ("neon" if platform.machine() == "aarch64" else "scalar")
        return
    flags = _cpu_flags()
    assert _bench_isa(programs, "baseline") == ("baseline", "")
    if {"avx2", "fma"} <= flags:
        assert _bench_isa(programs, "avx2") == ("avx2", "")
    if not {"avx512f", "avx512vl"} <= flags:
        isa, err = _bench_isa(programs, "avx512")
        assert isa != "avx512" and "beyond this CPU" in err
    isa, err = _bench_isa(programs, "sse9")
    assert "PTERON_ISA=sse9 is not one of" in err and isa in {"avx512", "avx2", "baseline"}


def test_bench_text_and_given_inputs(programs, tmp_path):
    np.savez(tmp_path / "x.npz", input_0=np.ones((1, 3, 6, 6), np.float32))
    out = cli("bench", programs / "m.pte", "--inputs", tmp_path / "x.npz", "--iters", "3").stdout
    for word in ("load time", "median", "p90", "min", "max", "peak RSS", "planned arena"):
        assert word in out, out


def test_bench_errors_are_one_line(programs, tmp_path):
    pte = programs / "m.pte"
    assert_one_line_error(cli("bench", pte, "--iters", "0", check=False), "--iters")
    assert_one_line_error(cli("bench", pte, "--warmup", "-1", check=False), "--warmup")
    assert_one_line_error(cli("bench", pte, "--kernels", "nonesuch", check=False), "nonesuch", "portable")
    assert_one_line_error(cli("bench", pte, "--threads", "1000", check=False), "--threads")
    assert_one_line_error(cli("bench", tmp_path / "missing.pte", check=False), "missing.pte")
    np.savez(tmp_path / "bad.npz", input_0=np.ones((2, 2), np.float32))
    assert_one_line_error(cli("bench", pte, "--inputs", tmp_path / "bad.npz", check=False), "bad.npz")


def test_run_threads_and_kernels(programs):
    r = json.loads(cli("run", programs / "m.pte", "--random-inputs", "--threads", "3", "--kernels",
                       "portable", "--json").stdout)
    assert r["threads"] == 3 and set(r["kernel_libraries"]) == {"portable"}
    default = json.loads(cli("run", programs / "m.pte", "--random-inputs", "--json").stdout)
    # The optimized kernels (the default) may round differently from the portable ones: same
    # shapes and dtypes, values within float32 reassociation error.
    assert [(o["dtype"], o["shape"]) for o in default["outputs"]] == [(o["dtype"], o["shape"]) for o in r["outputs"]]
    for mine, portable in zip(default["outputs"], r["outputs"]):
        np.testing.assert_allclose(mine["head"], portable["head"], rtol=1e-5, atol=1e-6)
    assert_one_line_error(cli("run", programs / "m.pte", "--random-inputs", "--kernels", "gpu",
                              check=False), "gpu")
