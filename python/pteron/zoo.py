"""The model zoo from Python and the command line.

    python -m pteron.zoo list
    python -m pteron.zoo export resnet-8 -o resnet-8.pt2

`get(name)` gives (model in eval mode, example inputs tuple); `export(name, path)` writes the
core-ATen ExportedProgram (torch.export, run_decompositions, torch.export.save) that pteron's
compiler reads. The LLM entries (llama-110m, llama-1b, opt-125m-kv, tiny-stories) are KV-cache
decoders exported as transformers' convert_and_export_with_cache does, for `pteron generate`;
a model with a tokenizer (tiny-stories) also gets NAME.tokenizer.json next to the .pt2.
The models live in the repository's top-level `models/` package, installed
in the wheel as `pteron._models`.
"""

import argparse
import importlib.util
import shutil
import sys
import time
import warnings
from pathlib import Path

# torch 2.13's pytree pickling warns about its own LeafSpec on every export; not actionable here.
warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)

def _models():
    """The zoo's `models` package: pteron._models in an installed wheel; in a checkout, the
    top-level models/ (importable from the checkout's root, else loaded from beside python/)."""
    try:
        from pteron import _models as models
    except ImportError:
        try:
            import models
        except ModuleNotFoundError:
            models = _checkout_models()
    return models


def _checkout_models():
    init = Path(__file__).resolve().parents[2] / "models" / "__init__.py"
    if not init.exists():
        raise ModuleNotFoundError(f"pteron.zoo: the model zoo was not found (no pteron._models, no {init})")
    spec = importlib.util.spec_from_file_location("models", init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["models"] = module
    spec.loader.exec_module(module)
    return module


def names() -> list[str]:
    return list(_models().NAMES)


def get(name: str):
    """(module in eval mode, example inputs tuple) for a zoo model name."""
    return _models().build(name)


def _log(msg: str) -> None:
    print(f"[zoo] {msg}", file=sys.stderr, flush=True)


def token_metadata(model) -> dict:
    """The LLM metadata a model's Hugging Face config states and its graph does not:
    {"get_bos_id": id, "get_eos_ids": [ids]} from the first submodule with a `config` (a
    PreTrainedModel inside the exportable wrapper); {} for a model without one."""
    for module in model.modules():
        config = getattr(module, "config", None)
        if config is None or not hasattr(config, "eos_token_id"):
            continue
        out = {}
        if isinstance(getattr(config, "bos_token_id", None), int):
            out["get_bos_id"] = config.bos_token_id
        eos = config.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if eos:
            out["get_eos_ids"] = eos
        return out
    return {}


def export_program(name: str, log=_log, metadata: dict | None = None):
    """torch.export (non-strict) of a zoo model, decomposed to core ATen. A KV-cache decoder's
    token metadata (token_metadata) goes into `metadata` when given."""
    import torch

    t = time.perf_counter()
    model, inputs = get(name)
    if metadata is not None and _models().BY_NAME[name].export is not None:
        metadata.update(token_metadata(model))
    log(f"{name}: built in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    entry = _models().BY_NAME[name]
    if entry.export is not None:  # a KV-cache decoder: its own export (T dynamic)
        ep = entry.export(model, inputs)
    else:
        ep = torch.export.export(model, inputs, strict=False)
    log(f"{name}: torch.export in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    ep = ep.run_decompositions()
    log(f"{name}: run_decompositions in {time.perf_counter() - t:.1f} s")
    return ep


def export(name: str, path: str | Path, log=_log) -> Path:
    """Writes the zoo model's core-ATen ExportedProgram to path (.pt2). A KV-cache decoder's
    .pt2 also carries extra/constant_methods.json, its get_bos_id and get_eos_ids, which
    `pteron compile` writes into the program beside the metadata it derives from the graph."""
    import json

    import torch

    metadata = {}
    ep = export_program(name, log, metadata)
    path = Path(path)
    t = time.perf_counter()
    extra = {"constant_methods.json": json.dumps(metadata)} if metadata else None
    torch.export.save(ep, path, extra_files=extra)
    log(f"{name}: saved {path} ({path.stat().st_size / 1e6:.1f} MB) in "
        f"{time.perf_counter() - t:.1f} s")
    tok = tokenizer(name)
    if tok is not None:
        dest = tokenizer_path_for(path)
        shutil.copyfile(tok, dest)
        log(f"{name}: tokenizer {dest}")
    return path


def tokenizer(name: str) -> Path | None:
    """The zoo model's tokenizer.json (trained with it), or None for a model without one."""
    module = {"tiny-stories": "tiny_stories"}.get(name)
    if module is None:
        return None
    return getattr(_models(), module).tokenizer_path()


def tokenizer_path_for(pt2: str | Path) -> Path:
    """Where export() puts a model's tokenizer: NAME.tokenizer.json next to NAME.pt2 (compile
    NAME.pte into the same folder and `pteron generate NAME.pte --tokenizer NAME.tokenizer.json`)."""
    pt2 = Path(pt2)
    return pt2.with_name(pt2.stem + ".tokenizer.json")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pteron.zoo", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="names, inputs and outputs of the zoo models")
    exp = sub.add_parser("export", help="torch.export + run_decompositions + torch.export.save")
    exp.add_argument("name")
    exp.add_argument("-o", "--output", help="output .pt2 path (default NAME.pt2)")
    args = parser.parse_args(argv)

    models = _models()
    if args.cmd == "list":
        for e in models.ENTRIES:
            shapes = ", ".join("x".join(map(str, s)) for s in e.input_shapes)
            out = "x".join(map(str, e.output_shape))
            print(f"{e.name:18s} in {shapes:22s} out {out:10s} {e.summary}")
        return 0
    if args.name not in models.BY_NAME:
        print(f"error: unknown zoo model {args.name!r}; known: {', '.join(models.NAMES)}",
              file=sys.stderr)
        return 1
    export(args.name, args.output or f"{args.name}.pt2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
