"""Operator conformance against PyTorch's own op database (issue 17, part 3).

For one OpInfo of `torch.testing._internal.common_methods_invocations.op_db` and one dtype,
`run_case` exports a tiny module calling the op on PyTorch's sample inputs, checks that the
decomposition reaches core ATen, compiles it with pteron for each path (portable kernels,
optimized + portable, and each delegate backend in this build), runs it on pteron's runtime and
compares with eager. All samples of a case go into one program (one export, one compile per
path); when that batch does not export or compile, each sample is tried on its own, so one odd
sample does not hide the others.

Outcomes per path: "pass", "refused" (compile-time refusal, with its one-line reason),
"wrong" (numerics or shape mismatch, runtime error: a failing result), "not delegated" (a
delegate path whose partitioner kept nothing; its reason), and for the case as a whole "skip"
(no sample exports, or the decomposition leaves core ATen; with the reason).

Tolerances (`TOLERANCES`): float32 |got - want| <= atol * max(1, max|want|) + rtol * |want|
with atol = 1e-5 and rtol = 1e-4 (1e-4 and 1e-3 on delegates, which reorder sums and use FMA);
float16 atol = rtol = 1e-3 (2e-3 on delegates); integer and bool results exactly (but uint8
bilinear/bicubic resizes within 1, bicubic downscaling within 2, and float16 grid sampling
within 2e-2, `OP_TOLERANCES`,
each with torch's reason); NaN must
meet NaN and infinities the same infinity. Ops whose result is random or uninitialised
(nondeterministic_seeded tags, empty*) are checked for shape and dtype only, and say so.
"""

from __future__ import annotations

import os
import re
import tempfile
import traceback

import numpy as np
import torch
from torch.utils import _pytree as pytree

# Dtypes the suite exercises where the op supports them, all of which pteron's runtime and its
# Python binding handle (python/bindings/tensor_convert.cpp). complex64 reaches only the ops
# ExecuTorch runs on complex tensors and copies; the compiler refuses it elsewhere, by name.
FULL_DTYPES = (torch.float32, torch.int64, torch.int32, torch.bool, torch.float16, torch.int8, torch.uint8,
               torch.complex64)
# Delegates are checked on every op they claim: their cost rules (a lone elementwise op never
# repays a delegate call) are switched off for this process (compiler/partition/partitioner.cpp).
os.environ.setdefault("PTERON_IGNORE_COST_RULES", "1")
MAX_SAMPLES = 6  # per op and dtype: the first samples PyTorch lists (its smallest, usually)

KERNEL_PATHS = {"portable": ["portable"], "optimized": ["optimized", "portable"]}
DELEGATE_PATHS = {"xnnpack": ["xnnpack", "portable"], "vulkan": ["vulkan", "portable"]}

TOLERANCES = {  # dtype -> (atol of the output's scale, rtol) on the kernel paths
    torch.float32: (1e-5, 1e-4),
    torch.float16: (1e-3, 1e-3),
    torch.float64: (1e-7, 1e-7),
}
DELEGATE_TOLERANCES = {torch.float32: (1e-4, 1e-3), torch.float16: (2e-3, 2e-3), torch.float64: (1e-7, 1e-7)}
# Per-op exceptions, each with torch's reason: uint8 bilinear/bicubic resizes within 1 (on x86
# with AVX2, the machine eager runs on here, ATen resizes uint8 images of up to 4 channels with
# fixed-point weights and rounds differently from its generic float-weight path, which pteron's
# kernels follow and torch runs on Arm; bicubic downscaling within 2: there ATen's fixed-point
# path takes windows widened by the scale, not the four clamped taps); float16 grid sampling
# within 2e-2 (ATen's half-type fallback computes coordinates and weights in float16; pteron's
# kernel computes in float32 and rounds once). tests/kernels/test_upsample.py,
# kernels/portable/README.md and test_grid_sampler.py state the same.
_UINT8_RESIZE = {torch.uint8: (1, 0)}
_UINT8_BICUBIC = {torch.uint8: (2, 0)}
_HALF_ARITHMETIC = {torch.float16: (2e-2, 2e-2)}
OP_TOLERANCES = {
    "_upsample_bilinear2d_aa": _UINT8_RESIZE, "nn.functional.interpolate.bilinear": _UINT8_RESIZE,
    "nn.functional.interpolate.bicubic": _UINT8_BICUBIC, "nn.functional.upsample_bilinear": _UINT8_RESIZE,
    "grid_sampler_2d": _HALF_ARITHMETIC, "nn.functional.grid_sample": _HALF_ARITHMETIC,
    "grid_sampler_3d": _HALF_ARITHMETIC,
}
# Results that are random or uninitialised memory: compared by shape and dtype only.
UNINITIALISED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
VIEW_OR_COPY = {"view", "_to_copy", "clone", "alias", "lift_fresh_copy"}


def available_paths() -> dict[str, list[str]]:
    import pteron_native

    paths = dict(KERNEL_PATHS)
    have = set(pteron_native.available_backends())
    for name, backends in DELEGATE_PATHS.items():
        if backends[0] in have:
            paths[name] = backends
    return paths


def case_id(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def tolerances(op, delegate: bool) -> dict:
    """dtype -> (atol, rtol) for one OpInfo's outputs on a kernel or delegate path."""
    tol = dict(DELEGATE_TOLERANCES if delegate else TOLERANCES)
    tol.update(OP_TOLERANCES.get(case_id(op), {}))
    return tol


def dtypes_of(op, dtypes=FULL_DTYPES) -> list:
    supported = op.supported_dtypes("cpu")
    return [d for d in dtypes if d in supported]


_TENSOR = object()  # marks where a sample's tensor goes among its (non-tensor) leaves
_DECOMPOSITIONS = None


def _decompositions():
    """The default core-ATen table, built once per process. torch rebuilds it, and walks every
    operator namespace for CompositeImplicit ops twice, on each run_decompositions() call:
    two thirds of a small op's export time. That walk's result is documented as never
    modified, so it is computed once here too."""
    global _DECOMPOSITIONS
    if _DECOMPOSITIONS is None:
        import torch._export.utils as export_utils
        import torch.export.decomp_utils as decomp_utils
        import torch.export.exported_program as exported_program

        cia_ops = export_utils._collect_all_valid_cia_ops()
        for module in (export_utils, decomp_utils, exported_program):
            module._collect_all_valid_cia_ops = lambda: cia_ops
        # pteron.export's table: torch's default with pteron's ops kept whole and its
        # decompositions that follow ATen's kernels where torch's own do not.
        from pteron.lowering import decomposition_table

        _DECOMPOSITIONS = decomposition_table(torch.export.default_decompositions())
        _DECOMPOSITIONS.materialize()
    return _DECOMPOSITIONS.copy()


class _Batch(torch.nn.Module):
    """Calls `fn` once per sample; tensor leaves of the samples are the module's inputs."""

    def __init__(self, fn, samples):
        super().__init__()
        self.fn = fn
        self.layout = []  # per sample: (treespec, leaves with _TENSOR where an input goes)
        for s in samples:
            leaves, spec = pytree.tree_flatten((s.input, tuple(s.args), dict(s.kwargs)))
            self.layout.append((spec, [_TENSOR if isinstance(v, torch.Tensor) else v for v in leaves]))

    def forward(self, *tensors):
        outs, k = [], 0
        for spec, leaves in self.layout:
            vals = []
            for v in leaves:
                if v is _TENSOR:
                    vals.append(tensors[k])
                    k += 1
                else:
                    vals.append(v)
            inp, args, kwargs = pytree.tree_unflatten(vals, spec)
            result = self.fn(inp, *args, **kwargs)
            outs.extend(t for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor))
        return tuple(outs)


def _inputs(samples) -> list:
    out = []
    for s in samples:
        for v in pytree.tree_leaves((s.input, tuple(s.args), dict(s.kwargs))):
            if isinstance(v, torch.Tensor):
                out.append(v.detach().contiguous().clone())
    return out


# Export's bookkeeping around data-dependent sizes (nonzero's length): the compiler reads the
# sizes and drops the guards their bounds imply.
SIZE_BOOKKEEPING = {"sym_size", "_assert_scalar", "sym_constrain_range", "sym_constrain_range_for_size"}
# Export's dtype / layout assertions (x.to(...), x.float()): the compiler drops them too, so a
# graph holding one is no reason to skip an OpInfo.
EXPORT_ASSERTIONS = {"_assert_tensor_metadata", "_assert_async"}
_PTERON_KERNELS = None


def _pteron_runs(base: str) -> bool:
    """Whether pteron has a portable kernel for non-core aten op `base` (one that survives
    run_decompositions(), as mode or histc, or a view whose copy it runs, as view_as_real), or
    its own out-variant of one torch gives none (pteron::rrelu_with_noise_functional)."""
    global _PTERON_KERNELS
    if _PTERON_KERNELS is None:
        import pteron_native

        _PTERON_KERNELS = {k.split(".")[0] for k in pteron_native.registered_kernels()}
    return any(name in _PTERON_KERNELS for name in (f"aten::{base}", f"aten::{base}_copy", f"pteron::{base}"))


def _graph_problem(ep) -> tuple[str | None, bool]:
    """(why the graph is not core ATen or an op pteron runs, or None; whether its result is
    random/uninitialised)."""
    random = False
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        t = node.target
        if isinstance(t, torch._ops.OpOverload):
            base = t.__name__.split(".")[0]
            if torch.Tag.nondeterministic_seeded in t.tags or base in UNINITIALISED:
                random = True
            if (t.namespace == "aten" and torch.Tag.core not in t.tags and base not in VIEW_OR_COPY
                    and base not in SIZE_BOOKKEEPING and base not in EXPORT_ASSERTIONS
                    and not _pteron_runs(base)):
                return f"decomposition leaves non-core aten::{t.__name__}", random
            if t.namespace not in ("aten",):
                return f"decomposition leaves {t.namespace}::{t.__name__}", random
    return None, random


_NODE_PREFIX = re.compile(r"node '[^']*' \([^()]*(\([^()]*\))?[^()]*\): (\w[\w-]*: )?")


def _reason(text: str) -> str:
    """A refusal without the node name and source line (the same for every sample)."""
    return _NODE_PREFIX.sub("", str(text)).strip()[:300]


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    line = text[0] if text else type(e).__name__
    return (type(e).__name__ + ": " + line)[:300]


def _compare(got: np.ndarray, want: torch.Tensor, dtype_tol) -> str | None:
    """None when equal within tolerance, else what differs."""
    if want.dtype == torch.bfloat16:  # the runtime widens bfloat16 outputs to float32 (exactly)
        tol = dtype_tol.get(torch.bfloat16, (0.0, 2.0**-8))  # within one bfloat16 rounding
        return _compare(got, want.float(), {**dtype_tol, torch.float32: tol})
    want_np = want.detach().contiguous().numpy()
    if tuple(got.shape) != tuple(want_np.shape):
        return f"shape {list(got.shape)} != eager {list(want_np.shape)}"
    if got.dtype != want_np.dtype:
        return f"dtype {got.dtype} != eager {want_np.dtype}"
    if got.size == 0:
        return None
    if want.dtype.is_complex:  # real and imaginary parts as two float tensors
        parts = torch.view_as_real(want.detach().contiguous())
        return _compare(np.stack([got.real, got.imag], axis=-1), parts, dtype_tol)
    if want.dtype.is_floating_point:
        atol, rtol = dtype_tol.get(want.dtype, (1e-5, 1e-4))
        g, w = got.astype(np.float64), want_np.astype(np.float64)
        finite = np.isfinite(w)
        if not np.array_equal(np.isnan(g), np.isnan(w)):
            return f"NaN at {int(np.sum(np.isnan(g) != np.isnan(w)))} element(s) differ"
        inf = np.isinf(w)
        if not np.array_equal(g[inf], w[inf]):
            return "infinities differ"
        if not finite.any():
            return None
        scale = max(1.0, float(np.max(np.abs(w[finite]))))
        err = np.abs(g[finite] - w[finite])
        bound = atol * scale + rtol * np.abs(w[finite])
        if np.any(~np.isfinite(g[finite])) or np.any(err > bound):
            worst = int(np.argmax(err - bound))
            return (f"max |diff| {float(np.max(err)):.3g} (scale {scale:.3g}) at flat {worst}: "
                    f"got {g[finite][worst]!r}, eager {w[finite][worst]!r}")
        return None
    if want.dtype in dtype_tol:  # an integer tolerance (absolute) stated for this op
        atol = dtype_tol[want.dtype][0]
        bad = int(np.sum(np.abs(got.astype(np.int64) - want_np.astype(np.int64)) > atol))
        return f"{bad} of {got.size} element(s) differ by more than {atol}" if bad else None
    if not np.array_equal(got, want_np):
        bad = int(np.sum(got != want_np))
        return f"{bad} of {got.size} element(s) differ"
    return None


def _eager(module, inputs):
    with torch.no_grad():
        return module(*[t.clone() for t in inputs])


def _export(samples, fn):
    module = _Batch(fn, samples)
    inputs = _inputs(samples)
    ep = torch.export.export(module, tuple(inputs), strict=False)
    ep = ep.run_decompositions(_decompositions())
    return module, inputs, ep


def _run_path(pt2_path, backends, inputs, want, random, tolerances, delegate):
    import pteron
    import pteron_native

    try:
        program = pteron.to_edge_transform_and_lower(pt2_path, kernels=backends)
    except Exception as e:  # noqa: BLE001 - a refusal is a result, not an error
        if isinstance(e, pteron.CompileError):
            return {"outcome": "refused", "reason": _reason(_short(e).removeprefix("CompileError: "))}
        return {"outcome": "wrong", "reason": "compiler raised " + _short(e)}
    if delegate and not program.report["delegated_regions"]:
        refusals = program.report.get("refusals") or []
        reason = refusals[0] if refusals else "no region claimed"
        return {"outcome": "not delegated", "reason": _reason(reason)}
    pteron_native.set_kernel_libraries([b for b in backends if b in ("optimized", "portable")])
    try:
        method = program.load().load_method("forward")
        kernels = sorted(set(method.instruction_names()))
        outs = method.execute([t.numpy() for t in inputs])
    except Exception as e:  # noqa: BLE001 - runtime errors are wrong results
        return {"outcome": "wrong", "reason": "runtime: " + _short(e)}
    if len(outs) != len(want):
        return {"outcome": "wrong", "reason": f"{len(outs)} outputs, eager has {len(want)}"}
    for i, (g, w) in enumerate(zip(outs, want)):
        g = np.asarray(g)
        if random:
            if tuple(g.shape) != tuple(w.shape):
                return {"outcome": "wrong", "reason": f"output {i}: shape {list(g.shape)} != {list(w.shape)}"}
            continue
        why = _compare(g, w, tolerances)
        if why:
            return {"outcome": "wrong", "reason": f"output {i}: {why}", "kernels": kernels}
    result = {"outcome": "pass", "kernels": kernels}
    if random:
        result["note"] = "random or uninitialised result: shape and dtype checked"
    return result


def _merge(per_unit: list[dict]) -> dict:
    """One outcome per path from the outcomes of several programs (samples tried alone)."""
    wrong = [r for r in per_unit if r["outcome"] == "wrong"]
    if wrong:
        return dict(wrong[0], samples=f"{len(wrong)}/{len(per_unit)} wrong")
    passed = [r for r in per_unit if r["outcome"] == "pass"]
    if passed:
        kernels = sorted({k for r in passed for k in r.get("kernels", [])})
        r = {"outcome": "pass", "kernels": kernels, "samples": f"{len(passed)}/{len(per_unit)}"}
        if len(passed) < len(per_unit):
            other = next(r for r in per_unit if r["outcome"] != "pass")
            r["partial"] = f"{other['outcome']}: {other['reason']}"
        return r
    return dict(per_unit[0], samples=f"0/{len(per_unit)}")


def run_case(op, dtype, paths: dict[str, list[str]], max_samples: int = MAX_SAMPLES) -> dict:
    """Everything about one (OpInfo, dtype): {"skip": reason} or {"paths": {...}, ...}."""
    try:
        samples = []
        generator = op.sample_inputs("cpu", dtype, requires_grad=False)
        for s in generator:
            samples.append(s)
            if len(samples) >= max_samples:
                break
        if hasattr(generator, "close"):
            generator.close()  # now, not later inside some export's tracing
    except Exception as e:  # noqa: BLE001
        return {"skip": "sample inputs: " + _short(e)}
    if not samples:
        return {"skip": "no sample inputs"}
    fn = op.op

    units = []  # (module, inputs, ep): the batch, or the samples one by one
    export_errors = []
    try:
        units.append(_export(samples, fn))
    except Exception as e:  # noqa: BLE001
        export_errors.append(_short(e))
    batch = bool(units)
    if not batch and len(samples) > 1:
        for s in samples:
            try:
                units.append(_export([s], fn))
            except Exception as e:  # noqa: BLE001
                export_errors.append(_short(e))
    if not units:
        return {"skip": "export: " + export_errors[0]}

    problems = [_graph_problem(ep) for _, _, ep in units]
    core = [(u, p[1]) for u, p in zip(units, problems) if p[0] is None]
    if not core:
        return {"skip": problems[0][0]}
    ops_in_graph = sorted({n.target.__name__ for _, _, ep in units for n in ep.graph.nodes
                           if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)})

    with tempfile.TemporaryDirectory(prefix="pteron-opdb-") as tmp:
        prepared = []
        for i, ((module, inputs, ep), random) in enumerate(core):
            try:
                want = list(_eager(module, inputs))
            except Exception as e:  # noqa: BLE001
                return {"skip": "eager: " + _short(e)}
            path = os.path.join(tmp, f"u{i}.pt2")
            try:
                torch.export.save(ep, path)
            except Exception as e:  # noqa: BLE001
                return {"skip": "torch.export.save: " + _short(e)}
            prepared.append((path, inputs, want, random))

        results = {}
        for name, backends in paths.items():
            delegate = name in DELEGATE_PATHS
            if delegate and dtype != torch.float32:
                results[name] = {"outcome": "not delegated", "reason": "fp32-only delegate"}
                continue
            tol = tolerances(op, delegate)
            per_unit = []
            for path, inputs, want, random in prepared:
                try:
                    per_unit.append(_run_path(path, backends, inputs, want, random, tol, delegate))
                except Exception as e:  # noqa: BLE001
                    per_unit.append({"outcome": "wrong", "reason": "suite: " + _short(e),
                                     "trace": traceback.format_exc(limit=3)})
            # A batch refused as a whole: try each sample alone (one odd sample must not hide
            # the others), when the batch had more than one.
            # A missing kernel refuses every sample alike: not worth the exports.
            if (batch and len(samples) > 1 and per_unit[0]["outcome"] == "refused"
                    and name == "portable" and "have no kernel" not in per_unit[0]["reason"]):
                alone = []
                for s in samples:
                    try:
                        module, inputs, ep = _export([s], fn)
                    except Exception:  # noqa: BLE001
                        continue
                    problem, random = _graph_problem(ep)
                    if problem:
                        continue
                    p = os.path.join(tmp, f"alone{len(alone)}.pt2")
                    try:
                        torch.export.save(ep, p)
                    except Exception:  # noqa: BLE001
                        continue
                    alone.append((p, inputs, list(_eager(module, inputs)), random))
                if alone:
                    units_alone = [_run_path(p, backends, i, w, r, tol, delegate) for p, i, w, r in alone]
                    if any(u["outcome"] != "refused" for u in units_alone):
                        prepared = alone  # later paths use the samples one by one too
                        per_unit = units_alone
            results[name] = _merge(per_unit)
    return {"paths": results, "samples": len(samples), "programs": len(prepared), "aten_ops": ops_in_graph}


def _samples(op, dtype, max_samples):
    samples = []
    generator = op.sample_inputs("cpu", dtype, requires_grad=False)
    for s in generator:
        samples.append(s)
        if len(samples) >= max_samples:
            break
    if hasattr(generator, "close"):
        generator.close()
    return samples


def _eager_per_sample(fn, samples, inputs_per_sample):
    out = []
    for s, inputs in zip(samples, inputs_per_sample):
        out.append(list(_eager(_Batch(fn, [s]), inputs)))
    return out


def run_op(op, dtypes, paths: dict[str, list[str]], max_samples: int = MAX_SAMPLES) -> dict:
    """All dtypes of one OpInfo: {dtype name: run_case-style result}.

    The samples of every dtype go into one program for the kernel paths (an export costs far
    more than a compile); outputs are compared per sample, so a mismatch is charged to its
    dtype. A compile refusal for missing kernels applies to every dtype alike; any other
    refusal, a runtime error, or a batch that does not export falls back to one program per
    dtype (run_case). Delegate paths run the float32 samples only (both delegates are fp32).
    """
    kernel_paths = {k: v for k, v in paths.items() if k not in DELEGATE_PATHS}
    delegate_paths = {k: v for k, v in paths.items() if k in DELEGATE_PATHS}
    names = {d: str(d).removeprefix("torch.") for d in dtypes}
    results: dict[str, dict] = {}
    tagged = []  # (dtype, sample)
    for d in dtypes:
        if d.is_complex:  # its own program: a complex refusal must not be charged to the others
            continue
        try:
            ss = _samples(op, d, max_samples)
        except Exception as e:  # noqa: BLE001
            results[names[d]] = {"skip": "sample inputs: " + _short(e)}
            continue
        if not ss:
            results[names[d]] = {"skip": "no sample inputs"}
        tagged += [(d, s) for s in ss]
    live = [d for d in dtypes if names[d] not in results and not d.is_complex]
    fallback_paths: dict = {}  # dtype -> paths to redo one dtype at a time
    batch_ok = False
    if live and kernel_paths:
        samples = [s for _, s in tagged]
        try:
            module, inputs, ep = _export(samples, op.op)
            problem, random = _graph_problem(ep)
            batch_ok = problem is None
        except Exception:  # noqa: BLE001
            batch_ok = False
    if batch_ok:
        aten = sorted({n.target.__name__ for n in ep.graph.nodes
                       if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)})
        per_sample_inputs = [_inputs([s]) for s in samples]
        try:
            wants = _eager_per_sample(op.op, samples, per_sample_inputs)
        except Exception:  # noqa: BLE001
            batch_ok = False
    if batch_ok:
        for d in live:
            results[names[d]] = {"paths": {}, "samples": sum(1 for t, _ in tagged if t is d), "programs": 1,
                                 "aten_ops": aten, "batched": True}
        with tempfile.TemporaryDirectory(prefix="pteron-opdb-") as tmp:
            path = os.path.join(tmp, "all.pt2")
            try:
                torch.export.save(ep, path)
            except Exception:  # noqa: BLE001 - torch cannot serialize it: one dtype at a time
                kernel_paths_left = kernel_paths
            else:
                kernel_paths_left = {}
            for d in live if kernel_paths_left else ():
                fallback_paths.setdefault(d, {}).update(kernel_paths_left)
            for name, backends in (kernel_paths if not kernel_paths_left else {}).items():
                verdict = _run_batch(path, backends, inputs, tagged, wants, random, tolerances(op, False))
                for d in live:
                    r = verdict.get(d)
                    if r is None:
                        fallback_paths.setdefault(d, {})[name] = backends
                    else:
                        results[names[d]]["paths"][name] = r
    else:
        fallback_paths = {d: dict(kernel_paths) for d in live}
    for d in dtypes:
        if d.is_complex and kernel_paths:
            fallback_paths[d] = dict(kernel_paths)
    live += [d for d in dtypes if d.is_complex]
    for d, redo in fallback_paths.items():
        r = run_case(op, d, redo, max_samples)
        if "skip" in r:
            results[names[d]] = r
            continue
        prev = results.get(names[d])
        if prev is None or "paths" not in prev:
            results[names[d]] = r
        else:
            prev["paths"].update(r["paths"])
            prev["batched"] = False
    if delegate_paths:
        for d in live:
            res = results.get(names[d])
            if res is None or "paths" not in res:
                continue
            if d != torch.float32:
                for name in delegate_paths:
                    res["paths"][name] = {"outcome": "not delegated", "reason": "fp32-only delegate"}
                continue
            r = run_case(op, d, delegate_paths, max_samples)
            for name in delegate_paths:
                res["paths"][name] = r["paths"][name] if "paths" in r else {"outcome": "skip", "reason": r["skip"]}
    for d in dtypes:
        results.setdefault(names[d], {"skip": "no result"})
    return results


def _run_batch(pt2_path, backends, inputs, tagged, wants, random, tol):
    """{dtype: outcome} for a program holding every dtype's samples; a dtype left out means
    "retry that dtype alone" (the program's failure cannot be charged to one dtype)."""
    import pteron
    import pteron_native

    dtypes = list(dict.fromkeys(d for d, _ in tagged))
    try:
        program = pteron.to_edge_transform_and_lower(pt2_path, kernels=backends)
    except Exception as e:  # noqa: BLE001
        if isinstance(e, pteron.CompileError) and "have no kernel" in str(e):
            r = {"outcome": "refused", "reason": _reason(_short(e).removeprefix("CompileError: "))}
            return {d: dict(r) for d in dtypes}
        return {}
    pteron_native.set_kernel_libraries([b for b in backends if b in ("optimized", "portable")])
    try:
        method = program.load().load_method("forward")
        kernels = sorted(set(method.instruction_names()))
        outs = method.execute([t.numpy() for t in inputs])
    except Exception:  # noqa: BLE001
        return {}
    if len(outs) != sum(len(w) for w in wants):
        return {}
    verdict = {d: {"outcome": "pass", "kernels": kernels} for d in dtypes}
    k = 0
    for (d, _), want in zip(tagged, wants):
        for w in want:
            g = np.asarray(outs[k])
            k += 1
            if verdict[d]["outcome"] != "pass":
                continue
            if random:
                if tuple(g.shape) != tuple(w.shape):
                    verdict[d] = {"outcome": "wrong", "kernels": kernels,
                                  "reason": f"shape {list(g.shape)} != eager {list(w.shape)}"}
                continue
            why = _compare(g, w, tol)
            if why:
                verdict[d] = {"outcome": "wrong", "reason": why, "kernels": kernels}
    if random:
        for v in verdict.values():
            if v["outcome"] == "pass":
                v["note"] = "random or uninitialised result: shape and dtype checked"
    return verdict
