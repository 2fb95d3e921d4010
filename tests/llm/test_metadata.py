"""LLM metadata methods (ExecuTorch's constant_methods: get_max_seq_len, get_eos_ids,
use_kv_cache, ...): written by the compiler from Python's constant_methods= and the CLI's
--constant-method, derived from a KV-cache decoder's state, read back by the runtime
(pteron.load(p).metadata(), `pteron inspect`), and malformed ones refused with one line naming
the method, at compile time and, for programs written elsewhere, at read time.

The decoder is a tiny random Llama exported with transformers' convert_and_export_with_cache
(no download), as tests/models/test_state.py does, with another cache length so the derived
get_max_seq_len is the cache's and not a default.
"""

import functools
import json
import subprocess

import pytest
import torch
from pteron_cli import pteron_cli

import pteron

CACHE = 24
VOCAB = 64

# What ExecuTorch's Llama export writes (examples/models/llama/export_llama_lib.py), plus a
# method pteron does not read as LLM metadata.
LLAMA_METADATA = {
    "get_max_seq_len": 128,
    "get_max_context_len": 256,
    "get_vocab_size": 32000,
    "get_bos_id": 1,
    "get_eos_ids": [2, 31999],
    "use_kv_cache": True,
    "use_sdpa_with_kv_cache": False,
    "enable_dynamic_shape": False,
    "get_n_layers": 32,
}
# What optimum-executorch writes (exporters/executorch/utils.py): get_eos_id rather than
# get_eos_ids, the head size as a float, and get_dtype, which pteron does not read.
OPTIMUM_METADATA = {
    "get_dtype": 6, "get_bos_id": 1, "get_eos_id": [2, 7], "get_head_dim": 64.0, "get_n_kv_heads": 8,
    "get_n_layers": 16, "get_vocab_size": 128, "get_max_batch_size": 1, "get_max_seq_len": 64, "use_kv_cache": True,
    "use_sdpa_with_kv_cache": True, "enable_dynamic_shape": True,
}  # fmt: skip
DERIVED_SHAPE = {"get_n_layers": 2, "get_n_kv_heads": 2, "get_head_dim": 8}  # the decoder's 2 layers of [1, 2, 24, 8]


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


@functools.cache
def add_one_export():
    return pteron.export(AddOne(), (torch.ones(3),))


@functools.cache
def decoder_export():
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(config).eval()
    model.generation_config = GenerationConfig(use_cache=True, cache_implementation="static", max_length=CACHE,
                                               cache_config={"batch_size": 1, "max_cache_len": CACHE})
    return convert_and_export_with_cache(model)


def cli(*args, check=True):
    out = subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def inspect_json(path) -> dict:
    return json.loads(cli("inspect", path, "--json").stdout)


def test_constant_methods_round_trip_through_compile_load_and_inspect(tmp_path):
    program = pteron.to_edge_transform_and_lower(add_one_export(),
                                                 constant_methods={**LLAMA_METADATA, "scale": 0.5, "name": "tiny"})
    path = tmp_path / "add.pte"
    program.save(path)
    loaded = pteron.load(path)
    assert loaded.method_names == ["forward", *LLAMA_METADATA, "scale", "name"]
    metadata = loaded.metadata()
    assert metadata == LLAMA_METADATA
    assert type(metadata["use_kv_cache"]) is bool and type(metadata["get_bos_id"]) is int
    # Each is a method with no inputs, no instructions and no planned memory; running it gives
    # its value, as ExecuTorch's Module.run_method does.
    meta = loaded.method_meta("get_eos_ids")
    assert meta["inputs"] == [] and meta["num_instructions"] == 0 and meta["planned_buffer_sizes"] == []
    assert loaded.run_method("get_eos_ids", []) == [2, 31999]
    assert loaded.run_method("get_max_seq_len", []) == [128]
    assert loaded.run_method("use_kv_cache", []) == [True]
    assert loaded.run_method("scale", []) == [0.5] and loaded.run_method("name", []) == ["tiny"]
    # The graph method is unchanged by them.
    assert torch.equal(loaded.forward(torch.ones(3))[0], torch.full((3,), 2.0))
    # No KV cache here: nothing is derived, every method was given.
    assert not any("derived" in line for line in program.report["constant_methods"])

    info = inspect_json(path)
    assert info["llm_metadata"] == LLAMA_METADATA
    constants = {m["name"]: m.get("constant") for m in info["methods"]}
    assert constants["get_eos_ids"] == [2, 31999] and constants["name"] == "tiny"
    assert constants["forward"] is None
    text = cli("inspect", path).stdout
    assert "method 'get_max_seq_len': constant 128" in text
    assert "LLM metadata:" in text and "get_eos_ids [2,31999]" in text


def test_optimum_executorchs_metadata_is_read():
    loaded = pteron.load(pteron.to_edge_transform_and_lower(add_one_export(), constant_methods=OPTIMUM_METADATA).buffer())
    want = {k: v for k, v in OPTIMUM_METADATA.items() if k != "get_dtype"}
    assert loaded.metadata() == {**want, "get_head_dim": 64}
    assert type(loaded.metadata()["get_head_dim"]) is int


def test_cli_constant_methods_match_pythons(tmp_path):
    pt2 = tmp_path / "add.pt2"
    torch.export.save(add_one_export(), pt2)
    out = tmp_path / "add.pte"
    flags = ["--constant-method", "get_max_seq_len=128", "--constant-method", "get_eos_ids=[2, 31999]",
             "--constant-method", "use_kv_cache=true", "--constant-method", "get_bos_id=1",
             "--constant-method", 'name="tiny"', "--constant-method", "scale=0.5"]
    report = json.loads(cli("compile", pt2, "-o", out, "--json", *flags).stdout)
    assert report["constant_methods"] == ["get_max_seq_len=128", "get_eos_ids=[2, 31999]", "use_kv_cache=true",
                                          "get_bos_id=1", 'name="tiny"', "scale=0.5"]
    loaded = pteron.load(out)
    assert loaded.metadata() == {"get_max_seq_len": 128, "get_bos_id": 1, "get_eos_ids": [2, 31999],
                                 "use_kv_cache": True}
    assert loaded.run_method("name", []) == ["tiny"] and loaded.run_method("scale", []) == [0.5]
    # The same methods from Python give the same program bytes.
    same = pteron.to_edge_transform_and_lower(
        pt2, constant_methods={"get_max_seq_len": 128, "get_eos_ids": [2, 31999], "use_kv_cache": True,
                               "get_bos_id": 1, "name": "tiny", "scale": 0.5})
    assert same.buffer() == out.read_bytes()
    run = json.loads(cli("run", out, "--method", "use_kv_cache", "--json").stdout)
    assert run["outputs"] == [{"bool": True}]


def test_a_pt2s_constant_methods_json_is_written_and_given_ones_win(tmp_path):
    # What `python -m pteron.zoo export` writes for a decoder: the config's token ids.
    pt2 = tmp_path / "add.pt2"
    torch.export.save(add_one_export(), pt2,
                      extra_files={"constant_methods.json": json.dumps({"get_bos_id": 1, "get_eos_ids": [2, 3]})})
    out = tmp_path / "add.pte"
    cli("compile", pt2, "-o", out)
    assert pteron.load(out).metadata() == {"get_bos_id": 1, "get_eos_ids": [2, 3]}
    cli("compile", pt2, "-o", out, "--constant-method", "get_bos_id=5")
    assert pteron.load(out).metadata() == {"get_bos_id": 5, "get_eos_ids": [2, 3]}
    assert pteron.load(pteron.to_edge_transform_and_lower(pt2).buffer()).metadata()["get_eos_ids"] == [2, 3]
    # Malformed: one line naming the entry, exit 1.
    for text, message in (("[1, 2]", "extra/constant_methods.json: not a JSON object"),
                          ('{"get_bos_id": -1}', "constant method 'get_bos_id' (get_bos_id=-1): a token id"),
                          ('{"x": {"a": 1}}', "constant method 'x': {\"a\":1} is not an int, bool, float or string")):
        torch.export.save(add_one_export(), pt2, extra_files={"constant_methods.json": text})
        run = cli("compile", pt2, "-o", out, check=False)
        assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
        assert message in run.stderr, run.stderr


@pytest.fixture(scope="module")
def decoder_pt2(tmp_path_factory):
    from pteron.lowering import decompose

    path = tmp_path_factory.mktemp("decoder") / "decoder.pt2"
    torch.export.save(decompose(decoder_export()), path)  # the CLI takes core ATen
    return path


def test_kv_cache_decoder_gets_its_cache_length_as_metadata(decoder_pt2, tmp_path):
    ep = decoder_export()
    program = pteron.to_edge_transform_and_lower(ep)
    loaded = pteron.load(program.buffer())
    # dim 2 of the [1, 2, 24, 8] caches; one token per call (input_ids [1, 1]); the logits'
    # last dim; static inputs; transformers' cache layout, not ExecuTorch's sdpa_with_kv_cache's.
    assert loaded.metadata() == {"get_max_seq_len": 1, "get_max_context_len": CACHE, "get_vocab_size": VOCAB,
                                 "use_kv_cache": True, "use_sdpa_with_kv_cache": False,
                                 "enable_dynamic_shape": False, **DERIVED_SHAPE}
    assert program.report["constant_methods"] == [
        "get_max_seq_len=1 (derived)", f"get_max_context_len={CACHE} (derived)", "use_kv_cache=true (derived)",
        "use_sdpa_with_kv_cache=false (derived)", f"get_vocab_size={VOCAB} (derived)",
        "enable_dynamic_shape=false (derived)", "get_n_layers=2 (derived)", "get_n_kv_heads=2 (derived)",
        "get_head_dim=8 (derived)"]
    # The decoder still decodes: a step matches the exported module's eager run.
    tokens, position = torch.tensor([[5]]), torch.tensor([0])
    want = ep.module()(input_ids=tokens, cache_position=position)
    torch.testing.assert_close(loaded.forward(tokens, position)[0], want, atol=1e-5, rtol=0)

    # Given values win over derived ones and add to them.
    given = pteron.to_edge_transform_and_lower(ep, constant_methods={"get_max_seq_len": 8, "get_eos_ids": [2]})
    assert pteron.load(given.buffer()).metadata() == {
        "get_max_seq_len": 8, "get_max_context_len": CACHE, "get_vocab_size": VOCAB, "get_eos_ids": [2],
        "use_kv_cache": True, "use_sdpa_with_kv_cache": False, "enable_dynamic_shape": False, **DERIVED_SHAPE}
    bare = pteron.to_edge_transform_and_lower(ep, llm_metadata=False)
    assert pteron.load(bare.buffer()).method_names == ["forward"]

    # The CLI derives the same, and --no-llm-metadata leaves it out.
    out = tmp_path / "decoder.pte"
    cli("compile", decoder_pt2, "-o", out)
    assert inspect_json(out)["llm_metadata"] == loaded.metadata()
    assert f"get_max_context_len {CACHE}" in cli("inspect", out).stdout
    cli("compile", decoder_pt2, "-o", out, "--no-llm-metadata")
    assert inspect_json(out)["llm_metadata"] == {}


def test_two_method_programs_get_the_first_methods_metadata():
    ep = decoder_export()
    program = pteron.to_edge_transform_and_lower({"forward": ep, "decode": ep}, constant_methods={"get_bos_id": 1})
    loaded = pteron.load(program.buffer())
    assert loaded.method_names[:2] == ["forward", "decode"]
    assert loaded.metadata()["get_max_context_len"] == CACHE and loaded.metadata()["get_bos_id"] == 1
    with pytest.raises(pteron.CompileError, match="constant method 'decode' has the name of a method"):
        pteron.to_edge_transform_and_lower({"forward": ep, "decode": ep}, constant_methods={"decode": 1})


@pytest.mark.parametrize("methods, message", [
    ({"get_max_seq_len": -5}, r"constant method 'get_max_seq_len' \(get_max_seq_len=-5\): a length must be positive"),
    ({"get_vocab_size": 3.0}, r"'get_vocab_size' \(get_vocab_size=3.0\): an int is needed, not a float"),
    ({"get_max_seq_len": True}, r"'get_max_seq_len' \(get_max_seq_len=true\): an int is needed, not a bool"),
    ({"get_max_seq_len": [128]}, r"'get_max_seq_len' .*: LLM metadata takes one value, not a list"),
    ({"get_eos_ids": [2, -1]}, r"'get_eos_ids' .*: a token id must not be negative"),
    ({"use_kv_cache": 2}, r"'use_kv_cache' .*: a flag is true or false, not an int 2"),
    ({"get_n_layers": 0}, r"'get_n_layers' \(get_n_layers=0\): a size must be positive"),
    ({"get_head_dim": 62.5}, r"'get_head_dim' .*: a size is a positive whole number, not 62.5"),
    ({"get_eos_id": [2, -1]}, r"'get_eos_id' .*: a token id must not be negative"),
    ({"get_vocab_size": 64, "get_eos_id": [64]}, r"'get_eos_id' .*: token id 64 is outside the vocabulary"),
    ({"get_vocab_size": 64, "get_bos_id": 64}, r"'get_bos_id' .*: token id 64 is outside the vocabulary"),
    ({"forward": 1}, r"constant method 'forward' has the name of a method of the program"),
    ({"x": {"a": 1}}, r"constant method 'x': a value of type dict is not supported"),
    ({"x": [[1, 2]]}, r"constant method 'x': a value of type list is not supported"),
    ({"x": 2**70}, r"constant method 'x': 1180591620717411303424 is beyond int64"),
    ({"x": float("nan")}, r"constant method 'x' .*: a float must be finite"),
    ({"": 1}, r"a constant method has an empty name"),
])
def test_malformed_constant_methods_are_refused_at_compile_time(methods, message):
    with pytest.raises(pteron.CompileError, match=message) as e:
        pteron.to_edge_transform_and_lower(add_one_export(), constant_methods=methods)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("flag, message", [
    ("get_max_seq_len=-1", "constant method 'get_max_seq_len' (get_max_seq_len=-1): a length must be positive"),
    ("get_max_seq_len", "--constant-method get_max_seq_len: expected NAME=VALUE"),
    ("x=abc", "--constant-method x=abc: 'abc' is not an int, true/false, a float"),
    ("x=[1,2", "--constant-method x=[1,2: the list has no closing ']'"),
    ("x=99999999999999999999", "is beyond int64"),
])
def test_cli_refuses_malformed_constant_methods(tmp_path, flag, message):
    pt2 = tmp_path / "add.pt2"
    torch.export.save(add_one_export(), pt2)
    out = tmp_path / "add.pte"
    result = cli("compile", pt2, "-o", out, "--constant-method", flag, check=False)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert result.stderr.startswith("pteron: error: ") and result.stderr.count("\n") == 1
    assert not out.exists()


def other_writers_program(name: str, value) -> bytes:
    """A program another writer made with a malformed metadata value: compiled under a name
    that is no LLM metadata (so the compiler lets it through), then renamed in the bytes
    (flatbuffer strings are stored as written; the new name has the same length)."""
    decoy = "x" + name[1:]
    data = pteron.to_edge_transform_and_lower(add_one_export(), constant_methods={decoy: value}).buffer()
    assert data.count(decoy.encode()) == 1
    return data.replace(decoy.encode(), name.encode())


@pytest.mark.parametrize("name, value, message", [
    ("get_max_seq_len", -5, "metadata method 'get_max_seq_len' returns -5; a length must be positive"),
    ("get_vocab_size", 3.5, "metadata method 'get_vocab_size' returns a double, not an int"),
    ("get_bos_id", "one", "metadata method 'get_bos_id' returns a string, not an int"),
    ("get_eos_ids", [2, -7], "metadata method 'get_eos_ids' value 1 is -7; an id must not be negative"),
    ("use_kv_cache", 3, "metadata method 'use_kv_cache' returns 3; a flag is true, false, 0 or 1"),
    ("get_max_seq_len", [1, 2], "metadata method 'get_max_seq_len' returns 2 values; it returns one"),
    ("get_head_dim", 7.5, "metadata method 'get_head_dim' returns 7.5, not a whole number"),
    ("get_n_kv_heads", 0, "metadata method 'get_n_kv_heads' returns 0; a size must be positive"),
    ("get_eos_id", [-3], "metadata method 'get_eos_id' value 0 is -3; an id must not be negative"),
])
def test_malformed_metadata_in_a_program_is_refused_when_read(tmp_path, name, value, message):
    data = other_writers_program(name, value)
    loaded = pteron.load(data)  # a valid program: only its metadata is wrong
    with pytest.raises(RuntimeError) as e:
        loaded.metadata()
    assert str(e.value) == message
    path = tmp_path / "bad.pte"
    path.write_bytes(data)
    result = cli("inspect", path, check=False)
    assert result.returncode == 1
    assert result.stderr == f"pteron: error: {path}: {message}\n"
