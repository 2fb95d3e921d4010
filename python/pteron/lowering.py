"""From a PyTorch model to a pteron program, with ExecuTorch's names:

    ep = pteron.export(model, (x,))
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[])
    program.save("model.pte")

INT8 post-training quantization is an option of the same call:

    program = pteron.to_edge_transform_and_lower(
        ep, quantize="cortex-m", calibration=[(x1,), (x2,), ...], int8_io=False)

Compilation runs in-process in pteron's C++ compiler; the ExportedProgram crosses over as the
archive torch.export.save writes (weights are memory-mapped by the compiler, not copied).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from typing import Any, Sequence

import pteron_native

from pteron import _paths
from pteron.partitioners import backend_names
from pteron.recurrent import has_dynamic_recurrent_layer, keep_recurrent_layers, recurrent_ops
from pteron.runtime import Program, load

CompileError = pteron_native.CompileError


def export(model, example_inputs: Sequence[Any], example_kwargs: dict | None = None, *, strict: bool = False,
           dynamic_shapes=None):
    """torch.export of `model` (eval mode) on `example_inputs` (and keyword arguments, as
    torch.export.export takes them), decomposed to core ATen. With `dynamic_shapes`, recurrent
    layers (nn.LSTM, nn.GRU, nn.RNN) stay whole (pteron.recurrent), so their number of steps may
    be a Dim."""
    import torch

    keep = keep_recurrent_layers() if dynamic_shapes is not None else contextlib.nullcontext()
    with keep:
        ep = torch.export.export(model.eval(), tuple(example_inputs), example_kwargs, strict=strict,
                                 dynamic_shapes=dynamic_shapes)
        return decompose(ep)


# Core ATen ops that torch's default table still decomposes (into arange/abs/clamp/index
# chains) although pteron has kernels for them: kept whole, one kernel call each.
_KEPT_CORE_OPS = ("reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad2d",
                  "replication_pad3d")


# torchao's affine quantization primitives, which pteron's optimized library rewrites into its
# quantized linears (compiler/passes/quantized_linear.h). The default decompositions would turn
# them into dozens of plain int/float ops, so they are kept whole.
_TORCHAO_KEPT = ("dequantize_affine", "quantize_affine", "choose_qparams_affine")


def decompose(ep):
    """ep.run_decompositions() to core ATen, keeping the ops in _KEPT_CORE_OPS, bicubic resizes
    (_WHOLE_OP_DECOMPOSITIONS), torchao's affine quantization primitives and recurrent layers
    over a dynamic input whole."""
    if has_dynamic_recurrent_layer(ep):
        with keep_recurrent_layers():
            return _decompose(ep, keep=recurrent_ops())
    return _decompose(ep)


def _soft_margin_loss(input, target, reduction=1):
    """aten::soft_margin_loss as ATen's kernel computes it: neg, mul, exp, log1p, each in the
    input's dtype (a half op computes in float and rounds to half), then the reduction. torch's
    own decomposition upcasts the whole chain to float32, so for float16 a loss whose exp
    overflows half (inf in eager) came out finite."""
    import torch

    loss = torch.mul(torch.neg(input), target)
    if loss.dtype != input.dtype:  # ATen multiplies in place into a tensor of input's dtype
        loss = loss.to(input.dtype)
    loss = torch.log1p(torch.exp(loss))
    if reduction == 1:  # at::Reduction::Mean
        return torch.mean(loss)
    if reduction == 2:  # at::Reduction::Sum
        return torch.sum(loss)
    return loss


def _upsample_bicubic2d_vec(input, output_size, align_corners, scale_factors=None):
    """F.interpolate(mode="bicubic") as one upsample_bicubic2d.default call: torch's table turns
    it into 16 gathers and ~100 element-wise ops (a ViT's position-embedding resize, a
    warp net's resize: 5x slower than eager), where pteron has a kernel for the whole op. The
    output size is torch's: the given size, else floor(input size * scale)."""
    import torch

    if output_size is None:
        output_size = [torch.sym_int(torch.sym_float(n) * s) for n, s in zip(input.shape[2:], scale_factors)]
    scale_h, scale_w = scale_factors if scale_factors else (None, None)
    return torch.ops.aten.upsample_bicubic2d.default(input, output_size, align_corners, scale_h, scale_w)


# Decompositions of pteron's own: where torch's differs from its eager kernel, or where torch's
# breaks an op pteron has a kernel for into many small ones.
_EAGER_DECOMPOSITIONS = {"soft_margin_loss": _soft_margin_loss}
# op -> (the decomposition, the op it leaves whole in the graph).
_WHOLE_OP_DECOMPOSITIONS = {"upsample_bicubic2d.vec": (_upsample_bicubic2d_vec, "upsample_bicubic2d.default")}


def decomposition_table(table=None, keep=()):
    """The core-ATen table pteron exports with: torch's default (or `table`, e.g. a cached copy
    of it) without the ops kept whole, with _EAGER_DECOMPOSITIONS in place of torch's."""
    import torch

    if table is None:
        table = torch.export.default_decompositions()
    for op in keep:
        table.pop(op, None)
    for name in _KEPT_CORE_OPS:
        table.pop(getattr(torch.ops.aten, name).default, None)
    torchao = getattr(torch.ops, "torchao", None)
    for name in _TORCHAO_KEPT:
        op = getattr(torchao, name, None) if torchao is not None else None
        if op is not None:
            table.pop(op.default, None)
    for name, fn in _EAGER_DECOMPOSITIONS.items():
        table[getattr(torch.ops.aten, name).default] = fn
    for name, (fn, _) in _WHOLE_OP_DECOMPOSITIONS.items():
        op, overload = name.split(".")
        table[getattr(getattr(torch.ops.aten, op), overload)] = fn
    return table


def _decompose(ep, keep=()):
    return ep.run_decompositions(decomposition_table(keep=keep))


class LoweredProgram:
    """A compiled program: its bytes, the compiler's report, and a loader for the runtime."""

    def __init__(self, data: bytes, report: dict):
        self._data = data
        self.report = report
        for note in report.get("notes", []):  # what the user may want to know or change
            warnings.warn(note, UserWarning, stacklevel=3)

    def buffer(self) -> bytes:
        return self._data

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self._data)

    # ExecuTorch users call to_executorch() then write_to_file(); both work here too.
    def to_executorch(self) -> "LoweredProgram":
        return self

    def write_to_file(self, f) -> None:
        f.write(self._data)

    def load(self) -> Program:
        """The program on pteron's host runtime; its forward also takes the model's own
        arguments (nested lists and dicts of tensors, keywords), as a program file states them."""
        return load(self._data)


def _is_core_aten(ep) -> bool:
    import torch

    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, torch._ops.OpOverload) and target.namespace == "aten":
            if torch.Tag.core not in target.tags and not _is_view_or_copy(target) and not _is_kept_whole(target):
                return False
    return True


def _is_kept_whole(target) -> bool:
    # What _WHOLE_OP_DECOMPOSITIONS make. Not core ATen, and a second run_decompositions, even
    # with an empty table, would break them up (torch registers their decomposition as the
    # op's Autograd kernel), so a program pteron.export made is not decomposed again.
    return target.__name__ in {kept for _, kept in _WHOLE_OP_DECOMPOSITIONS.values()}


def _is_view_or_copy(target) -> bool:
    # run_decompositions keeps these (they are not tagged core but every backend takes them).
    return target.__name__.split(".")[0] in {"view", "_to_copy", "clone", "alias", "lift_fresh_copy"}


def _stack_calibration(calibration) -> list:
    """One C-contiguous numpy array per model input, samples on axis 0."""
    import numpy as np

    per_input = None
    for i, sample in enumerate(calibration):
        tensors = sample if isinstance(sample, (tuple, list)) else (sample,)
        arrays = [np.asarray(t.detach().cpu() if hasattr(t, "detach") else t) for t in tensors]
        if per_input is None:
            per_input = [[] for _ in arrays]
        if len(arrays) != len(per_input):
            raise CompileError(f"calibration sample {i} has {len(arrays)} input(s), sample 0 has {len(per_input)}")
        for k, a in enumerate(arrays):
            first = per_input[k][0] if per_input[k] else a
            if a.shape != first.shape or a.dtype != first.dtype:
                raise CompileError(f"calibration sample {i}, input {k}: {a.dtype}{list(a.shape)} differs from "
                                   f"sample 0's {first.dtype}{list(first.shape)}")
            per_input[k].append(a)
    if not per_input:
        raise CompileError("calibration has no samples (pass an iterable of input tuples)")
    return [np.ascontiguousarray(np.stack(arrays)) for arrays in per_input]


def _calibrate_on_first_use(target: str, backends: list[str]) -> None:
    """As `pteron compile` does: a host compile on the default backends that finds no usable
    calibration of this machine in its cache (none yet, another pteron version's, a damaged one;
    $PTERON_CALIBRATION unset) has the CLI measure it once (`pteron tune`, about 15 s, progress on
    stderr), so the default program is the measured choice from the first compile on. When that
    fails the compile goes on with the partitioners' fixed rules, with a warning."""
    if target != "host" or backends:
        return
    threads = pteron_native.num_threads()
    if pteron_native.host_calibration_to_measure(threads) is None:
        return
    cli = _paths.cli_binary()
    if cli is None:
        warnings.warn("no calibration of this machine and no pteron CLI to measure it: the "
                      "partitioners' fixed rules decide (run `pteron tune`)", stacklevel=3)
        return
    import subprocess

    print("[tune] no usable calibration of this machine: measuring it once for the cost model "
          "(about 15 s; `pteron tune` measures again, PTERON_CALIBRATION=off skips it)", file=sys.stderr)
    # The CLI's progress and errors go to this process's stderr; its stdout names the file.
    run = subprocess.run([str(cli), "tune", "--threads", str(threads)], stdout=subprocess.DEVNULL)
    if run.returncode != 0:
        warnings.warn(f"could not calibrate this machine (pteron tune exited with {run.returncode}): "
                      "the partitioners' fixed rules decide", stacklevel=3)


def _lower_methods(programs: dict, partitioner, target: str, quantize, kernels, constant_methods,
                   llm_metadata, last_token_logits) -> LoweredProgram:
    if quantize is not None:
        raise CompileError("quantize is not supported for a program with several methods")
    if not programs:
        raise CompileError("a program needs at least one method")
    backends = backend_names(partitioner or []) + list(kernels or [])
    _calibrate_on_first_use(target, backends)
    import torch

    with tempfile.TemporaryDirectory(prefix="pteron-") as tmp:
        names, paths = [], []
        for i, (name, program) in enumerate(programs.items()):
            if isinstance(program, (str, os.PathLike)):
                path = os.fspath(program)
            else:
                ep = program if _is_core_aten(program) else decompose(program)
                path = os.path.join(tmp, f"method{i}.pt2")
                torch.export.save(ep, path)
            names.append(str(name))
            paths.append(path)
        return LoweredProgram(*pteron_native.compile_pt2_methods(names, paths, target, backends, constant_methods,
                                                                 llm_metadata, last_token_logits))


def to_edge_transform_and_lower(program, partitioner: Sequence[Any] | None = None, *, target: str = "host",
                                quantize: str | None = None, calibration=None, int8_io: bool = False,
                                observer: str | None = None, percentile: float = 99.99,
                                progress: bool = True,
                                kernels: Sequence[str] | None = None,
                                group_size: int | None = None,
                                constant_methods: dict | None = None,
                                llm_metadata: bool = True,
                                last_token_logits: bool = False) -> LoweredProgram:
    """Compiles an ExportedProgram (or a path to a .pt2) for `target`.

    `partitioner` is an ordered list of backend partitioners (pteron.XnnpackPartitioner());
    each claims the regions it can run, the rest goes to the target's kernels. None or an empty
    list (the default), with `kernels` None too, gives the target's best program: on the host,
    XNNPACK, then the int8 kernel library (int8 programs), the optimized kernels, then portable
    (report["backends"] says which); after `pteron tune` a host compile places each region by this
    machine's calibration (report["calibration"] names it; PTERON_CALIBRATION=off for none);
    kernels=("portable",) is the portable program. Raises CompileError with a one-line
    message naming the node, op and source line at fault.

    `kernels` names the kernel libraries the program may use after the partitioners, most
    preferred first, e.g. ("optimized", "portable"): "optimized" also runs its fusions
    (attention into pteron::sdpa). None means the target's kernel libraries.

    `quantize` ("cortex-m", "xnnpack" or "ethos-u") quantizes the model to INT8 first (PT2E's
    quantize/dequantize form) with `calibration`, an iterable of samples, each a tuple of the
    model's inputs (or one tensor for a one-input model); `int8_io` makes the program's inputs
    and outputs int8 (their scales and zero points are in report["quantize"]); `observer`
    ("minmax" or "percentile", default per scheme) and `percentile` choose activation ranges.
    Calibration progress goes to stderr unless `progress` is False.

    `quantize` "llm-8da4w", "llm-int8" or "llm-int4" quantizes linear and embedding weights
    instead (int4 groups of `group_size`, default 32; int8 per channel unless `group_size`),
    with no calibration; the program runs on the optimized kernels, so `kernels` defaults to
    ("optimized", "portable") then.

    `program` may also be a dict {method name: ExportedProgram or .pt2 path}: one program with
    one method each (as ExecuTorch's to_edge({...})), whose buffers are shared by name: state
    one method writes (a KV cache) is what the others read (share_mutable_buffers).

    `constant_methods` ({name: value}, ExecuTorch's argument of the same name) adds methods
    with no inputs that return the value: an int, bool, float or str, or a list of them, e.g.
    the LLM metadata {"get_max_seq_len": 128, "get_eos_ids": [2], "use_kv_cache": True}
    (pteron.load(path).metadata() reads it back). A KV-cache decoder (rank-4 state buffers, as
    transformers' convert_and_export_with_cache writes) also gets get_max_context_len (the cache
    length), get_max_seq_len (the most tokens per call), use_kv_cache, use_sdpa_with_kv_cache
    (false), get_vocab_size (the logits' last dim), enable_dynamic_shape and get_n_layers /
    get_n_kv_heads / get_head_dim (from the caches' shape) unless `llm_metadata` is False, and
    a .pt2 path's extra/constant_methods.json (get_bos_id, get_eos_ids: `python -m pteron.zoo
    export` writes them; pteron.zoo.token_metadata(model) gives them for constant_methods=);
    given values win. Malformed values (a negative length, a
    float id, an unsupported type) raise CompileError naming the method.

    `last_token_logits` makes a decoder's first output (logits [1, T, vocab]) the last token's
    row only, [1, 1, vocab], as ExecuTorch's LLM export does: a prompt prefilled in one call
    runs the vocabulary projection once instead of T times (generation reads only that row).
    Off by default, which keeps transformers' output (every row, e.g. for perplexity).
    """
    constant_methods = dict(constant_methods or {})
    if isinstance(program, dict):
        return _lower_methods(program, partitioner, target, quantize, kernels, constant_methods, llm_metadata,
                              last_token_logits)
    llm = quantize is not None and quantize.startswith("llm-")
    if group_size is not None and not llm:
        raise CompileError("group_size needs quantize='llm-8da4w', 'llm-int8' or 'llm-int4'")
    if llm and (calibration is not None or int8_io):
        raise CompileError(f"quantize={quantize!r} takes no calibration or int8_io")
    if llm and kernels is None:
        kernels = ("optimized", "portable")
    if quantize is None and (calibration is not None or int8_io):
        raise CompileError("calibration and int8_io need quantize='cortex-m', 'xnnpack' or 'ethos-u'")
    if quantize is not None and not llm and calibration is None:
        raise CompileError("quantize needs calibration samples (an iterable of input tuples)")
    # The compiler checks each name and option ("unknown backend ..., available: ...").
    backends = backend_names(partitioner or [])
    backends += list(kernels or [])
    _calibrate_on_first_use(target, backends)

    extra = {"constant_methods": constant_methods, "llm_metadata": llm_metadata,
             "last_token_logits": last_token_logits}

    def compile_path(path):
        if quantize is None:
            return pteron_native.compile_pt2(path, target, backends, **extra)
        if llm:
            return pteron_native.compile_pt2_llm(path, target, quantize, group_size or 0, backends, **extra)
        arrays = _stack_calibration(calibration)
        return pteron_native.compile_pt2_quantized(path, target, quantize, arrays, int8_io, observer or "",
                                                   percentile, progress, backends, **extra)

    if isinstance(program, (str, os.PathLike)):
        return LoweredProgram(*compile_path(os.fspath(program)))

    import torch

    ep = program if _is_core_aten(program) else decompose(program)
    with tempfile.TemporaryDirectory(prefix="pteron-") as tmp:
        path = os.path.join(tmp, "model.pt2")
        torch.export.save(ep, path)
        return LoweredProgram(*compile_path(path))
