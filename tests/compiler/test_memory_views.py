"""Memory views (compiler/memory/memory_views.h): views that are their input's bytes get no
instruction; their outputs are placed in the input's memory. Each program must still match
PyTorch, on the portable and the optimized libraries and next to an XNNPACK region (float32
within 1e-5: the kernels around the views differ from ATen's), and the cases that must keep a
copy keep it.
"""

import pteron
import pytest
import torch

VIEW_KERNELS = ("aten::view_copy.out", "aten::squeeze_copy.dims_out", "aten::squeeze_copy.dim_out",
                "aten::unsqueeze_copy.out", "aten::permute_copy.out", "aten::slice_copy.Tensor_out",
                "aten::select_copy.int_out")


def compile_ops(model, args, kernels=("portable",), partitioners=(), dynamic_shapes=None):
    ep = pteron.export(model, args, dynamic_shapes=dynamic_shapes)
    lowered = pteron.to_edge_transform_and_lower(ep, list(partitioners), kernels=kernels)
    program = lowered.load()
    return program, program.load_method("forward").instruction_names()


def check(model, args, **kw):
    program, ops = compile_ops(model, args, **kw)
    outs = program.forward(*args)
    with torch.no_grad():
        ref = model(*args)
    for got, want in zip(outs, ref if isinstance(ref, tuple) else (ref,)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    return ops


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


class Views(torch.nn.Module):
    """timm-style qkv split: view, permute, unbind (leading-dim selects), size-1 permutes,
    squeeze/unsqueeze/flatten, and a reshape as the graph output."""

    def forward(self, x):
        y = torch.relu(x)  # [2, 8, 12]
        qkv = y.reshape(2, 8, 3, 4).permute(2, 0, 1, 3)  # a real transpose (one copy)
        q, k, v = qkv.unbind(0)  # selects at offsets 0, 64 and 128 elements
        s = (q * 2 + k) - v
        t = s.unsqueeze(0).permute(1, 0, 2, 3).squeeze(1)  # size-1 dims only
        return torch.tanh(t).flatten(1).reshape(2, 2, 16)


@pytest.mark.parametrize("kernels", [("portable",), ("optimized", "portable")])
def test_views_get_no_instruction(kernels):
    ops = check(Views().eval(), (rand(2, 8, 12, seed=1),), kernels=kernels)
    assert ops.count("aten::permute_copy.out") == 1  # the one real transpose
    assert not any(op in VIEW_KERNELS and op != "aten::permute_copy.out" for op in ops), ops


class OutputViews(torch.nn.Module):
    def forward(self, x):
        y = x * 3
        # a view of an input, two views of one intermediate, the intermediate itself
        return x.view(-1), y.view(2, -1), y.reshape(-1), y


def test_outputs_keep_distinct_memory():
    ops = check(OutputViews().eval(), (rand(4, 6, seed=2),))
    # x.view: of an input; y's views: y is an output itself, so both are copies
    assert ops.count("aten::view_copy.out") == 3


class OutputOfIntermediate(torch.nn.Module):
    def forward(self, x):
        return (x + 1).view(2, 12), (x * 2).view(-1)


def test_output_view_of_an_intermediate_is_free():
    ops = check(OutputOfIntermediate().eval(), (rand(4, 6, seed=3),))
    assert "aten::view_copy.out" not in ops


class Slices(torch.nn.Module):
    def forward(self, x):
        a = x[1:3]  # leading dim: offset 1 row of 16 floats (64 bytes), aliased
        b = x[:, 1:]  # not a leading-dim run: copied
        c = x[1:2, 3:5]  # dim 1 with dim 0 of size 1 after the first slice: chained, 12 bytes in
        return a + 1, b * 2, c - 1


def test_slices_alias_only_contiguous_aligned_runs():
    ops = check(Slices().eval(), (rand(4, 16, seed=4),))
    assert ops.count("aten::slice_copy.Tensor_out") >= 2  # b, and c's unaligned second slice


class InputView(torch.nn.Module):
    def forward(self, x, y):
        return x.view(3, 8) @ y.view(8, 3)


def test_views_of_inputs():
    ops = check(InputView().eval(), (rand(2, 12, seed=5), rand(24, seed=6)))
    assert "aten::view_copy.out" not in ops


class DynamicViews(torch.nn.Module):
    """Reshapes of a dynamic tensor: a view with -1, an unsqueeze, a size-1 permute, a squeeze."""

    def forward(self, x):
        y = torch.relu(x.view(-1, 2, 3)).unsqueeze(0)  # [1, 2s, 2, 3]
        z = y.permute(1, 0, 2, 3).squeeze(1)           # size-1 dim moved: the same bytes
        return z.reshape(-1, 6) * 2 + 1


def test_dynamic_views_are_et_views_sharing_their_input():
    # A dynamic view's sizes are known only at run time: it keeps one instruction, ExecuTorch's
    # executorch_prim::et_view (no copy: out is self's bytes with the sizes of this call).
    seq = torch.export.Dim("seq", min=2, max=16)
    model = DynamicViews().eval()
    ep = pteron.export(model, (rand(4, 6, seed=7),), dynamic_shapes={"x": {0: seq}})
    for kernels in (("portable",), ("optimized", "portable")):
        lowered = pteron.to_edge_transform_and_lower(ep, kernels=kernels)
        method = lowered.load().load_method("forward")
        ops = method.instruction_names()
        assert not set(ops) & set(VIEW_KERNELS), ops
        assert ops.count("executorch_prim::et_view.default") == 5, ops
        # Planned as the static program at the upper bound: every view lives in its input.
        static = pteron.to_edge_transform_and_lower(pteron.export(model, (rand(16, 6),)),
                                                    kernels=kernels)
        static_meta = static.load().load_method("forward").meta
        assert method.meta["planned_buffer_sizes"] == static_meta["planned_buffer_sizes"]
        for n in (2, 9, 16, 3):  # one loaded method, min / between / max / again
            x = rand(n, 6, seed=n)
            got = method.execute([x])[0]
            torch.testing.assert_close(got, model(x), atol=1e-6, rtol=1e-6)


def test_dynamic_view_of_an_input_returned_keeps_its_copy():
    # An output may not share a graph input's memory: the view stays a copy (view_copy).
    seq = torch.export.Dim("seq", min=2, max=16)

    class Flat(torch.nn.Module):
        def forward(self, x):
            return x.view(-1)

    ops = check(Flat(), (rand(4, 6, seed=3),), dynamic_shapes={"x": {0: seq}})
    assert "aten::view_copy.out" in ops, ops


class ConvHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        return torch.log_softmax(self.fc(self.conv(x).flatten(1)), -1)


def test_views_next_to_a_delegate():
    ops = check(ConvHead().eval(), (rand(2, 3, 6, 6, seed=8),),
                partitioners=[pteron.XnnpackPartitioner()], kernels=("portable",))
    assert ops  # runs; the flatten between delegate and kernels is exact either way
