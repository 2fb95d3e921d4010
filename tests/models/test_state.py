"""State between calls: mutable buffers (a decoder's KV cache) persist across execute() calls of
one loaded method, match the exported module's eager run step by step, reset to the start, and
are planned once, written in place.

The decoder is exported with transformers' `convert_and_export_with_cache` from a tiny random
LlamaConfig (no download). Tolerance: 1e-5 absolute on the logits (float32; the same kernels
as the stateless zoo tests, differences are summation order).
"""

import functools
import struct
from pathlib import Path

import numpy as np
import pytest
import torch

import pteron
from cortex_m_target import host_target


STEPS = 8
CACHE = 16


@functools.cache
def decoder_export():
    """The decoder's ExportedProgram (exported once; export is the slow part)."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        use_cache=True,
        cache_implementation="static",
        max_length=CACHE,
        cache_config={"batch_size": 1, "max_cache_len": CACHE},
    )
    return convert_and_export_with_cache(model)


@pytest.fixture(scope="module")
def decoder():
    ep = decoder_export()
    tokens = torch.randint(0, 64, (STEPS,), generator=torch.Generator().manual_seed(1))
    # The exported module's eager run mutates its own buffers: the reference, step by step.
    eager = ep.module()
    reference = [eager(input_ids=tokens[i].reshape(1, 1), cache_position=torch.tensor([i])).detach() for i in range(STEPS)]
    program = pteron.to_edge_transform_and_lower(ep)
    two_methods = pteron.to_edge_transform_and_lower({"forward": ep, "decode": ep})
    return program, tokens, reference, two_methods


def decode(program, tokens):
    return [program.forward(tokens[i].reshape(1, 1), torch.tensor([i]))[0].clone() for i in range(len(tokens))]


def test_decoder_matches_eager_step_by_step_and_resets(decoder):
    program, tokens, reference, _ = decoder
    loaded = pteron.load(program.buffer())
    first = decode(loaded, tokens)
    for step, (got, want) in enumerate(zip(first, reference)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=0, msg=f"step {step}")
    # The cache matters: the same token at another position gives other logits.
    assert not torch.allclose(first[0], first[1])
    loaded.reset()
    again = decode(loaded, tokens)
    assert all(torch.equal(a, b) for a, b in zip(first, again)), "reset did not restore the start"
    # A second run without reset continues from the filled cache, so it differs.
    loaded.reset()
    loaded.forward(tokens[0].reshape(1, 1), torch.tensor([0]))
    later = loaded.forward(tokens[0].reshape(1, 1), torch.tensor([0]))[0]
    torch.testing.assert_close(later, first[0], atol=1e-5, rtol=0)  # position 0 rewritten


def test_state_is_planned_once_and_written_in_place(decoder):
    program, _, _, _ = decoder
    loaded = pteron.load(program.buffer())
    method = loaded.load_method("forward")
    # 4 KV caches (1x2x16x8 float32) and 2 int64 positions, each 16-byte aligned: one arena.
    assert method.num_state_tensors == 6
    sizes = method.meta["planned_buffer_sizes"]
    assert sizes[-1] == 4 * 1 * 2 * CACHE * 8 * 4 + 2 * 16
    names = method.instruction_names()
    # The four cache writes are index_put kernels computing into the cache; only the two
    # position counters (updated by an add) are copied back.
    assert names.count("aten::index_put.out") == 4
    assert names.count("aten::copy.out") == 2 + 2  # the graph's own two copies + two write-backs
    report = program.report
    assert any("state write-backs: 2" in line for line in report["passes"]), report["passes"]


@pytest.mark.parametrize("kernels", [("portable",), ("optimized", "portable")])
def test_a_decode_step_copies_no_cache(decoder, kernels):
    # Read from the loaded method itself: each cache write (index_put) computes into the
    # cache's own bytes (self and out are one tensor memory, inside a state buffer), which its
    # kernels (portable and optimized alike) then do not copy; and no copy instruction writes a
    # cache (the write-backs are the two int64 position counters).
    _, tokens, reference, _ = decoder
    program = pteron.to_edge_transform_and_lower(decoder_export(), kernels=kernels)
    method = pteron.load(program.buffer()).load_method("forward")
    cache_bytes = 1 * 2 * CACHE * 8 * 4
    caches = [(a, n) for a, n in method.state_memory() if n == cache_bytes]
    assert len(caches) == 4

    def cache_at(address):
        return any(a <= address < a + n for a, n in caches)

    names = method.instruction_names()
    writes = [i for i, name in enumerate(names) if name == "aten::index_put.out"]
    assert len(writes) == 4
    for i in writes:
        addresses = method.instruction_tensor_addresses(i)
        self_address, out_address = addresses[0], addresses[4]
        assert self_address == out_address and cache_at(out_address), (i, addresses)
    for i, name in enumerate(names):
        if name == "aten::copy.out":
            assert not cache_at(method.instruction_tensor_addresses(i)[-1]), i
    for step in range(STEPS):  # and the method still decodes as eager does
        got = method(tokens[step].reshape(1, 1), torch.tensor([step]))[0]
        torch.testing.assert_close(got, reference[step], atol=1e-5, rtol=0, msg=f"step {step}")


def test_malformed_state_is_refused(decoder):
    program, _, _, _ = decoder
    data = bytearray(program.buffer())
    # Truncating the file cuts the mutable data segment (the last one): refused at load.
    with pytest.raises(RuntimeError, match="segment .* runs past the end of the file"):
        pteron.load(bytes(data[: len(data) - 64]))


def test_two_methods_share_the_cache(decoder):
    _, tokens, reference, program = decoder
    loaded = pteron.load(program.buffer())
    # Then the LLM metadata its KV cache implies (tests/llm/test_metadata.py).
    assert loaded.method_names == ["forward", "decode", "get_max_seq_len", "get_max_context_len", "use_kv_cache",
                                   "use_sdpa_with_kv_cache", "get_vocab_size", "enable_dynamic_shape", "get_n_layers",
                                   "get_n_kv_heads", "get_head_dim"]
    forward, decode = loaded.load_method("forward"), loaded.load_method("decode")
    # Steps 0-3 through one method, 4-7 through the other: the second continues the cache the
    # first wrote (and back), so every step matches the single eager run.
    for step in range(STEPS):
        method = forward if step < 4 or step == 6 else decode
        got = method(tokens[step].reshape(1, 1), torch.tensor([step]))[0]
        torch.testing.assert_close(got, reference[step], atol=1e-5, rtol=0, msg=f"step {step}")
    # One state: resetting the program resets what both methods see. Step 1 alone reads
    # cache row 0, which holds step 0's keys unless the reset cleared it.
    fresh = pteron.load(program.buffer()).load_method("decode")
    want = fresh(tokens[1].reshape(1, 1), torch.tensor([1]))[0]
    stale = decode(tokens[1].reshape(1, 1), torch.tensor([1]))[0]
    assert not torch.equal(stale, want)
    loaded.reset()
    assert torch.equal(decode(tokens[1].reshape(1, 1), torch.tensor([1]))[0], want)


SEED = Path(__file__).resolve().parents[1] / "fuzz" / "regressions" / "state-cache-counter.pte"


def patched_seed(old: bytes, new: bytes) -> bytes:
    data = SEED.read_bytes()
    assert data.count(old) == 1, "pattern not unique in the seed"
    return data.replace(old, new)


def test_malformed_state_tables_are_refused_with_one_line():
    # The seed's mutable data offsets: [reserved 0, cache at 0, count at 48] (u32 length, u64s).
    offsets = struct.pack("<IQQQ", 3, 0, 0, 48)
    loaded = pteron.load(SEED.read_bytes())
    assert loaded.load_method("forward").num_state_tensors == 2
    # An entry that does not exist (the table cut to two entries).
    bad = patched_seed(offsets, struct.pack("<IQQQ", 2, 0, 0, 48))
    with pytest.raises(RuntimeError, match=r"initial value from mutable data entry 2, which does not exist"):
        pteron.load(bad)
    # An entry past the end of the segment.
    bad = patched_seed(offsets, struct.pack("<IQQQ", 3, 0, 0, 1 << 40))
    with pytest.raises(RuntimeError, match=r"overruns the mutable data segment") as e:
        pteron.load(bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("backend", ["xnnpack", "optimized"])
def test_decoder_state_on_the_cpu_paths(decoder, backend):
    # Delegates and the optimized kernels around the state: the cache writes stay portable
    # kernels computing in place, the rest runs where it is fastest.
    _, tokens, reference, _ = decoder
    ep = decoder_export()
    if backend == "xnnpack":
        program = pteron.to_edge_transform_and_lower(ep, [pteron.XnnpackPartitioner()])
    else:
        program = pteron.to_edge_transform_and_lower(ep, kernels=("optimized", "portable"))
    loaded = pteron.load(program.buffer())
    for step, (got, want) in enumerate(zip(decode(loaded, tokens), reference)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=0, msg=f"{backend} step {step}")
    assert loaded.load_method("forward").instruction_names().count("aten::index_put.out") == 4


class AddsIntoInput(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class CacheAsInput(torch.nn.Module):
    """The caller keeps the cache and passes it each call; the model writes a row into it."""

    def forward(self, k, cache, pos):
        cache.index_copy_(0, pos, k)
        return cache.sum(0)


class WritesTwoInputs(torch.nn.Module):
    def forward(self, x, y):
        x.mul_(2)
        y[:, 0] = 5.0
        return x.cos() + y.sum()


INPUT_WRITERS = {
    "add_": (AddsIntoInput, (torch.randn(3),)),
    "two inputs": (WritesTwoInputs, (torch.randn(2, 3), torch.randn(2, 3))),
}
LOWERINGS = {
    "default": {},
    "portable": {"kernels": ["portable"]},
    "xnnpack": {"partitioner": [pteron.XnnpackPartitioner()]},
}


@pytest.mark.parametrize("lowering", list(LOWERINGS))
@pytest.mark.parametrize("case", list(INPUT_WRITERS))
def test_inputs_the_model_writes_into_change_as_in_eager(case, lowering):
    # torch.export's user input mutation: the program writes the new value into the input's
    # memory (as ExecuTorch's write-back copy does), and forward copies it into the caller's
    # tensor. Values exact: the same float ops on the same inputs.
    model_type, example = INPUT_WRITERS[case]
    model = model_type()
    program = pteron.to_edge_transform_and_lower(
        pteron.export(model, tuple(t.clone() for t in example)), progress=False, **LOWERINGS[lowering]
    ).load()
    for scale in (1.0, -3.0):
        mine, eager = [t * scale for t in example], [t * scale for t in example]
        got, want = program.forward(*mine), model(*eager)
        torch.testing.assert_close(torch.as_tensor(got[0]), want, atol=1e-6, rtol=1e-6)
        for changed, expected in zip(mine, eager, strict=True):
            assert torch.equal(changed, expected)
        assert not torch.equal(mine[0], example[0] * scale)  # the call did change it


def test_torch_export_db_user_input_mutation_and_a_dynamic_input():
    from torch._export.db.examples import user_input_mutation as example

    rows = torch.export.Dim("rows", max=8)
    for model, args, dynamic in ((example.model, example.example_args, None), (AddsIntoInput(), (torch.ones(3),), ({0: rows},))):
        exported = torch.export.export(model, tuple(a.clone() for a in args), dynamic_shapes=dynamic)
        program = pteron.to_edge_transform_and_lower(exported, progress=False).load()
        for call in ([args[0].clone()], [torch.randn(7, *args[0].shape[1:])] if dynamic else []):
            if not call:
                continue
            mine, eager = call[0].clone(), call[0].clone()
            torch.testing.assert_close(torch.as_tensor(program.forward(mine)[0]), model(eager), atol=1e-6, rtol=1e-6)
            assert torch.equal(mine, eager)


def test_a_cache_the_caller_keeps_is_written_in_place_across_calls():
    model = CacheAsInput()
    program = pteron.to_edge_transform_and_lower(
        pteron.export(model, (torch.randn(1, 4), torch.zeros(5, 4), torch.tensor([0]))), progress=False
    ).load()
    mine, eager = torch.zeros(5, 4), torch.zeros(5, 4)
    for pos in range(5):
        k = torch.randn(1, 4)
        got = program.forward(k, mine, torch.tensor([pos]))
        torch.testing.assert_close(torch.as_tensor(got[0]), model(k, eager, torch.tensor([pos])), atol=1e-6, rtol=0)
        assert torch.equal(mine, eager)
    names = program.load_method("forward").instruction_names()
    assert "aten::index_put.out" in names and "aten::copy.out" not in names  # the row, not the cache


def test_a_program_from_a_file_writes_into_the_callers_array_too():
    # The program names the inputs it writes (its pteron.written_inputs.<method> table): a
    # method loaded from bytes changes the caller's numpy array or tensor, and holds the value
    # as its input (C++: Method::input(i) after execute, Method::input_written(i)).
    ep = pteron.export(AddsIntoInput(), (torch.ones(3),))
    program = pteron.load(pteron.to_edge_transform_and_lower(ep, progress=False).buffer())
    method = program.load_method("forward")
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_array_equal(method(x)[0], [4.0, 6.0, 8.0])
    np.testing.assert_array_equal(x, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(method.input(0), [2.0, 3.0, 4.0])
    t = torch.zeros(3)
    program.forward(t)
    assert torch.equal(t, torch.ones(3))


def test_int8_inputs_cannot_take_what_the_model_writes_into_them():
    ep = pteron.export(AddsIntoInput(), (torch.ones(3),))
    with pytest.raises(pteron.CompileError, match="int8_io: the model writes into its input 'x' in place") as error:
        pteron.to_edge_transform_and_lower(
            ep, quantize="cortex-m", calibration=[(torch.randn(3),)], int8_io=True, progress=False
        )
    assert "\n" not in str(error.value)


class WritesItsLastInput(torch.nn.Module):
    def forward(self, a, b, c, d, e):
        e.add_(1)
        return a + b + c + d + e


def test_a_damaged_written_inputs_table_is_refused_in_one_line():
    program = pteron.to_edge_transform_and_lower(
        pteron.export(WritesItsLastInput(), tuple(torch.ones(2) for _ in range(5))), progress=False
    ).buffer()
    assert pteron.load(program).load_method("forward").input_written(4)
    # The table is the segment [4] (int32): find it among the segments (base: extended header).
    (base,) = struct.unpack_from("<Q", program, 24)
    table = struct.pack("<i", 4)
    at = [p for p in range(base, len(program) - 3, 16) if program[p : p + 4] == table]
    assert len(at) == 1, "the table's bytes are not unique among the segments"
    for bad, message in ((5, r"entry 0 \(5\) is not a planned input"), (-1, r"entry 0 \(-1\) is not")):
        damaged = program[: at[0]] + struct.pack("<i", bad) + program[at[0] + 4 :]
        with pytest.raises(RuntimeError, match=r"pteron.written_inputs.forward: " + message) as error:
            pteron.load(damaged).load_method("forward")
        assert "\n" not in str(error.value)


def test_writing_into_inputs_the_target_does_not_plan_is_refused_in_one_line(tmp_path):
    target = host_target(tmp_path, "caller-inputs", ["portable"], plan_inputs=False)
    ep = pteron.export(AddsIntoInput(), (torch.ones(3),))
    with pytest.raises(pteron.CompileError, match="writes into its input 'x' in place") as error:
        pteron.to_edge_transform_and_lower(ep, target=target, progress=False)
    assert "\n" not in str(error.value)




def test_a_method_that_only_reads_a_buffer_sees_another_methods_writes():
    # As ExecuTorch's set_state/get_state: "write" mutates the buffer, "read" only reads it,
    # so in "read" alone it would be a constant; in one program it is the shared state.
    class Writer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(4, 3))

        def forward(self, x, pos):
            self.cache.index_copy_(0, pos, x)
            return x + 0

    class Reader(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(4, 3))

        def forward(self, scale):
            return self.cache * scale

    write = torch.export.export(Writer(), (torch.ones(1, 3), torch.tensor([0])))
    read = torch.export.export(Reader(), (torch.ones(1),))
    program = pteron.load(pteron.to_edge_transform_and_lower({"write": write, "read": read}).buffer())
    assert program.load_method("read").num_state_tensors == 1
    program.run_method("write", [torch.full((1, 3), 2.0), torch.tensor([1])])
    program.run_method("write", [torch.full((1, 3), 5.0), torch.tensor([3])])
    expected = torch.zeros(4, 3)
    expected[1], expected[3] = 2.0, 5.0
    assert torch.equal(program.run_method("read", [torch.tensor([10.0])])[0], expected * 10)
    program.reset()
    assert torch.equal(program.run_method("read", [torch.tensor([1.0])])[0], torch.zeros(4, 3))
