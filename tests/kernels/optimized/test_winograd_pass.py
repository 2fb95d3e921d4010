"""compiler/passes/winograd_conv.cpp: with the optimized library selected, 3x3 stride-1
convolutions (plain, + ReLU, and resnet's relu(conv + residual) block endings) with outputs of
at least 8x8 and at least 2^19 transformed weight floats (36 x Cin x Cout, here 128 x 128)
become pteron::conv2d_winograd with pretransformed weights; small-weight, strided and
small-output convolutions stay convolutions, and a portable-only program has none. Programs
match PyTorch within 1e-4 of max|output|.
"""

import pteron
import torch

WINO = "pteron::conv2d_winograd.out"


class Net(torch.nn.Module):
    def __init__(self, reuse=False):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 128, 3, padding=1)  # weights too small: stays
        self.c2 = torch.nn.Conv2d(128, 128, 3, padding=1)  # + relu: Winograd with ReLU
        self.c3 = torch.nn.Conv2d(128, 128, 3, bias=False)  # 10x10 out, + residual: Winograd
        self.c4 = torch.nn.Conv2d(128, 128, 3, stride=2, padding=1)  # strided: stays
        self.c5 = torch.nn.Conv2d(128, 128, 3, padding=1)  # 5x5 out: stays
        self.reuse = reuse

    def forward(self, x):
        h = torch.relu(self.c2(torch.relu(self.c1(x))))
        if self.reuse:  # c2's weights read by two nodes: each gets transformed weights
            h = torch.relu(self.c2(h))
        h = torch.relu(self.c3(h) + h[:, :, 1:-1, 1:-1])  # a block ending: conv + residual, ReLU
        return self.c5(self.c4(h))


def lower(model, x, kernels):
    return pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)


def check_matches(lowered, model, x):
    with torch.no_grad():
        ref = model(x)
    out = lowered.load().forward(x)[0]
    err = (out - ref).abs().max().item()
    assert err <= 1e-4 * ref.abs().max().item(), err


def test_rule_picks_the_convolutions():
    torch.manual_seed(0)
    model, x = Net().eval(), torch.randn(2, 3, 12, 12)
    lowered = lower(model, x, ("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(WINO) == 2
    assert ops.count("aten::convolution.out") + ops.count("pteron::convolution_relu.out") == 3
    assert "pteron::convolution_add_relu.out" not in ops and "aten::add.out" not in ops
    check_matches(lowered, model, x)


def test_shared_weights_and_portable_only():
    torch.manual_seed(1)
    model, x = Net(reuse=True).eval(), torch.randn(1, 3, 12, 12)
    lowered = lower(model, x, ("optimized", "portable"))
    assert lowered.load().load_method("forward").instruction_names().count(WINO) == 3
    check_matches(lowered, model, x)
    portable = lower(model, x, ("portable",))
    assert WINO not in portable.load().load_method("forward").instruction_names()
    check_matches(portable, model, x)
