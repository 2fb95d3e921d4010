"""Zoo conv nets compiled for the optimized kernels (`kernels=("optimized", "portable")`, what
`pteron compile --backends optimized,portable` makes) match PyTorch, with 1 and 2 threads: the
convolutions run the optimized SGEMM path, conv + ReLU pairs are fused into
pteron::convolution_relu, conv + ReLU6 into pteron::convolution_clamp and resnet's block endings
into pteron::convolution_add_relu, depthwise convolutions take the optimized depthwise path.

Tolerance: max abs error within 1e-4 * (1 + max |reference|), as for the portable programs
(tests/compiler/test_zoo_programs.py).
"""

import pteron
import pteron_native
import pytest
import torch
from pteron import zoo

# model -> (convolution + ReLU, convolution + residual add + ReLU, convolution + ReLU6) the
# fusion pass makes and winograd_conv leaves. resnet-18: the stem and the first conv of each of
# its 8 blocks, and each block's ending, less the six 3x3 stride-1 convolutions of layer2 and
# layer3 that winograd_conv takes (two + ReLU, four block endings); mobilenet-v2: each of its 35
# ReLU6 (the stem, every expansion and depthwise convolution, the last 1x1); it adds its
# residuals without an activation.
FUSED = {"resnet-18": (7, 4, 0), "resnet-8": (4, 3, 0), "mobilenet-v2": (0, 0, 35)}
# model -> pteron::conv2d_winograd nodes (layer1's weights are small enough to transform per
# call, layer4's 7x7 outputs stay on the SGEMM path).
WINOGRAD = {"resnet-18": 6, "resnet-8": 0, "mobilenet-v2": 0}


@pytest.mark.parametrize("name", sorted(FUSED))
def test_optimized_program_matches_pytorch(name, zoo_pt2):
    model, inputs = zoo.get(name)
    lowered = pteron.to_edge_transform_and_lower(str(zoo_pt2(name)),
                                                 kernels=("optimized", "portable"))
    program = lowered.load()
    ops = program.load_method("forward").instruction_names()
    fused = (ops.count("pteron::convolution_relu.out"), ops.count("pteron::convolution_add_relu.out"),
             ops.count("pteron::convolution_clamp.out"))
    assert fused == FUSED[name], ops
    assert ops.count("pteron::conv2d_winograd.out") == WINOGRAD[name], ops
    with torch.no_grad():
        expected = model(*inputs)
    try:
        for threads in (1, 2):
            pteron_native.set_num_threads(threads)
            actual = program.forward(*inputs)[0]
            tol = 1e-4 * (1 + float(expected.abs().max()))
            err = float((actual - expected).abs().max())
            assert err <= tol, f"{name} ({threads} threads): max error {err} > {tol}"
    finally:
        pteron_native.set_num_threads(0)
