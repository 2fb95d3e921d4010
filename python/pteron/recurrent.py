"""Recurrent layers (nn.LSTM, nn.GRU, nn.RNN) kept whole through torch.export, so their number
of steps can be a Dim.

torch lowers aten::lstm / gru / rnn_tanh / rnn_relu by unrolling them over the input's time
steps while it traces, which fixes the step count: exporting with a Dim on the time axis fails
("specialized it to be a constant"). Inside `keep_recurrent_layers()` the tracer computes these
ops' outputs from their shapes alone (the sizes and strides torch's CPU kernels give), so the
export keeps one aten::lstm.input node whose sizes stay symbolic, and `decompose` leaves it
whole; pteron's kernels (pteron::lstm.out, ...) then loop over the steps of each call.

Only the tracer's view of the ops changes, and only inside the context: eager runs (the model
itself, or the ExportedProgram's module() after the context) use torch's kernels.
"""

from __future__ import annotations

import contextlib


def _ops():
    import torch

    aten = torch.ops.aten
    return {aten.lstm.input: _lstm_shapes, aten.gru.input: _rnn_shapes,
            aten.rnn_tanh.input: _rnn_shapes, aten.rnn_relu.input: _rnn_shapes}


def _output(input, hidden, bidirectional, batch_first):
    # torch's CPU kernels compute time-major [T, B, D*H] and return it transposed for
    # batch_first, so the traced strides match an eager run's.
    directions = 2 if bidirectional else 1
    t, b = (1, 0) if batch_first else (0, 1)
    out = input.new_empty((input.size(t), input.size(b), directions * hidden))
    return out.transpose(0, 1) if batch_first else out


def _lstm_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                 batch_first):
    h, c = hx
    out = _output(input, h.size(-1), bidirectional, batch_first)
    return out, h.new_empty(h.shape), c.new_empty(c.shape)


def _rnn_shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first):
    return _output(input, hx.size(-1), bidirectional, batch_first), hx.new_empty(hx.shape)


def recurrent_ops():
    """The OpOverloads kept whole."""
    return tuple(_ops())


@contextlib.contextmanager
def keep_recurrent_layers():
    """Within: torch.export keeps nn.LSTM / nn.GRU / nn.RNN as one node each, their step count
    (and batch) free to be a Dim; pteron's `decompose` keeps them too.

        with pteron.keep_recurrent_layers():
            ep = torch.export.export(model, (x,), dynamic_shapes={"x": {1: Dim("t", max=64)}})
        program = pteron.to_edge_transform_and_lower(ep)
    """
    import torch

    table = torch._decomp.decomposition_table
    saved = []
    for op, shapes in _ops().items():
        saved.append((op, dict(op.py_kernels), table.get(op)))
        # The tracer's Python kernels for these ops (torch registers its unrolling decomposition
        # for CompositeImplicitAutograd, Autograd and Meta) and the decomposition table entry
        # that functionalization uses.
        for key in list(op.py_kernels):
            op.py_kernels[key] = shapes
        table[op] = shapes
        op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, kernels, decomposition in saved:
            op.py_kernels.clear()
            op.py_kernels.update(kernels)
            if decomposition is None:
                table.pop(op, None)
            else:
                table[op] = decomposition
            op._dispatch_cache.clear()


def has_dynamic_recurrent_layer(ep) -> bool:
    """Whether `ep` holds a recurrent op whose input has a symbolic size (a Dim): unrolling it
    would fix that size, so it must stay whole."""
    import torch

    ops = set(_ops())
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target in ops:
            val = node.args[0].meta.get("val")
            if val is not None and any(isinstance(s, torch.SymInt) for s in val.shape):
                return True
    return False
