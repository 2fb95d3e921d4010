"""The XNNPACK cost rule against the optimized kernel library (backends/xnnpack/README.md, "Cost
rule"): with "optimized" among the compile's kernels, fp32 linear layers of at least
kMinRowsForOptimizedLinear (16) rows and last-dim softmax go to the optimized kernels with a
reason, and regions the optimized kernels cover entirely are given back; without it the same
nodes stay in XNNPACK (its own linear path), and int8 regions are unaffected.

Tolerance (fp32 vs torch eager): max abs error within 1e-5 * (1 + max |reference|) for single
layers, 1e-4 * (1 + max |reference|) for the 2-layer OPT (as the zoo models' tests).
"""

import pteron
import torch

OPTIMIZED = ("optimized", "portable")
PORTABLE = ("portable",)
REASON = "xnnpack: optimized kernel faster: SGEMM"


def _lower(model, inputs, kernels, **kwargs):
    ep = pteron.export(model.eval(), inputs)
    return pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()],
                                              kernels=kernels, **kwargs)


def _matches(program, model, inputs, tol=1e-5):
    with torch.no_grad():
        expected = model(*inputs)
    actual = program.load().forward(*inputs)[0]
    err = float((actual - expected).abs().max())
    assert err <= tol * (1 + float(expected.abs().max())), err


class LinearRelu(torch.nn.Module):
    def __init__(self, k=48, n=40):
        super().__init__()
        self.fc = torch.nn.Linear(k, n)

    def forward(self, x):
        return torch.nn.functional.relu(self.fc(x)) * 2.0


def test_linear_goes_to_optimized_with_the_reason():
    torch.manual_seed(0)
    model, inputs = LinearRelu(), (torch.randn(32, 48),)
    program = _lower(model, inputs, OPTIMIZED)
    report = program.report
    assert report["delegated_regions"] == []
    assert any(REASON + " 32x48x40" in r for r in report["refusals"]), report["refusals"]
    _matches(program, model, inputs)
    # The delegation report says where the linear runs and why XNNPACK left it there.
    info = pteron.get_delegation_info(program.buffer())
    assert info.boundaries["crossings"] == 0
    # (the optimized library fuses the linear with its relu)
    linear = [n for n in info.library_nodes if n["op"] == "pteron::linear_relu.default"]
    assert len(linear) == 1 and linear[0]["runs_on"] == "optimized", info.library_nodes
    assert any(REASON in why for why in linear[0]["reasons"])
    assert "on other kernel libraries, not delegated: " in info.summary()
    assert "pteron::linear_relu.default on optimized" in info.summary()


def test_without_optimized_the_linear_stays_in_xnnpack():
    # The XNNPACK delegate's own linear path: same model, portable kernels only.
    torch.manual_seed(0)
    model, inputs = LinearRelu(), (torch.randn(32, 48),)
    program = _lower(model, inputs, PORTABLE)
    assert [r["backend"] for r in program.report["delegated_regions"]] == ["xnnpack"]
    assert not any("optimized kernel faster" in r for r in program.report["refusals"])
    _matches(program, model, inputs)


def test_few_row_linear_region_is_given_back_when_optimized_covers_it():
    torch.manual_seed(0)
    model, inputs = LinearRelu(), (torch.randn(4, 48),)
    program = _lower(model, inputs, OPTIMIZED)
    assert program.report["delegated_regions"] == []
    assert any("optimized kernels run as fast" in r and "not worth its boundary" in r
               for r in program.report["refusals"]), program.report["refusals"]
    _matches(program, model, inputs)
    # Without the optimized library, XNNPACK keeps it.
    assert len(_lower(model, inputs, PORTABLE).report["delegated_regions"]) == 1


def test_conv_net_keeps_its_classifier_in_the_region():
    # Convolutions stay on XNNPACK, and a one-row classifier head stays in their region (no
    # extra boundary), optimized library or not.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(8, 10))
    inputs = (torch.randn(1, 3, 12, 12),)
    for kernels in (OPTIMIZED, PORTABLE):
        program = _lower(model, inputs, kernels)
        regions = program.report["delegated_regions"]
        assert [r["backend"] for r in regions] == ["xnnpack"], program.report["refusals"]
        assert not any("aten::linear" in r for r in program.report["refusals"])
        _matches(program, model, inputs)


def test_int8_linear_region_is_unaffected():
    torch.manual_seed(0)
    model, inputs = torch.nn.Sequential(torch.nn.Linear(48, 40), torch.nn.ReLU()), (torch.randn(32, 48),)
    calibration = [(torch.randn(32, 48),) for _ in range(4)]
    for kernels in (OPTIMIZED, PORTABLE):
        program = _lower(model, inputs, kernels, quantize="xnnpack", calibration=calibration,
                         progress=False)
        assert len(program.report["delegated_regions"]) == 1, program.report["refusals"]
        assert not any("optimized kernel faster" in r for r in program.report["refusals"])


def test_last_dim_softmax_goes_to_optimized_channel_softmax_stays():
    torch.manual_seed(0)
    # Last-dim softmax (attention's): the optimized kernel, with the reason.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 1), torch.nn.Flatten(), torch.nn.Linear(8 * 25, 10),
                                torch.nn.Softmax(-1))
    inputs = (torch.randn(1, 3, 5, 5),)
    program = _lower(model, inputs, OPTIMIZED)
    assert any("aten::_softmax" in r and "optimized kernel faster: softmax over the last dim" in r
               for r in program.report["refusals"]), program.report["refusals"]
    assert len(program.report["delegated_regions"]) == 1  # the conv and the linear
    _matches(program, model, inputs)
    assert _lower(model, inputs, PORTABLE).report["refusals"] == []
    # Softmax over a conv's channels (dim 1, NHWC inside XNNPACK) stays in the conv's region.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 1), torch.nn.Softmax(1))
    program = _lower(model, inputs, OPTIMIZED)
    assert program.report["refusals"] == [] and len(program.report["delegated_regions"]) == 1
    _matches(program, model, inputs)


def _opt_2_layers(sequence):
    """transformers' OPTForCausalLM with a 2-layer config (d=64, 4 heads, vocab 1000), last-token
    logits, and its inputs."""
    import transformers

    from models.opt import LastTokenLogits

    torch.manual_seed(0)
    config = transformers.OPTConfig(num_hidden_layers=2, hidden_size=64, ffn_dim=256,
                                    num_attention_heads=4, word_embed_proj_dim=64,
                                    vocab_size=1000, max_position_embeddings=64,
                                    attn_implementation="eager")
    inputs = (torch.randint(0, 1000, (1, sequence)), torch.ones(1, sequence, dtype=torch.long))
    return LastTokenLogits(transformers.OPTForCausalLM(config)).eval(), inputs


def test_opt_like_transformer_has_few_boundaries_and_matches_pytorch():
    model, inputs = _opt_2_layers(sequence=24)
    program = _lower(model, inputs, OPTIMIZED)
    info = pteron.get_delegation_info(program.buffer())
    assert info.boundaries["crossings"] / 2 <= 3, info.regions
    assert any(REASON in r for r in program.report["refusals"])
    _matches(program, model, inputs, tol=1e-4)
