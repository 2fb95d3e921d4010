"""The select_rows_early pass: a one-row selection moves up through row-wise ops (views keeping
the last dim, layer norm over the last dim, linear, unary activations, elementwise ops whose
other operand is the same for every row), so a causal LM's last layer runs on the last token
only; values that are also used in full, ops that mix rows and selections that are not one row
stop it. Outputs match torch either way (float32, atol/rtol 1e-5; the row products only change
the summation order)."""

import pteron
import torch
from torch import nn


def _passes(lowered):
    counts = {}
    for line in lowered.report["passes"]:  # "select_rows_early: 6 node(s), 0.1 ms"
        name, rest = line.split(":", 1)
        counts[name] = int(rest.split()[0])
    return counts


def _lower_and_check(model, inputs, kernels=None):
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, inputs), kernels=kernels)
    outs = lowered.load().forward(*inputs)
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    return lowered


class Block(nn.Module):
    """linear -> + row-invariant bias -> layer norm -> gelu -> linear -> * 2, then `pick`."""

    def __init__(self, pick, norm_shape=(32,)):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)
        self.shift = nn.Parameter(torch.randn(1, 1, 32))
        self.norm = nn.LayerNorm(norm_shape)
        self.pick = pick

    def forward(self, x):
        h = nn.functional.gelu(self.norm(self.fc1(x) + self.shift))
        return self.pick(self.fc2(h) * 2.0, h)


def _x(batch=1, seq=7, seed=0):
    return torch.randn(batch, seq, 16, generator=torch.Generator().manual_seed(seed))


def test_last_row_moves_up_the_whole_chain():
    # mul, fc2, gelu, layer norm, add, fc1: every full-size node has a one-row twin.
    lowered = _lower_and_check(Block(lambda y, h: y[:, 3, :]).eval(), (_x(),))
    assert _passes(lowered)["select_rows_early"] == 6
    assert "f32[7, 32]" not in pteron.get_delegation_info(lowered).graph()


def test_a_value_also_used_in_full_stops_the_move():
    # h is returned in full: only the ops after it (fc2, mul) run on one row.
    lowered = _lower_and_check(Block(lambda y, h: (y[:, -1], h.sum(1))).eval(), (_x(seed=1),))
    assert _passes(lowered)["select_rows_early"] == 2


def test_ops_mixing_rows_and_other_selections_are_left_alone():
    # Layer norm over the last two dims mixes rows: only gelu, fc2 and mul move above it.
    model = Block(lambda y, h: y[:, -1], norm_shape=(7, 32)).eval()
    assert _passes(_lower_and_check(model, (_x(seed=2),)))["select_rows_early"] == 3
    # Several batches: the selection keeps one row per batch, not one row.
    model = Block(lambda y, h: y[:, -1]).eval()
    assert _passes(_lower_and_check(model, (_x(batch=3, seed=3),)))["select_rows_early"] == 0
    # Selecting a feature is not a row selection.
    model = Block(lambda y, h: y[:, :, 5]).eval()
    assert _passes(_lower_and_check(model, (_x(seed=4),)))["select_rows_early"] == 0


class RowVarying(nn.Module):
    """An elementwise add whose other operand differs per row ([T, 1]): not row-invariant."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.per_row = nn.Parameter(torch.randn(7, 1))

    def forward(self, x):
        return torch.relu(self.fc(x) + self.per_row)[:, -1]


def test_an_operand_varying_per_row_stops_the_move():
    # Only relu moves; the add (and fc before it) run in full and one row of the sum is taken.
    lowered = _lower_and_check(RowVarying().eval(), (_x(seed=5),))
    assert _passes(lowered)["select_rows_early"] == 1


def test_two_layer_opt_last_layer_runs_on_one_token():
    from transformers import OPTConfig, OPTForCausalLM

    from models.opt import LastTokenLogits

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=97, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                       num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=32,
                       attn_implementation="eager")
    model = LastTokenLogits(OPTForCausalLM(config)).eval()
    ids = torch.randint(0, 97, (1, 9))
    mask = torch.ones(1, 9, dtype=torch.long)
    for kernels in (None, ("optimized", "portable")):
        lowered = _lower_and_check(model, (ids, mask), kernels=kernels)
        # Last layer: out-proj, residual add, final layer norm, fc1, relu, fc2, residual add;
        # then the decoder's final layer norm.
        assert _passes(lowered)["select_rows_early"] == 8
        graph = pteron.get_delegation_info(lowered).graph()
        fc1 = [line for line in graph.splitlines() if "fc1_weight" in line]
        assert len(fc1) == 2 and "f32[9, 64]" in fc1[0] and "f32[1, 64]" in fc1[1], fc1
