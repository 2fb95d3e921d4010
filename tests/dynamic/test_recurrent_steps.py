"""Recurrent layers over a variable number of steps: nn.LSTM / nn.GRU / nn.RNN exported with a
Dim on the time axis stay one node each (pteron.export keeps aten::lstm.input whole instead of
unrolling it), compile to pteron::lstm.out & co., and one loaded method runs them at the
minimum, the maximum and step counts in between, matching PyTorch, with the portable kernels
and the optimized library's."""

import subprocess

import numpy as np
import pytest
import torch
from torch.export import Dim

import pteron
import pteron.recurrent
from pteron_cli import pteron_cli

TOL = dict(rtol=1e-4, atol=1e-5)  # float32, the same arithmetic in other summation orders

LIBRARIES = {"portable": "portable", "optimized": "optimized,portable"}
STEPS = (1, 7, 32, 3)  # min, between, max, back down: one method, resized each call


class Recurrent(torch.nn.Module):
    def __init__(self, cell, out, **options):
        super().__init__()
        self.rnn = cell(8, 16, **options)
        self.fc = torch.nn.Linear(out, 4)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


# name: (layer, width of its output, options)
LAYERS = {
    "lstm": (torch.nn.LSTM, 16, dict(batch_first=True)),
    "lstm-projection-2-layers": (torch.nn.LSTM, 8, dict(proj_size=8, num_layers=2, batch_first=True)),
    "lstm-bidirectional-2-layers": (torch.nn.LSTM, 32, dict(bidirectional=True, num_layers=2)),
    "gru-2-layers": (torch.nn.GRU, 16, dict(num_layers=2, batch_first=True)),
    "rnn-tanh-bidirectional": (torch.nn.RNN, 32, dict(bidirectional=True)),
    "rnn-relu-no-bias": (torch.nn.RNN, 16, dict(nonlinearity="relu", bias=False, batch_first=True)),
}


def export_layer(name, folder):
    cell, width, options = LAYERS[name]
    torch.manual_seed(0)
    model = Recurrent(cell, width, **options).eval()
    time_axis = 1 if options.get("batch_first") else 0
    shape = [2, 2, 8]
    shape[time_axis] = 10
    ep = pteron.export(model, (torch.randn(*shape),),
                       dynamic_shapes={"x": {time_axis: Dim("steps", min=1, max=32)}})
    path = folder / f"{name}.pt2"
    torch.export.save(ep, path)
    return model, ep, path, shape, time_axis


def compile_program(pt2, out, backends):
    run = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(out), "--backends", backends],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_one_method_runs_every_step_count(name, tmp_path):
    model, ep, pt2, shape, time_axis = export_layer(name, tmp_path)
    recurrent = set(pteron.recurrent.recurrent_ops())
    kept = [n.target for n in ep.graph.nodes if n.target in recurrent]
    assert len(kept) == 1, f"the layer was not kept whole: {kept}"
    for library, backends in LIBRARIES.items():
        pte = compile_program(pt2, tmp_path / f"{name}-{library}.pte", backends)
        method = pteron.load(pte).load_method("forward")
        g = torch.Generator().manual_seed(1)
        for steps in STEPS:
            shape[time_axis] = steps
            x = torch.randn(*shape, generator=g)
            with torch.no_grad():
                want = model(x).numpy()
            got = method.execute([x.numpy()])[0]
            assert got.shape == want.shape, (library, steps, got.shape, want.shape)
            np.testing.assert_allclose(got, want, **TOL, err_msg=f"{name} {library} {steps} steps")


class WithState(torch.nn.Module):
    """The final (h, c) as outputs too, from a given initial state."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)

    def forward(self, x, h, c):
        y, (hy, cy) = self.lstm(x, (h, c))
        return y, hy, cy


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_final_states_and_batch_dynamic_with_steps(library, tmp_path):
    torch.manual_seed(0)
    model = WithState().eval()
    batch, steps = Dim("batch", min=1, max=4), Dim("steps", min=1, max=20)
    example = (torch.randn(2, 5, 8), torch.randn(1, 2, 16), torch.randn(1, 2, 16))
    ep = pteron.export(model, example, dynamic_shapes={"x": {0: batch, 1: steps}, "h": {1: batch},
                                                       "c": {1: batch}})
    torch.export.save(ep, tmp_path / "state.pt2")
    pte = compile_program(tmp_path / "state.pt2", tmp_path / "state.pte", LIBRARIES[library])
    method = pteron.load(pte).load_method("forward")
    g = torch.Generator().manual_seed(2)
    for b, t in ((1, 1), (4, 20), (3, 9)):
        inputs = (torch.randn(b, t, 8, generator=g), torch.randn(1, b, 16, generator=g),
                  torch.randn(1, b, 16, generator=g))
        with torch.no_grad():
            want = model(*inputs)
        got = method.execute([i.numpy() for i in inputs])
        for w, o in zip(want, got):
            np.testing.assert_allclose(o, w.numpy(), **TOL, err_msg=f"batch {b}, {t} steps")


def test_static_export_still_unrolls_and_eager_is_untouched():
    """Without dynamic shapes the layer decomposes as before (every kernel, every backend can
    take the unrolled graph); the context restores torch's own kernels for eager runs."""
    torch.manual_seed(0)
    model = Recurrent(torch.nn.LSTM, 16, batch_first=True).eval()
    ep = pteron.export(model, (torch.randn(1, 4, 8),))
    targets = {n.target for n in ep.graph.nodes if n.op == "call_function"}
    assert torch.ops.aten.lstm.input not in targets
    x = torch.randn(1, 4, 8)
    with torch.no_grad():
        before = model.rnn(x)[0]
        with pteron.keep_recurrent_layers():
            pteron.export(model, (x,), dynamic_shapes={"x": {1: Dim("steps", max=8)}})
        after = model.rnn(x)[0]
    torch.testing.assert_close(after, before, rtol=0, atol=0)
