"""_embedding_bag.out and _embedding_bag_forward_only.out (torch.nn.functional.embedding_bag)
against torch: sum (with and without per_sample_weights), mean and max, include_last_offset,
padding_idx, empty bags, int32 and int64 indices/offsets, every dtype torch takes (float32/64
exactly up to summation order, float16/bfloat16 within one rounding of the float sum); the
auxiliary outputs where eager defines them; malformed arguments refused in one line."""

import pytest
import torch
from kernel_harness import run_kernel

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
OPS = ["aten::_embedding_bag.out", "aten::_embedding_bag_forward_only.out"]


def tol(dtype):
    return {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]


def run(op, weight, indices, offsets, mode, psw=None, last=False, padding=-1):
    ref = torch.ops.aten._embedding_bag_forward_only(weight, indices, offsets, False, mode, False,
                                                     psw, last, padding)
    outs = [torch.empty_like(r) for r in ref]
    run_kernel(op, [weight, indices, offsets, False, mode, False, psw, last, padding] + outs)
    return outs, ref


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag(op, dtype, mode):
    g = torch.Generator().manual_seed(mode)
    weight = torch.randn(12, 5, generator=g).to(dtype)
    for index_dtype in (torch.int64, torch.int32):
        indices = torch.randint(0, 12, (14,), generator=g).to(index_dtype)
        # an empty bag (4, 4) and one bag holding only the padding row
        offsets = torch.tensor([0, 3, 4, 4, 9], dtype=index_dtype)
        for last in (False, True):
            if last:  # the extra last offset is the end of the indices (torch's contract)
                offsets = torch.cat([offsets, torch.tensor([14], dtype=index_dtype)])
            for padding in (-1, int(indices[3])):
                psw = torch.rand(14, generator=g).to(dtype) if mode == 0 and padding < 0 else None
                outs, ref = run(op, weight, indices, offsets, mode, psw, last, padding)
                torch.testing.assert_close(outs[0], ref[0], rtol=tol(dtype), atol=tol(dtype))
                if mode == 2:  # the rows max picked (empty bags aside)
                    nonempty = ref[2][: outs[3].shape[0]] > 0
                    assert torch.equal(outs[3][nonempty], ref[3][nonempty])


def test_malformed_arguments_are_refused_in_one_line():
    w = torch.randn(6, 3)
    i = torch.tensor([0, 5, 2])
    o = torch.tensor([0, 2])

    def call(weight=w, indices=i, offsets=o, mode=0, psw=None, out0=None):
        outs = [torch.empty(2, 3) if out0 is None else out0, torch.empty(0, dtype=torch.int64),
                torch.empty(2, dtype=torch.int64), torch.empty(2, dtype=torch.int64)]
        run_kernel(OPS[0], [weight, indices, offsets, False, mode, False, psw, False, -1] + outs)

    with pytest.raises(RuntimeError, match="index 6 is out of bounds"):
        call(indices=torch.tensor([0, 6, 1]))
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
        call(offsets=torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"offsets\[1\] = 4 is not in"):
        call(offsets=torch.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="mode 3 is not 0"):
        call(mode=3)
    with pytest.raises(RuntimeError, match="per_sample_weights is only supported for mode sum"):
        call(mode=1, psw=torch.ones(3))
    with pytest.raises(RuntimeError, match=r"include_last_offset: offsets\[-1\] = 2 must be the number"):
        outs = [torch.empty(1, 3), torch.empty(0, dtype=torch.int64), torch.empty(2, dtype=torch.int64),
                torch.empty(1, dtype=torch.int64)]
        run_kernel(OPS[0], [w, i, o, False, 0, False, None, True, -1] + outs)
    with pytest.raises(RuntimeError, match="indices and offsets must be 1-d"):
        call(indices=i.view(3, 1))
    with pytest.raises(RuntimeError, match="indices must be int64 or int32"):
        call(indices=i.float())
    with pytest.raises(RuntimeError, match="out shape|out0"):
        call(out0=torch.empty(3, 3))
