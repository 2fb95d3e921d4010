"""Writes compiler/ir/op_schemas.inc: the operator schemas the pteron compiler knows.

Run with the project's torch (the table records what that torch exports):

    .venv/bin/python compiler/ir/gen_op_schemas.py compiler/ir/op_schemas.inc

The table holds every functional overload of core ATen (ops tagged torch.Tag.core), the
non-core ops that commonly survive `ep.run_decompositions()`, the quantized_decomposed
quantize/dequantize ops, and ExecuTorch's dim_order ops. For each functional op it records the
argument list (names, types, defaults, kwarg-only), the returns, the matching out-variant, and
for view ops the `*_copy` op that replaces them (view -> view_copy), as ExecuTorch's edge
dialect does. Out-variants and copy ops are rows of the same table.
"""

import json
import math
import sys

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)

# Non-core aten ops that appear in exported graphs, by "name.overload" ("default" = unnamed).
EXTRA_ATEN_OPS = [
    "view.default", "view.dtype", "permute.default", "expand.default", "clone.default",
    "_to_copy.default", "slice.Tensor", "select.int", "unsqueeze.default", "squeeze.default",
    "squeeze.dim", "squeeze.dims", "split_with_sizes.default", "split.Tensor", "unbind.int",
    "_native_batch_norm_legit_no_training.default", "native_layer_norm.default",
    "max_pool2d_with_indices.default", "embedding.default", "alias.default", "t.default",
    "transpose.int", "lift_fresh_copy.default", "scalar_tensor.default", "full.default",
    "full_like.default", "arange.default", "arange.start", "arange.start_step", "zeros.default",
    "ones.default", "zeros_like.default", "ones_like.default", "empty.memory_format",
    "detach.default", "as_strided.default", "diagonal.default", "unfold.default",
    "_assert_tensor_metadata.default", "_assert_scalar.default", "_assert_async.msg",
    "linear.default", "hardswish.default", "hardsigmoid.default", "silu.default",
    "pixel_shuffle.default", "pixel_unshuffle.default", "_safe_softmax.default",
    "mean.default", "sum.default", "rsub.Scalar", "matmul.default", "logical_and.default",
    "masked_fill.Scalar", "masked_fill.Tensor", "index_put.default",
    # Non-core ops that survive run_decompositions() (torch has no decomposition in its default
    # table), so exported models contain them and pteron has portable kernels for them.
    "signbit.default", "max.default", "min.default", "var_mean.correction", "__lshift__.Scalar",
    "__rshift__.Scalar", "__lshift__.Tensor", "__rshift__.Tensor", "bitwise_left_shift.Tensor",
    "bitwise_right_shift.Tensor", "bitwise_left_shift.Tensor_Scalar",
    "bitwise_right_shift.Tensor_Scalar", "bitwise_left_shift.Scalar_Tensor",
    "bitwise_right_shift.Scalar_Tensor", "narrow_copy.default", "rand_like.default",
    "randn_like.default", "empty_like.default", "repeat_interleave.Tensor", "hypot.default",
    "copysign.Tensor", "copysign.Scalar", "cumprod.default", "linalg_vector_norm.default",
    "erfinv.default", "bucketize.Tensor", "searchsorted.Tensor", "searchsorted.Scalar",
    "cummax.default", "cummin.default", "logcumsumexp.default", "kthvalue.default",
    "median.default", "median.dim",
    # What run_decompositions() makes of empty_like (transformers' MoE layers call it).
    "empty_permuted.default",
    # Decomposed by run_decompositions(), but kept by ExecuTorch's edge dialect and in its
    # portable kernel list: programs exported without decomposition may contain them.
    "floor_divide.default", "logit.default", "roll.default", "tril.default", "triu.default",
    "glu.default",
]
# Kept by run_decompositions though not tagged core: torch.sort(stable=True), antialiased
# bilinear interpolate, masked_select (its output size depends on the data).
EXTRA_ATEN_OPS += ["sort.stable", "_upsample_bilinear2d_aa.default", "masked_select.default"]
# Not in exported graphs, but in ExecuTorch's portable kernel list (programs ExecuTorch writes
# may call them) and registered by pteron's kernels: their schemas let tests check each kernel's
# declared arguments (tests/compiler/test_kernel_signatures.cpp).
EXTRA_ATEN_OPS += [
    "baddbmm.default", "copy_.default", "fill.Tensor", "floor_divide.Scalar",
    "index_copy.default", "index_put_.default", "replication_pad1d.default", "stack.default",
    "upsample_bicubic2d.default", "upsample_bilinear2d.default", "upsample_linear1d.default",
    "upsample_nearest1d.default", "upsample_nearest2d.default", "upsample_nearest3d.default",
]
# Kept by run_decompositions though not tagged core, with portable kernels: mode, nanmedian,
# histc, embedding_bag's inference form, and the complex ops of ExecuTorch's portable list
# (view_as_real becomes view_as_real_copy, as every view).
# torchao's Int8DynamicActivationInt8WeightConfig multiplies its int8 activations and weights
# with _int_mm (no decomposition).
EXTRA_ATEN_OPS += ["_int_mm.default"]
# Kept by run_decompositions (no decomposition) and called by vision models: timm's max and
# avg-max global pooling and attention blocks, ViTs resizing position embeddings (antialiased
# bicubic).
EXTRA_ATEN_OPS += ["adaptive_max_pool2d.default", "adaptive_max_pool3d.default",
                   "_upsample_bicubic2d_aa.default"]
# Math and linear-algebra ops torch has no decomposition for, which models call directly.
EXTRA_ATEN_OPS += ["exp2.default", "erfc.default", "lgamma.default", "digamma.default",
                   "i0.default", "angle.default", "fmax.default", "fmin.default", "gcd.default",
                   "lcm.default", "ldexp.Tensor", "addmv.default", "addbmm.default",
                   "tril_indices.default", "triu_indices.default"]
# Complex numbers as Llama's reference RoPE and spectral layers (torch.complex(re, im)) use them
# (view_as_complex becomes view_as_complex_copy, as every view).
EXTRA_ATEN_OPS += ["polar.default", "view_as_complex.default", "complex.default"]
# torch.fft's complex-to-complex transform (r2c and c2r are core ATen).
EXTRA_ATEN_OPS += ["_fft_c2c.default"]
# F.grid_sample on 5-D input (3-D warps).
EXTRA_ATEN_OPS += ["grid_sampler_3d.default"]
EXTRA_ATEN_OPS += ["mode.default", "nanmedian.default", "nanmedian.dim", "histc.default",
                   "_embedding_bag_forward_only.default", "view_as_real.default",
                   "_conj_physical.default"]

# torch.special functions, polygamma, nextafter and round(decimals=) (no decompositions).
EXTRA_ATEN_OPS += ["special_bessel_j0.default", "special_bessel_j1.default", "special_bessel_y0.default",
                   "special_bessel_y1.default", "special_modified_bessel_i0.default",
                   "special_modified_bessel_i1.default", "special_modified_bessel_k0.default",
                   "special_modified_bessel_k1.default", "special_scaled_modified_bessel_k0.default",
                   "special_scaled_modified_bessel_k1.default", "special_i0e.default", "special_i1.default",
                   "special_i1e.default", "special_erfcx.default", "special_ndtri.default", "special_zeta.default",
                   "polygamma.default", "nextafter.default", "round.decimals"]
# Random sampling run_decompositions keeps: torch.normal with tensor arguments, multinomial,
# randint.
EXTRA_ATEN_OPS += ["normal.Tensor_float", "normal.float_Tensor", "normal.Tensor_Tensor",
                   "normal.float_float", "multinomial.default", "randint.default", "randint.low"]
# Dense linear algebra torch has no decomposition for (geometry, Kalman filters, normalizing
# flows, Gaussian processes): LU-based solves, inverses and determinants, Cholesky, triangular
# solves. torch.linalg.inv / cholesky / solve / lu_factor export their *_ex op and an effectful
# _linalg_check_errors, which the frontend turns into the op's check_errors argument.
EXTRA_ATEN_OPS += ["linalg_inv_ex.default", "linalg_cholesky_ex.default", "_linalg_solve_ex.default",
                   "_linalg_det.default", "_linalg_slogdet.default", "linalg_solve_triangular.default",
                   "linalg_lu_factor_ex.default", "linalg_lu_solve.default", "cholesky.default",
                   "cholesky_solve.default", "cholesky_inverse.default", "triangular_solve.default"]
# Decompositions torch has none for either: torch.linalg.qr, eigh / eigvalsh and svd / svdvals
# (and the matrix norms and linalg.cond built on them) export these.
EXTRA_ATEN_OPS += ["linalg_qr.default", "_linalg_eigh.default", "_linalg_svd.default"]
# torch.linalg.pinv / pinverse (tolerances as tensors), from the SVD or, hermitian, eigh.
EXTRA_ATEN_OPS += ["linalg_pinv.atol_rtol_tensor"]

# Ops with data-dependent output sizes run_decompositions keeps (deduplication, histograms):
# torch.unique (flat and dim=), unique_consecutive, bincount; index_reduce (no decomposition).
EXTRA_ATEN_OPS += ["_unique2.default", "unique_dim.default", "unique_consecutive.default",
                   "bincount.default", "index_reduce.default"]

# Recurrent layers kept whole (pteron.export with dynamic_shapes: unrolled, their step count
# could not be dynamic). torch has no out-variant for them; pteron's kernels are these, which
# loop over the run-time number of steps.
RNN_OUT_VARIANTS = {
    "aten::lstm.input": "pteron::lstm.out(Tensor input, Tensor[] hx, Tensor[] params,"
    " bool has_biases, int num_layers, float dropout, bool train, bool bidirectional,"
    " bool batch_first, *, Tensor(a!) output, Tensor(b!) hy, Tensor(c!) cy)"
    " -> (Tensor(a!), Tensor(b!), Tensor(c!))",
    "aten::gru.input": "pteron::gru.out(Tensor input, Tensor hx, Tensor[] params, bool has_biases,"
    " int num_layers, float dropout, bool train, bool bidirectional, bool batch_first, *,"
    " Tensor(a!) output, Tensor(b!) hy) -> (Tensor(a!), Tensor(b!))",
    "aten::rnn_tanh.input": "pteron::rnn_tanh.out(Tensor input, Tensor hx, Tensor[] params,"
    " bool has_biases, int num_layers, float dropout, bool train, bool bidirectional,"
    " bool batch_first, *, Tensor(a!) output, Tensor(b!) hy) -> (Tensor(a!), Tensor(b!))",
    "aten::rnn_relu.input": "pteron::rnn_relu.out(Tensor input, Tensor hx, Tensor[] params,"
    " bool has_biases, int num_layers, float dropout, bool train, bool bidirectional,"
    " bool batch_first, *, Tensor(a!) output, Tensor(b!) hy) -> (Tensor(a!), Tensor(b!))",
}
EXTRA_ATEN_OPS += [key.split("::", 1)[1] for key in RNN_OUT_VARIANTS]

# Mixture-of-experts layers: rows [offs[g-1], offs[g]) of a 2-D input times expert g's matrix of
# a 3-D weight. aten::_grouped_mm has no out-variant in torch; pteron's kernel is this one.
# transformers::grouped_mm_fallback (EXTERNAL_SCHEMAS) is the same product: transformers' MoE
# layers export it for fp32 weights, where aten::_grouped_mm is bf16-only on torch's CPU.
GROUPED_MM_OUT_VARIANTS = {
    "aten::_grouped_mm.default": "pteron::_grouped_mm.out(Tensor self, Tensor mat2,"
    " Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None, *, Tensor(a!) out)"
    " -> Tensor(a!)",
}
EXTRA_ATEN_OPS += [key.split("::", 1)[1] for key in GROUPED_MM_OUT_VARIANTS]

# F.rrelu / nn.RReLU export rrelu_with_noise_functional (out and the noise it drew), which has no
# out-variant in torch; pteron's kernel is this one.
RRELU_OUT_VARIANTS = {
    "aten::rrelu_with_noise_functional.default": "pteron::rrelu_with_noise_functional.out("
    "Tensor self, Tensor noise, Scalar lower=0.125, Scalar upper=0.33333333333333331,"
    " bool training=False, Generator? generator=None, *, Tensor(a!) out, Tensor(b!) noise_out)"
    " -> (Tensor(a!), Tensor(b!))",
}
EXTRA_ATEN_OPS += [key.split("::", 1)[1] for key in RRELU_OUT_VARIANTS]

# torch._check_tensor_all exports _is_all_true (a bool tensor's elements all true, as a 0-d bool
# tensor) for the check's condition, which pteron checks at run time; torch has no out-variant.
IS_ALL_TRUE_OUT_VARIANTS = {
    "aten::_is_all_true.default": "pteron::_is_all_true.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
}
EXTRA_ATEN_OPS += [key.split("::", 1)[1] for key in IS_ALL_TRUE_OUT_VARIANTS]

# Every out-variant pteron defines for an op torch gives none.
PTERON_OUT_VARIANTS = {**RNN_OUT_VARIANTS, **GROUPED_MM_OUT_VARIANTS, **RRELU_OUT_VARIANTS, **IS_ALL_TRUE_OUT_VARIANTS}

# Ops pteron's ExecuTorch-compatible programs use that torch does not define: schema strings
# exactly as ExecuTorch declares them (exir/passes/dim_order_ops_registry.py and
# kernels/quantized/quantized.yaml).
EXTERNAL_SCHEMAS = [
    # pteron's run-time check of a size condition export asserts and the planned bounds do not
    # imply (torch._check on a data-dependent length, a view's divisibility): returns nothing,
    # so it is its own kernel form; `sources` are the tensors whose sizes it reads.
    "pteron::check_size(Tensor[] sources, SymInt lhs, SymInt rhs, str cmp, str message) -> ()",
    # torch.cond: runs the graph's branch subgraph `true_branch` or `false_branch` (indices for
    # ir::Graph::branch) on `operands`, by `pred`. No kernel: the program emitter writes it as
    # ExecuTorch's JumpFalse instructions around the two branches' own instructions.
    "pteron::cond(Tensor pred, Tensor[] operands, int true_branch, int false_branch) -> Tensor[]",
    # torch.ops.higher_order.while_loop: the branch subgraph `body` runs on the carried values
    # (and the additional inputs, read-only) while the subgraph `cond` returns true; the outputs
    # are the carried values at the end. Emitted as JumpFalse instructions around both graphs.
    "pteron::while_loop(Tensor[] carried, Tensor[] additional, int cond, int body) -> Tensor[]",
    # scan / map (map: no carry): the subgraph `combine` runs on the carry and row t of each of
    # `xs` (dim 0), t = 0, 1, ..., rows - 1 (a size of the inputs when dynamic); returns the final
    # carry, each result stacked over the rows, then one buffer per input the row is copied into.
    # Emitted as a loop of JumpFalse.
    "pteron::scan(Tensor[] init, Tensor[] xs, Tensor[] additional, int combine,"
    " SymInt rows) -> Tensor[]",
    # torchao's affine quantization primitives (torchao/quantization/quant_primitives.py), as
    # torchao 0.18 registers them: its LLM export (8da4w, int4/int8 weight-only) keeps them
    # after run_decompositions(); pteron's optimized library rewrites their patterns, and
    # portable kernels run what is left through out-variants of pteron's own (torchao has none).
    "torchao::dequantize_affine(Tensor input, SymInt[] block_size, Tensor scale,"
    " Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None,"
    " Scalar? quant_max=None, ScalarType output_dtype=6) -> Tensor",
    "torchao::quantize_affine(Tensor input, SymInt[] block_size, Tensor scale,"
    " Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None,"
    " Scalar? quant_max=None) -> Tensor",
    "torchao::choose_qparams_affine(Tensor? input, str mapping_type, SymInt[] block_size,"
    " ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None,"
    " float? eps=None, ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None,"
    " bool keepdim=False) -> (Tensor, Tensor)",
    "torchao::dequantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale,"
    " Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None,"
    " Scalar? quant_max=None, ScalarType output_dtype=6, *, Tensor(a!) out) -> Tensor(a!)",
    "torchao::quantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale,"
    " Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None,"
    " Scalar? quant_max=None, *, Tensor(a!) out) -> Tensor(a!)",
    "torchao::choose_qparams_affine.out(Tensor? input, str mapping_type, SymInt[] block_size,"
    " ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None,"
    " float? eps=None, ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None,"
    " bool keepdim=False, *, Tensor(a!) scale, Tensor(b!) zero_point)"
    " -> (Tensor(a!), Tensor(b!))",
    "dim_order_ops::_to_dim_order_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,"
    " Device? device=None, bool? pin_memory=None, bool non_blocking=False,"
    " int[]? dim_order=None) -> Tensor",
    "dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,"
    " int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)",
    "dim_order_ops::_empty_dim_order(int[] size, *, ScalarType? dtype=None, Layout? layout=None,"
    " Device? device=None, bool? pin_memory=None, int[]? dim_order=None) -> Tensor",
    "dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None,"
    " Tensor(a!) out) -> Tensor(a!)",
    "dim_order_ops::_clone_dim_order(Tensor self, *, bool non_blocking=False,"
    " int[]? dim_order=None) -> Tensor",
    "dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,"
    " int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale, int zero_point,"
    " int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::quantize_per_tensor.Tensor_out(Tensor input, Tensor scale,"
    " Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *,"
    " Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,"
    " int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None,"
    " Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::dequantize_per_tensor.Tensor_out(Tensor input, Tensor scale,"
    " Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *,"
    " ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::quantize_per_channel.out(Tensor input, Tensor scales,"
    " Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,"
    " Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::dequantize_per_channel.out(Tensor input, Tensor scales,"
    " Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,"
    " ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "quantized_decomposed::choose_qparams.Tensor_out(Tensor input, int quant_min, int quant_max,"
    " float eps, ScalarType dtype, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out)"
    " -> (Tensor(a!), Tensor(b!))",
    # ExecuTorch's LLM custom ops (extension/llm/custom_ops/custom_ops.py, as ExecuTorch 1.x
    # registers them), which its Llama exports call and pteron's portable kernels run.
    "llama::custom_sdpa(Tensor query, Tensor key, Tensor value, SymInt start_pos,"
    " Tensor? attn_mask=None, float drpout_p=0., bool is_causal=False, float? scale=None)"
    " -> Tensor",
    "llama::custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos,"
    " Tensor? attn_mask=None, float drpout_p=0., bool is_causal=False, float? scale=None, *,"
    " Tensor(a!) out) -> Tensor(a!)",
    "llama::update_cache(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor",
    "llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *,"
    " Tensor(b!) out) -> Tensor(b!)",
    # transformers' grouped product of its MoE experts (transformers/integrations/moe.py, as
    # transformers 5.x registers it; see GROUPED_MM_OUT_VARIANTS) and its out-variant, pteron's.
    "transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor",
    "transformers::grouped_mm_fallback.out(Tensor input, Tensor weight, Tensor offs, *,"
    " Tensor(a!) out) -> Tensor(a!)",
    # ExecuTorch's prim ops on symbolic sizes (exir/passes/executorch_prim_ops_registry.py); a
    # program calls them with their result appended (a, b, out).
    "executorch_prim::add.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::sub.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::mul.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::floordiv.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::mod.Scalar(SymInt a, SymInt b) -> SymInt",
    "executorch_prim::sym_max.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::sym_min.Scalar(Scalar a, Scalar b) -> Scalar",
    "executorch_prim::eq.Scalar(Scalar a, Scalar b) -> bool",
    "executorch_prim::gt.Scalar(Scalar a, Scalar b) -> bool",
    "executorch_prim::lt.Scalar(Scalar a, Scalar b) -> bool",
    "executorch_prim::ge.Scalar(Scalar a, Scalar b) -> bool",
    "executorch_prim::le.Scalar(Scalar a, Scalar b) -> bool",
    "executorch_prim::neg.Scalar(Scalar a) -> Scalar",
    # ExecuTorch's row copy of its map / scan loops (kernels/prim_ops/et_copy_index.cpp: copy_to,
    # copy_from, index; no out), which pteron's loops use too.
    "executorch_prim::et_copy_index.tensor(Tensor(a!) copy_to, Tensor copy_from, SymInt index) -> ()",
    # The call ExecuTorch's emitter writes for a memory.view (exir/emit/_emitter.py): no torch
    # schema exists; self, size, then the view's tensor.
    "executorch_prim::et_view(Tensor self, SymInt[] size) -> Tensor",
]

QUANTIZED_DECOMPOSED_OPS = [
    "quantize_per_tensor.default", "quantize_per_tensor.tensor", "dequantize_per_tensor.default",
    "dequantize_per_tensor.tensor", "quantize_per_channel.default",
    "dequantize_per_channel.default", "choose_qparams.tensor",
]

# Argument names an out-variant drops relative to its functional op (torchgen's TensorOptions).
TENSOR_OPTIONS = {"dtype", "layout", "device", "pin_memory"}

# c10::ScalarType / MemoryFormat / Layout numbering (what .pte files and kernels carry).
C10_DTYPE = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex32: 8,
    torch.complex64: 9, torch.complex128: 10, torch.bool: 11, torch.qint8: 12, torch.quint8: 13,
    torch.qint32: 14, torch.bfloat16: 15, torch.float8_e5m2: 23, torch.float8_e4m3fn: 24,
    torch.float8_e5m2fnuz: 25, torch.float8_e4m3fnuz: 26, torch.uint16: 27, torch.uint32: 28,
    torch.uint64: 29,
}
C10_MEMORY_FORMAT = {
    torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
    torch.channels_last_3d: 3,
}
C10_LAYOUT = {torch.strided: 0, torch.sparse_coo: 1}


def type_string(t):
    """TorchScript type -> the compact spelling op_schema.cpp parses ("int[2]?", "Tensor?[]")."""
    if isinstance(t, torch.OptionalType):
        return type_string(t.getElementType()) + "?"
    if isinstance(t, torch.ListType):
        return type_string(t.getElementType()) + "[]"
    name = str(t)
    return {"number": "Scalar", "SymInt": "int", "SymFloat": "float", "SymBool": "bool"}.get(
        name, name)


def arg_type_string(arg):
    s = type_string(arg.real_type)
    if arg.N is not None and "[]" in s:  # fixed-length list: int[2]
        s = s.replace("[]", f"[{arg.N}]", 1)
    return s


def default_json(value):
    if isinstance(value, float) and math.isinf(value):
        return json.dumps("inf" if value > 0 else "-inf")
    if isinstance(value, torch.dtype):
        return str(C10_DTYPE[value])
    if isinstance(value, torch.memory_format):
        return str(C10_MEMORY_FORMAT[value])
    if isinstance(value, torch.layout):
        return str(C10_LAYOUT[value])
    if isinstance(value, torch.device):
        return json.dumps(str(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(default_json(v) for v in value) + "]"
    return json.dumps(value)


def alias_string(alias_info):
    if alias_info is None:
        return ""
    return "|".join(sorted(alias_info.before_set)) + ("!" if alias_info.is_write else "")


def is_out_arg(arg):
    return arg.kwarg_only and arg.alias_info is not None and arg.alias_info.is_write


def is_out_variant(schema):
    return any(is_out_arg(a) for a in schema.arguments)


def is_view(schema):
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def mutates_inputs(schema):
    return any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def qualified(schema):
    overload = schema.overload_name or "default"
    return f"{schema.name}.{overload}"


def torch_schemas():
    """Every registered aten and quantized_decomposed overload, keyed by 'ns::name.overload'."""
    out = {}
    for schema in torch._C._jit_get_all_schemas():
        ns, name = schema.name.split("::", 1)
        if ns not in ("aten", "quantized_decomposed"):
            continue
        op = getattr(getattr(getattr(torch.ops, ns), name), schema.overload_name or "default")
        out[qualified(schema)] = (schema, torch.Tag.core in op.tags)
    for text in EXTERNAL_SCHEMAS + list(PTERON_OUT_VARIANTS.values()):
        schema = torch._C.parse_schema(text)
        out[qualified(schema)] = (schema, False)
    return out


def same_arg(a, b):
    return a.name == b.name and arg_type_string(a) == arg_type_string(b) and (
        a.kwarg_only == b.kwarg_only)


def find_out_variant(schema, schemas):
    """The out= overload of the same op whose inputs match `schema`'s (minus TensorOptions)."""
    prefix = schema.name + "."
    for key, (candidate, _) in schemas.items():
        if not key.startswith(prefix) or key[len(prefix):].count(".") or not is_out_variant(
                candidate):
            continue
        inputs = [a for a in candidate.arguments if not is_out_arg(a)]
        names = {a.name for a in inputs}
        wanted = [a for a in schema.arguments
                  if not (a.name in TENSOR_OPTIONS and a.name not in names)]
        if len(inputs) == len(wanted) and all(map(same_arg, inputs, wanted)):
            return candidate
    return None


def find_view_copy(schema, schemas):
    name = schema.name + "_copy." + (schema.overload_name or "default")
    entry = schemas.get(name)
    return entry[0] if entry else None


def select(schemas):
    """The functional schemas pteron cares about, plus out-variants and *_copy ops they imply."""
    wanted = {}
    for key, (schema, core) in schemas.items():
        if core and not is_out_variant(schema):
            wanted[key] = schema
    for short in EXTRA_ATEN_OPS:
        wanted["aten::" + short] = schemas["aten::" + short][0]
    for short in QUANTIZED_DECOMPOSED_OPS:
        key = "quantized_decomposed::" + short
        wanted[key] = schemas[key][0]
    for key, (schema, _) in schemas.items():
        if key.startswith(("dim_order_ops::", "torchao::", "llama::", "executorch_prim::",
                           "transformers::", "pteron::")) and (
                not is_out_variant(schema)):
            wanted[key] = schema

    rows, links = {}, {}
    pending = list(wanted.values())
    while pending:
        schema = pending.pop()
        key = qualified(schema)
        if key in rows:
            continue
        rows[key] = schema
        out = None if is_out_variant(schema) else find_out_variant(schema, schemas)
        if key in PTERON_OUT_VARIANTS:
            out = torch._C.parse_schema(PTERON_OUT_VARIANTS[key])
        copy = find_view_copy(schema, schemas) if is_view(schema) else None
        links[key] = (out, copy)
        pending += [s for s in (out, copy) if s is not None]
    return rows, links


def c_string(s):
    return json.dumps(s) if s is not None else "nullptr"


def write_inc(path, rows, links):
    keys = sorted(rows, key=lambda k: (k.split("::")[0] != "aten", k))
    lines = [
        "// Generated by compiler/ir/gen_op_schemas.py with torch "
        f"{torch.__version__}. Do not edit.",
        "// clang-format off",
        "// Each PTERON_OP row: qualified name, schema as torch prints it, flags, out-variant,",
        "// view-copy replacement; then its PTERON_ARG rows (name, type, alias, default as JSON,",
        "// kwarg-only) and PTERON_RET rows (name, type, alias); PTERON_END closes the op.",
    ]
    missing_out = []
    for key in keys:
        schema = rows[key]
        out, copy = links[key]
        flags = []
        if is_out_variant(schema):
            flags.append("kOutVariant")
        if is_view(schema):
            flags.append("kView")
        if mutates_inputs(schema) and not is_out_variant(schema):
            flags.append("kMutates")
        if not is_out_variant(schema) and out is None and schema.returns:
            missing_out.append(key)
        lines.append(
            f"PTERON_OP({c_string(key)}, {c_string(str(schema))}, "
            f"{' | '.join(flags) or '0'}, {c_string(qualified(out) if out else '')}, "
            f"{c_string(qualified(copy) if copy else '')})")
        for a in schema.arguments:
            default = "nullptr" if not a.has_default_value() else c_string(
                default_json(a.default_value))
            lines.append(
                f"  PTERON_ARG({c_string(a.name)}, {c_string(arg_type_string(a))}, "
                f"{c_string(alias_string(a.alias_info))}, {default}, "
                f"{'true' if a.kwarg_only else 'false'})")
        for r in schema.returns:
            lines.append(
                f"  PTERON_RET({c_string(r.name)}, {c_string(type_string(r.real_type))}, "
                f"{c_string(alias_string(r.alias_info))})")
        lines.append("PTERON_END()")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{path}: {len(rows)} schemas; functional ops without an out-variant: "
          f"{', '.join(missing_out) or 'none'}", file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_op_schemas.py OUTPUT.inc")
    schemas = torch_schemas()
    rows, links = select(schemas)
    write_inc(sys.argv[1], rows, links)


if __name__ == "__main__":
    main()
