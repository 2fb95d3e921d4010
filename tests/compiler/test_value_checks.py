"""Run-time checks on tensor values (torch._check_tensor_all, transformers'
torch_compilable_check, `assert lengths.max().item() <= n`): export writes them as
_local_scalar_dense, symbolic arithmetic and _assert_scalar. pteron checks no tensor values at
run time, so such a chain is left out (as ExecuTorch drops the asserts) and the compile report
notes where each check was; a scalar that also sets a size stays, refused as unbounded."""

import warnings

import pytest
import torch

import pteron


class Checked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shapes", torch.tensor([[4, 4], [2, 2]]))

    def forward(self, x, lengths):
        # what transformers' deformable-attention models check, and XLM / FlauBERT's assert
        # (torch._check here: pytest rewrites a test module's asserts)
        torch._check_tensor_all((self.shapes[:, 0] * self.shapes[:, 1]).sum() == x.shape[1])
        torch._check(lengths.max().item() <= x.shape[1])
        return x * 2


def test_value_checks_are_left_out_with_a_note_naming_them():
    x, lengths = torch.randn(1, 20), torch.tensor([3, 5])
    ep = pteron.export(Checked(), (x, lengths))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = pteron.to_edge_transform_and_lower(ep, progress=False)
    notes = [str(w.message) for w in caught if "tensor values" in str(w.message)]
    assert len(notes) == 1 and notes[0].count("test_value_checks.py:") == 2, notes
    assert "not enforced" in notes[0]
    loaded = program.load()
    assert torch.equal(torch.as_tensor(loaded.forward(x, lengths)[0]), x * 2)
    # not enforced: a length past the check runs as any other input
    assert torch.equal(torch.as_tensor(loaded.forward(x, torch.tensor([3, 50]))[0]), x * 2)


def test_a_scalar_that_sets_a_size_is_still_refused():
    class Sliced(torch.nn.Module):
        def forward(self, x, n):
            return x[: n.max().item()]

    ep = pteron.export(Sliced(), (torch.randn(8), torch.tensor([3])))
    with pytest.raises(pteron.CompileError, match=r"Tensor.item\(\)\) has no upper bound; torch._check\(u0 <= N\)"):
        pteron.to_edge_transform_and_lower(ep, progress=False)
