"""Bounded dynamic shapes end to end: models exported with torch.export.Dim on the batch, the
sequence length and the image size compile once (memory planned at the upper bound, tensors
DYNAMIC_BOUND), and one loaded method runs them at the minimum, the maximum and sizes in
between, matching PyTorch. Sizes outside the bounds and unbounded Dims are refused with a
one-line message."""

import subprocess

import numpy as np
import pytest
import torch
from torch.export import Dim

import pteron
from pteron_cli import pteron_cli

TOL = dict(rtol=1e-4, atol=1e-4)  # float32, different summation orders than torch


class ConvNet(torch.nn.Module):
    """Conv + batch norm + relu, a strided conv, adaptive average pooling, a linear head."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.c1(x)))
        x = torch.relu(self.c2(x))
        return self.fc(torch.flatten(self.pool(x), 1))


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class Lstm(torch.nn.Module):
    """A dynamic batch through nn.LSTM (kept whole by pteron.export, pteron::lstm.out);
    test_recurrent_steps.py makes the step count dynamic, StreamingLstm below runs steps
    one call at a time through state kept between calls."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.lstm(x)[0])


# name: (model, example input, dynamic_shapes, input shapes to run: min, between, max)
CASES = {
    "convnet-batch-image": (
        ConvNet, (2, 3, 16, 16),
        {"x": {0: Dim("batch", min=1, max=4), 2: Dim("hw", min=8, max=32), 3: Dim("hw", min=8, max=32)}},
        [(1, 3, 8, 8), (3, 3, 20, 20), (2, 3, 13, 13), (4, 3, 32, 32), (1, 3, 8, 8)],
    ),
    "encoder-seq": (
        Encoder, (2, 16, 32),
        {"x": {1: Dim("seq", min=2, max=64)}},
        [(2, 2, 32), (2, 17, 32), (2, 64, 32), (2, 5, 32)],
    ),
    "lstm-batch": (
        Lstm, (2, 6, 8),
        {"x": {0: Dim("batch", min=1, max=8)}},
        [(1, 6, 8), (5, 6, 8), (8, 6, 8), (2, 6, 8)],
    ),
}

BACKENDS = {
    "portable": "portable",
    "cpu": "xnnpack,optimized,portable",
    "vulkan": "vulkan,portable",
}


def cli(*args):
    return subprocess.run([pteron_cli(), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dyn-pt2")
    cache = {}

    def get(name):
        if name not in cache:
            make, shape, dynamic, _ = CASES[name]
            torch.manual_seed(0)
            model = make().eval()
            ep = pteron.export(model, (torch.randn(*shape),), dynamic_shapes=dynamic)
            path = folder / f"{name}.pt2"
            torch.export.save(ep, path)
            cache[name] = (model, path)
        return cache[name]

    return get


def compile_program(pt2, out, backends):
    run = cli("compile", str(pt2), "-o", str(out), "--backends", backends)
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("backends", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_method_runs_every_size_within_bounds(name, backends, exported, tmp_path):
    model, pt2 = exported(name)
    pte = compile_program(pt2, tmp_path / f"{name}.pte", BACKENDS[backends])
    method = pteron.load(pte).load_method("forward")
    torch.manual_seed(1)
    for shape in CASES[name][3]:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x).numpy()
        got = method.execute([x.numpy()])[0]
        assert got.shape == want.shape, (shape, got.shape, want.shape)
        np.testing.assert_allclose(got, want, **TOL, err_msg=f"{name} {backends} {shape}")


def test_program_marks_tensors_dynamic_and_plans_at_the_upper_bound(exported, tmp_path):
    """The conv net's dynamic arena equals the static program compiled at the maximum size,
    and running at other sizes changes neither the arenas nor the method's allocations. (The
    encoder's dynamic arena is larger than its static one, 848 vs 416 KiB: the static compile
    folds the in-projection weight expanded to the batch of 64 rows into a 768 KiB constant,
    which the dynamic program computes into the arena, 881 vs 1205 KiB in all.)"""
    model, pt2 = exported("convnet-batch-image")
    dyn = compile_program(pt2, tmp_path / "dyn.pte", "portable")
    ep = pteron.export(model, (torch.randn(4, 3, 32, 32),))
    static_pt2 = tmp_path / "static.pt2"
    torch.export.save(ep, static_pt2)
    static = compile_program(static_pt2, tmp_path / "static.pte", "portable")
    dyn_info = pteron.load(dyn).method_meta("forward")
    static_info = pteron.load(static).method_meta("forward")
    assert dyn_info["inputs"][0]["shape"] == [4, 3, 32, 32]
    assert dyn_info["planned_buffer_sizes"] == static_info["planned_buffer_sizes"]
    method = pteron.load(dyn).load_method("forward")
    before = method.meta
    for shape in [(1, 3, 8, 8), (4, 3, 32, 32), (2, 3, 17, 17)]:
        method.execute([np.random.rand(*shape).astype(np.float32)])
        after = method.meta
        assert after["planned_buffer_sizes"] == before["planned_buffer_sizes"]
        assert after["method_allocator_bytes"] == before["method_allocator_bytes"]
    names = method.instruction_names()
    assert names[0] == "aten::sym_size.int", names[:3]
    shown = cli("inspect", str(dyn))
    assert "input 0: float32 [4,3,32,32] (dynamic: sizes from [1,3,8,8])" in shown.stdout, shown.stdout


@pytest.mark.parametrize("shape, dim, bound", [((2, 65, 32), 1, "[2, 64]"), ((2, 1, 32), 1, "[2, 64]"),
                                               ((3, 8, 32), 0, "expects 2")])
def test_size_outside_bounds_is_one_line_error(shape, dim, bound, exported, tmp_path):
    _, pt2 = exported("encoder-seq")
    pte = compile_program(pt2, tmp_path / "enc.pte", "portable")
    inputs = tmp_path / "in.npz"
    np.savez(inputs, input_0=np.zeros(shape, np.float32))
    run = cli("run", str(pte), "--inputs", str(inputs))
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "input 0" in lines[0] and f"dim {dim}" in lines[0] and bound in lines[0], lines[0]
    with pytest.raises(RuntimeError, match=f"dim {dim}"):
        pteron.load(pte).forward(np.zeros(shape, np.float32))


def test_run_cli_accepts_sizes_within_bounds(exported, tmp_path):
    model, pt2 = exported("encoder-seq")
    pte = compile_program(pt2, tmp_path / "enc.pte", "portable")
    x = np.random.rand(2, 11, 32).astype(np.float32)
    np.savez(tmp_path / "in.npz", input_0=x)
    run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz"))
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "out.npz")["output_0"]
    with torch.no_grad():
        np.testing.assert_allclose(got, model(torch.from_numpy(x)).numpy(), **TOL)


def test_unbounded_dim_is_refused_at_compile_time(tmp_path):
    ep = pteron.export(Encoder(), (torch.randn(2, 16, 32),), dynamic_shapes={"x": {1: Dim("seq")}})
    pt2 = tmp_path / "unbounded.pt2"
    torch.export.save(ep, pt2)
    run = cli("compile", str(pt2), "-o", str(tmp_path / "x.pte"))
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "'x'" in lines[0] and "dimension 1" in lines[0] and "no upper bound" in lines[0], lines[0]


def test_derived_sizes_are_computed_at_run_time(tmp_path):
    """cat doubles the sequence, a slice drops one row, a flatten multiplies, a pad adds s // 3:
    sizes 2*s - 1, b*(2*s - 1)*4 and s + s // 3 are evaluated by the program's prim ops."""

    class Derived(torch.nn.Module):
        def forward(self, x):
            y = torch.cat([x, x], 1)[:, 1:]
            return y.reshape(-1) * 2, torch.nn.functional.pad(x, (0, 0, 0, x.shape[1] // 3))

    dynamic = {"x": {0: Dim("b", min=1, max=8), 1: Dim("s", min=3, max=64)}}
    ep = pteron.export(Derived(), (torch.randn(2, 16, 4),), dynamic_shapes=dynamic)
    pt2 = tmp_path / "derived.pt2"
    torch.export.save(ep, pt2)
    pte = compile_program(pt2, tmp_path / "derived.pte", "portable")
    method = pteron.load(pte).load_method("forward")
    for shape in [(1, 3, 4), (8, 64, 4), (3, 10, 4)]:
        x = torch.randn(*shape)
        want = Derived()(x)
        got = method.execute([x.numpy()])
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape)
            np.testing.assert_array_equal(g, w.numpy())


class PatchNet(torch.nn.Module):
    """A ViT/ConvNeXt-style stem: 8x8 patches, then the patch grid flattened by a view whose
    size is (h // 8) * (w // 8); the image sizes must then be multiples of 8, which torch.export
    expresses as derived dims (h = 8 * _h)."""

    def __init__(self):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, 16, 8, stride=8)
        self.mix = torch.nn.Linear(16, 16)

    def forward(self, x):
        p = self.patch(x)
        tokens = p.view(p.shape[0], 16, -1).transpose(1, 2)
        return self.mix(tokens).mean(1), tokens.shape[1] * torch.ones(1)


def test_derived_dims_read_their_root_from_the_input(tmp_path):
    """h = 8 * _h + 0 and w = 8 * _w + 0 (torch.export's own suggestion for such nets), and a
    derived dim with an offset (2 * _n + 1 on the batch, 5 to 9): the program reads _h = h // 8
    and _n = (n - 1) // 2 from the input; sizes not of that form are one-line errors (the program
    would otherwise run them as the nearest smaller size)."""
    _h, _w, _n = Dim("_h", min=2, max=12), Dim("_w", min=2, max=12), Dim("_n", min=2, max=4)
    dynamic = {"x": {0: 2 * _n + 1, 2: 8 * _h, 3: 8 * _w}}
    ep = pteron.export(PatchNet(), (torch.randn(5, 3, 32, 48),), dynamic_shapes=dynamic)
    pt2 = tmp_path / "patch.pt2"
    torch.export.save(ep, pt2)
    pte = compile_program(pt2, tmp_path / "patch.pte", "portable")
    method = pteron.load(pte).load_method("forward")
    for shape in [(5, 3, 16, 16), (9, 3, 96, 96), (7, 3, 40, 72)]:
        x = torch.randn(*shape)
        got = method.execute([x.numpy()])
        for g, w in zip(got, ep.module()(x)):
            np.testing.assert_allclose(g, w.detach().numpy(), **TOL)
    for shape, dim, size, base, step in [((5, 3, 20, 16), 2, 20, 16, 8),
                                         ((6, 3, 16, 16), 0, 6, 5, 2)]:
        np.savez(tmp_path / "in.npz", input_0=np.zeros(shape, np.float32))
        run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"))
        assert run.returncode == 1, run.stdout + run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, run.stderr
        assert f"input 0: size {size} in dim {dim} is not {base} plus a multiple of {step}" in lines[0]


@pytest.mark.parametrize("backends, reason", [
    ("cpu", "xnnpack: dynamic shape: Debian's XNNPACK (2022) has no runtime reshape; running this "
            "needs XNNPACK's reshape API (xnn_reshape_external_value + xnn_reshape_runtime"),
    # Vulkan resizes the encoder's linears, bmms, softmax and layer norms at execute
    # (tests/backends/vulkan/test_vulkan_dynamic.py) and refuses its dynamic selects.
    ("vulkan", "vulkan: dynamic shape: the Vulkan delegate resizes linear/matmul, elementwise, "
               "softmax, layer norm, mean, view/permute and batch-dynamic conv/pool at execute, "
               "not aten::select.int"),
])
def test_delegates_refuse_dynamic_nodes_with_reason(backends, reason, exported, tmp_path):
    _, pt2 = exported("encoder-seq")
    pte = compile_program(pt2, tmp_path / "enc.pte", BACKENDS[backends])
    run = cli("inspect", str(pte), "--delegation")
    assert run.returncode == 0, run.stderr
    assert reason in run.stdout, run.stdout[-2000:]


def test_positions_and_masks_sized_by_the_sequence(tmp_path):
    """arange(seq) into an embedding, full([seq, seq]) into a causal mask: symbolic ints in
    Scalar and int-list positions, computed at run time."""

    class Positions(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = torch.nn.Embedding(64, 16)
            self.fc = torch.nn.Linear(16, 16)

        def forward(self, x):
            h = self.fc(x + self.pos(torch.arange(x.shape[1])))
            return h, h.mean(1), torch.triu(torch.ones(x.shape[1], x.shape[1]), 1)

    torch.manual_seed(0)
    model = Positions().eval()
    ep = pteron.export(model, (torch.randn(2, 10, 16),), dynamic_shapes={"x": {1: Dim("s", min=2, max=64)}})
    pt2 = tmp_path / "positions.pt2"
    torch.export.save(ep, pt2)
    pte = compile_program(pt2, tmp_path / "positions.pte", "portable")
    method = pteron.load(pte).load_method("forward")
    for seq in (2, 64, 7):
        x = torch.randn(2, seq, 16)
        with torch.no_grad():
            want = model(x)
        got = method.execute([x.numpy()])
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape)
            np.testing.assert_allclose(g, w.numpy(), **TOL)


def test_hugging_face_gpt2_over_a_dynamic_sequence(tmp_path):
    """transformers' GPT-2 (random weights, 2 layers) exported with a Dim on the sequence: its
    positions, causal mask and attention sized at run time, on the CPU path."""
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64)
    gpt2 = transformers.GPT2Model(config).eval()

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gpt2 = gpt2

        def forward(self, ids):
            return self.gpt2(input_ids=ids, use_cache=False).last_hidden_state

    model = Hidden().eval()
    ids = torch.randint(0, 100, (1, 12))
    ep = pteron.export(model, (ids,), dynamic_shapes={"ids": {1: Dim("seq", min=2, max=64)}})
    pt2 = tmp_path / "gpt2.pt2"
    torch.export.save(ep, pt2)
    pte = compile_program(pt2, tmp_path / "gpt2.pte", BACKENDS["cpu"])
    method = pteron.load(pte).load_method("forward")
    for seq in (2, 64, 13):
        ids = torch.randint(0, 100, (1, seq))
        with torch.no_grad():
            want = model(ids).numpy()
        got = method.execute([ids.numpy()])[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, **TOL)


class StreamingLstm(torch.nn.Module):
    """A streaming LSTM (keyword spotting, audio): one step per call with (h, c) kept in
    mutable buffers; the caller decides how many steps to run. (A whole sequence of a
    variable number of steps per call: test_recurrent_steps.py.)"""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.register_buffer("h", torch.zeros(1, 1, 16))
        self.register_buffer("c", torch.zeros(1, 1, 16))

    def forward(self, x):
        y, (h, c) = self.lstm(x, (self.h, self.c))
        self.h.copy_(h)
        self.c.copy_(c)
        return y


PARTITIONERS = {
    "portable": ([], ("portable",)),
    "cpu": ([pteron.XnnpackPartitioner()], ("optimized", "portable")),
    "vulkan": ([pteron.VulkanPartitioner()], ("portable",)),
}


@pytest.mark.parametrize("path", PARTITIONERS)
def test_lstm_runs_any_number_of_steps_through_its_state(path):
    # Tolerance 1e-5 absolute: float32, the same arithmetic in another summation order.
    torch.manual_seed(0)
    model = StreamingLstm().eval()
    ep = torch.export.export(model, (torch.randn(1, 1, 8),))
    partitioners, kernels = PARTITIONERS[path]
    method = pteron.to_edge_transform_and_lower(ep, partitioners, kernels=kernels).load()
    reference = torch.nn.LSTM(8, 16, batch_first=True)
    reference.load_state_dict(model.lstm.state_dict())
    g = torch.Generator().manual_seed(3)
    for steps in (1, 5, 13):
        xs = torch.randn(1, steps, 8, generator=g)
        with torch.no_grad():
            want = reference(xs)[0]
        got = torch.cat([method.forward(xs[:, t:t + 1])[0] for t in range(steps)], dim=1)
        err = float((got - want).abs().max())
        assert err <= 1e-5, f"{steps} steps on {path}: max error {err}"
        method.reset()  # the next sequence starts from zero state


def test_a_symbolic_int_where_a_tensor_goes():
    """counter.add_(x.shape[0]) (how transformers' static cache counts its positions): torch
    passes the SymInt as the Tensor `other`, which pteron computes at run time as a 0-dim
    int64 tensor; the counter (state) and a float tensor scaled by the size both match eager."""

    class Counts(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("seen", torch.zeros(1, dtype=torch.long))

        def forward(self, x):
            self.seen.add_(x.shape[0])
            return x * x.shape[0] + self.seen, self.seen + 0

    ep = torch.export.export(Counts(), (torch.ones(3, 2),), dynamic_shapes={"x": {0: Dim("n", min=1, max=8)}})
    method = pteron.load(pteron.to_edge_transform_and_lower(ep).buffer()).load_method("forward")
    eager, total = Counts(), 0
    for n in (3, 1, 8):
        x = torch.randn(n, 2)
        total += n
        want = eager(x)
        got = method(x)
        torch.testing.assert_close(got[0], want[0], **TOL)
        assert got[1].tolist() == want[1].tolist() == [total]
