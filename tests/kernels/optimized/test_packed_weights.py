"""Constant weights packed once (runtime/kernel/constant_cache.h, SgemmProblem::b_cache): the
optimized linear, addmm/mm and convolution kernels pack a program constant into the SGEMM
micro-kernel's panels on their first product and reuse the panels on every later call, kept by
the loaded program (`Program.constant_cache()`, runtime/host/host_constant_cache.h), shared by
its methods, and counted in `pteron run/bench --json` (`packed_constant_bytes`).

Checked here: results against torch (float32, atol 1e-4 * sqrt(K), rtol 1e-4, as the optimized
linear) and bit for bit against the same program loaded without the cache; a second call (and
other sizes of a dynamic dim) derives nothing; two methods sharing a weight share one packed
copy; PTERON_CONSTANT_CACHE=off packs per call. The panels themselves against per-call packing,
for every micro-kernel: optimized_kernels_test (sgemm_packed_test.cpp).
"""

import json
import math
import os
import subprocess

import numpy as np
import pteron
import pytest
import torch
from pteron_cli import pteron_cli

KERNELS = ("optimized", "portable")


def compile_program(model, example, dynamic_shapes=None):
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes).run_decompositions()
    return pteron.to_edge_transform_and_lower(ep, kernels=KERNELS).buffer()


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(64, 300)
        self.fc2 = torch.nn.Linear(300, 40)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Convs(torch.nn.Module):
    """A stride-2 convolution (more pixels than channels: the weights are the SGEMM's A) and one
    over few pixels and many channels (computed transposed: the weights are its B)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.wide = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.deep = torch.nn.Conv2d(16, 96, 3, stride=2)

    def forward(self, x):
        return self.deep(torch.relu(self.wide(x)))


def run(program_bytes, x, calls=1):
    loaded = pteron.load(program_bytes)
    outs = [loaded.forward(x)[0] for _ in range(calls)]
    return loaded, outs


def tolerance(k):
    return dict(atol=1e-4 * math.sqrt(k), rtol=1e-4)


@pytest.mark.parametrize("model,shape,k", [(Mlp, (16, 64), 300), (Convs, (1, 8, 32, 32), 144)],
                         ids=["linear", "convolution"])
def test_packed_once_matches_torch_and_per_call_packing(model, shape, k, monkeypatch):
    m = model().eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(2))
    program = compile_program(m, (x,))
    loaded, outs = run(program, x.numpy(), calls=3)
    expected = m(x).detach().numpy()
    np.testing.assert_allclose(outs[0], expected, **tolerance(k))
    cache = loaded.constant_cache()
    assert cache["derivations"] == 2 == cache["blocks"], cache  # the two weights, once each
    assert cache["bytes"] >= sum(p.numel() * 4 for n, p in m.named_parameters() if "weight" in n)
    # Later calls read the same panels: bit for bit the first call and the per-call packing.
    monkeypatch.setenv("PTERON_CONSTANT_CACHE", "off")
    uncached, (per_call,) = run(program, x.numpy())
    assert uncached.constant_cache() == {"bytes": 0, "blocks": 0, "derivations": 0}
    for out in outs:
        np.testing.assert_array_equal(out, per_call)


def test_second_call_and_other_sizes_derive_nothing():
    m = Mlp().eval()
    seq = torch.export.Dim("seq", min=2, max=64)
    program = compile_program(m, (torch.randn(8, 64),), dynamic_shapes=({0: seq},))
    loaded = pteron.load(program)
    method = loaded.load_method()
    assert loaded.constant_cache()["derivations"] == 0  # nothing before the first product
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(3))
    method.execute([x[:8].numpy()])
    first = loaded.constant_cache()
    assert first["derivations"] == 2, first
    for rows in (2, 5, 64, 8):  # the panels depend on the weights' K and N only
        out = method.execute([x[:rows].numpy()])[0]
        np.testing.assert_allclose(out, m(x[:rows]).detach().numpy(), **tolerance(300))
    assert loaded.constant_cache() == first


def test_methods_of_one_program_share_the_packed_weights():
    shared = torch.nn.Linear(48, 200)

    class A(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = shared

        def forward(self, x):
            return self.fc(x)

    class B(A):
        def forward(self, x):
            return torch.relu(self.fc(x)) * 2.0

    x = torch.randn(12, 48)
    eps = {name: torch.export.export(mod().eval(), (x,)).run_decompositions()
           for name, mod in (("first", A), ("second", B))}
    program = pteron.to_edge_transform_and_lower(eps, kernels=KERNELS).buffer()
    loaded = pteron.load(program)
    first = loaded.run_method("first", [x.numpy()])[0]
    after_first = loaded.constant_cache()
    assert after_first["derivations"] == 1, after_first
    second = loaded.run_method("second", [x.numpy()])[0]
    assert loaded.constant_cache() == after_first  # one packed copy for both methods
    np.testing.assert_allclose(first, shared(x).detach().numpy(), **tolerance(48))
    np.testing.assert_allclose(second, (torch.relu(shared(x)) * 2).detach().numpy(), **tolerance(48))


def test_cli_reports_the_packed_bytes_and_the_switch_turns_packing_off(tmp_path):
    m = Mlp().eval()
    pte = tmp_path / "mlp.pte"
    pte.write_bytes(compile_program(m, (torch.randn(16, 64),)))

    def bench(env_value):
        env = dict(os.environ)
        env.pop("PTERON_CONSTANT_CACHE", None)
        if env_value is not None:
            env["PTERON_CONSTANT_CACHE"] = env_value
        out = subprocess.run([pteron_cli(), "bench", str(pte), "--iters", "2", "--json"], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["packed_constant_bytes"]

    assert bench(None) >= (64 * 300 + 300 * 40) * 4
    assert bench("off") == 0
    run_json = json.loads(subprocess.run([pteron_cli(), "run", str(pte), "--random-inputs", "--json"],
                                         capture_output=True, text=True, check=True).stdout)
    assert run_json["packed_constant_bytes"] >= (64 * 300 + 300 * 40) * 4


class Tower(torch.nn.Module):
    """Six 1024 x 1024 linears: 24 MiB of fp32 weights, large next to the runtime's own RSS."""

    def __init__(self, bias=True):
        super().__init__()
        torch.manual_seed(2)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(1024, 1024, bias=bias) for _ in range(6))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def test_a_mapped_program_keeps_one_copy_of_its_packed_weights(tmp_path, monkeypatch):
    """A program opened from its file gives the pages of each packed weight back to the OS (they
    are read again from the file if anything needs them): the peak RSS grows by far less than
    the weights' size over packing per call, and the results stay bit for bit those of the
    program without the cache, call after call."""
    m = Tower().eval()
    x = torch.randn(32, 1024)
    pte = tmp_path / "tower.pte"
    pte.write_bytes(compile_program(m, (x,)))
    weights = 6 * 1024 * 1024 * 4

    def peak_rss(env_value):
        env = dict(os.environ)
        env.pop("PTERON_CONSTANT_CACHE", None)
        if env_value is not None:
            env["PTERON_CONSTANT_CACHE"] = env_value
        out = subprocess.run([pteron_cli(), "bench", str(pte), "--iters", "3", "--json"], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["peak_rss_bytes"], json.loads(out)["packed_constant_bytes"]

    packed_rss, packed_bytes = peak_rss(None)
    per_call_rss, _ = peak_rss("off")
    assert packed_bytes >= weights
    # Without giving the pages back, the packed copy came on top of the file's pages (+24 MiB
    # measured). With them given back: +0.1 MiB for a file in 4 KiB page-cache pages, +12 MiB
    # where the file's page cache is in 2 MiB folios (a freshly written file on ext4): the
    # kernel maps a whole folio back when a neighbouring byte is touched.
    assert packed_rss - per_call_rss < weights * 3 // 4, (packed_rss, per_call_rss)

    loaded = pteron.load(str(pte))
    outs = [loaded.forward(x.numpy())[0] for _ in range(3)]
    assert loaded.constant_cache()["derivations"] == 6
    monkeypatch.setenv("PTERON_CONSTANT_CACHE", "off")
    plain = pteron.load(str(pte)).forward(x.numpy())[0]
    for out in outs:
        np.testing.assert_array_equal(out, plain)
    with torch.no_grad():
        torch.testing.assert_close(torch.from_numpy(outs[0]), m(x), **tolerance(1024))


def resident_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_row_vectors_after_a_matrix_product_read_the_packed_weights(tmp_path):
    """Decode after prefill: a batch of rows packs each weight (and the mapped file's pages of it
    go back to the OS); single rows after it (the matrix-vector path) read the packed panels,
    not the file, so the weights are not resident twice. Results match torch (float32, the
    optimized linear's tolerance). No biases, as in a Llama: reading a bias would map back the
    2 MiB page-cache folio around it (test above)."""
    m = Tower(bias=False).eval()
    batch = torch.export.Dim("batch", min=1, max=32)
    pte = tmp_path / "tower.pte"
    pte.write_bytes(compile_program(m, (torch.randn(32, 1024),), dynamic_shapes=({0: batch},)))
    weights = 6 * 1024 * 1024 * 4
    rows, row = torch.randn(32, 1024), torch.randn(1, 1024)
    loaded = pteron.load(str(pte))
    loaded.forward(rows.numpy())
    before = resident_bytes()
    outs = [loaded.forward(row.numpy())[0] for _ in range(3)]
    # Reading the stored weights would fault their 24 MiB back in (measured: +0 MiB; +22 MiB
    # with biases before the matrix-vector path read the panels).
    assert resident_bytes() - before < weights // 4, (before, resident_bytes())
    assert loaded.constant_cache()["derivations"] == 6
    with torch.no_grad():
        for out in outs:
            torch.testing.assert_close(torch.from_numpy(out), m(row), **tolerance(1024))


def test_a_matrix_product_after_row_vectors_reads_their_copy_and_packs_nothing(tmp_path):
    """A one-token first call, then a longer one (a chat's first turn of one token): the row
    vectors copied each weight into the cache's huge pages and gave the file's pages back; the
    matrix product then packs per call from that copy rather than packing the weight into the
    cache as well, so the weights stay resident once. Results are bit for bit those of the same
    program loaded from bytes (no copy: packed into the cache, the same panels), and match torch
    (float32, the optimized linear's tolerance)."""
    m = Tower(bias=False).eval()
    batch = torch.export.Dim("batch", min=1, max=32)
    pte = tmp_path / "tower-row-then-rows.pte"
    pte.write_bytes(compile_program(m, (torch.randn(32, 1024),), dynamic_shapes=({0: batch},)))
    weights = 6 * 1024 * 1024 * 4
    row, rows = torch.randn(1, 1024), torch.randn(32, 1024)
    mapped = pteron.load(str(pte))
    mapped.forward(row.numpy())
    copied = mapped.constant_cache()
    assert copied["derivations"] == 6 and copied["bytes"] >= weights, copied
    before = resident_bytes()
    outs = [mapped.forward(rows.numpy())[0] for _ in range(2)]
    # Packing into the cache would add 24 MiB of panels (measured: +0 MiB with the copy read).
    assert resident_bytes() - before < weights // 4, (before, resident_bytes())
    assert mapped.constant_cache() == copied
    in_memory = pteron.load(pte.read_bytes())
    plain = in_memory.forward(rows.numpy())[0]
    assert in_memory.constant_cache()["derivations"] == 6  # packed: no file, so no copy
    for out in outs:
        np.testing.assert_array_equal(out, plain)
    with torch.no_grad():
        torch.testing.assert_close(torch.from_numpy(outs[0]), m(rows), **tolerance(1024))


def test_row_vectors_alone_stream_a_huge_page_copy_of_a_mapped_weight(tmp_path):
    """A weight only row vectors read (an LLM's output projection: prefill computes the last
    token's logits only) is copied once into the cache's huge pages, the file's pages given back
    chunk by chunk: the peak RSS does not hold the weight twice, and the results are bit for bit
    those of the same program loaded from bytes (no file mapping, so no copy)."""
    m = Tower(bias=False).eval()
    row = torch.randn(1, 1024)
    pte = tmp_path / "tower-row.pte"
    pte.write_bytes(compile_program(m, (row,)))
    weights = 6 * 1024 * 1024 * 4
    mapped = pteron.load(str(pte))
    outs = [mapped.forward(row.numpy())[0] for _ in range(3)]
    stats = mapped.constant_cache()
    assert stats["derivations"] == 6 and stats["bytes"] >= weights, stats
    in_memory = pteron.load(pte.read_bytes())
    assert in_memory.constant_cache()["derivations"] == 0
    plain = in_memory.forward(row.numpy())[0]
    assert in_memory.constant_cache()["derivations"] == 0
    for out in outs:
        np.testing.assert_array_equal(out, plain)

    def peak_rss(env_value):
        env = {k: v for k, v in os.environ.items() if k != "PTERON_CONSTANT_CACHE"}
        if env_value is not None:
            env["PTERON_CONSTANT_CACHE"] = env_value
        out = subprocess.run([pteron_cli(), "bench", str(pte), "--iters", "3", "--json"], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["peak_rss_bytes"]

    # Measured: +5 MiB over reading the file's pages (the copy's 2 MiB pages); holding the
    # weights twice at the copy's peak would be +24 MiB.
    copied, read_in_place = peak_rss(None), peak_rss("off")
    assert copied - read_in_place < weights // 2, (copied, read_in_place)
