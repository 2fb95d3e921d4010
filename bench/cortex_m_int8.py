"""The four MLPerf Tiny models quantized to INT8 as Cortex-M firmware under QEMU, one row per core.

Cores: the Cortex-M55 (MPS3 AN547, MVE paths), the Cortex-M7 (MPS2 AN500, DSP paths) and the
Cortex-M4 (MPS2 AN386, DSP paths). For each model: export (pteron.zoo), then for each core
`pteron compile --target <core's target> --quantize cortex-m --int8-io` calibrated on 32 seeded
random inputs (the MLPerf Tiny data sets are not available offline; the zoo models have seeded
weights), then `pteron firmware --run` twice, with the cortex_m kernels' vector paths (MVE or
DSP) and with their scalar reference alone (`--kernel-path scalar`), each compared bit for bit
with `pteron run` on the host for the same int8 input, and the host's outputs of every core's
program with each other. Measured: RAM
(arenas incl. the planned kernel scratch, method memory, stack high-water mark, .data/.bss, and
what the ELF reserves when built with `--trim`),
code flash by origin from the linker map (bench/firmware_map.py: runtime core, kernels,
firmware main/platform, libc), total flash, exact instructions per inference
(tools/qemu_icount), MACs (models/README.md, MLPerf Tiny) per instruction. Quantization quality against the
fp32 program on 100 other seeded random inputs on the host: top-1 agreement for the
classifiers, relative L2 error of the output for fc-autoencoder.

Then digits-cnn's task accuracy in firmware: the trained model exported with the 300 held-out
digits as one batch, fp32 and int8 (calibrated on the other 60 held-out digits), each built as
firmware and run once under QEMU; accuracy against the labels.

    python bench/cortex_m_int8.py [--pteron build/tools/cli/pteron] [--models ds-cnn ...]
                                  [--cores m55 m7 m4]

Writes bench/results/mlperf_tiny_cortex_m.json and .md (with the TFLite Micro + CMSIS-NN
columns where bench/results/mlperf_tiny_peer.json, from `make bench-cortex-m-peer`, has them).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cortex_m import MODELS, REPO, RESULTS, TARGET  # noqa: E402

# Core: (target file, vector path of the int8 kernels).
CORES = {
    "m55": ("cortex-m55-an547", "MVE"),
    "m7": ("cortex-m7-an500", "DSP"),
    "m4": ("cortex-m4-an386", "DSP"),
}
from firmware_map import code_by_component  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "build" / "python"), str(REPO / "python")])}
RUNTIME_CODE_GOAL = 52_168


def sh(*args, timeout=1800):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                            check=False, env=ENV)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{result.stderr}{result.stdout[-2000:]}")
    return result.stdout


def quantize(x: np.ndarray, q: dict) -> np.ndarray:
    return np.clip(np.round(x / q["scale"]) + q["zero_point"], -128, 127).astype(np.int8)


def dequantize(x: np.ndarray, q: dict) -> np.ndarray:
    return (x.astype(np.float32) - q["zero_point"]) * q["scale"]


def host_outputs(pte: Path, inputs: list[np.ndarray]) -> np.ndarray:
    """Runs the program on the host for each input (pteron's Python runtime), stacked outputs."""
    code = (
        "import sys, numpy as np, pteron.runtime as rt\n"
        "m = rt.load(sys.argv[1]).load_method()\n"
        "xs = np.load(sys.argv[2])['x']\n"
        "np.save(sys.argv[3], np.stack([np.asarray(m(x)[0]) for x in xs]))\n")
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp) / "x.npz", x=np.stack(inputs))
        sh(sys.executable, "-c", code, pte, Path(tmp) / "x.npz", Path(tmp) / "y.npy")
        return np.load(Path(tmp) / "y.npy")


def firmware(pteron: str, target: str, pte: Path, elf: Path, inputs: Path, path: str,
             *extra) -> tuple[dict, np.ndarray]:
    out = elf.with_suffix(".out.npz")
    report = json.loads(sh(pteron, "firmware", pte, "--target", target, "-o", elf, "--run", "--inputs", inputs,
                           "--outputs", out, "--kernel-path", path, "--json", *extra))
    return report, np.load(out)["output_0"]


def measure(pteron: str, name: str, cores: list[str], work: Path) -> list[dict]:
    shape, macs = MODELS[name]
    pt2, fp32 = work / f"{name}.pt2", work / f"{name}.fp32.pte"
    print(f"[{name}] export", flush=True)
    sh(sys.executable, "-m", "pteron.zoo", "export", name, "-o", pt2)
    calibration = work / f"{name}.cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((32, *shape)).astype(np.float32))
    sh(pteron, "compile", pt2, "-o", fp32, "--target", "host")
    xs = list(np.random.default_rng(2).standard_normal((100, *shape)).astype(np.float32))
    rows, quality, host_first = [], None, None
    for core in cores:
        target, vector = CORES[core]
        pte = work / f"{name}.{core}.pte"
        print(f"[{name}] {core}: quantize, compile, firmware ({vector}, scalar) under QEMU", flush=True)
        compiled = json.loads(sh(pteron, "compile", pt2, "-o", pte, "--target", target, "--quantize", "cortex-m",
                                 "--calibration", calibration, "--int8-io", "--json"))
        budget = compiled["budget"]
        qin, qout = (next(q for q in compiled["quantize"]["int8_io"] if q["kind"] == kind)
                     for kind in ("input", "output"))
        x8 = quantize(xs[0], qin)
        if quality is None:  # int8 vs fp32 on the host: the same numerics on every core
            ref = host_outputs(fp32, xs)
            got = dequantize(host_outputs(pte, [quantize(x, qin) for x in xs]), qout)
            quality = {"samples": len(xs)}
            if name == "fc-autoencoder":
                quality["metric"] = "relative L2 error of the output vs fp32"
                quality["value"] = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            else:
                quality["metric"] = "top-1 agreement with fp32"
                quality["value"] = float(np.mean(got.reshape(len(xs), -1).argmax(1) == ref.reshape(len(xs), -1).argmax(1)))
        inputs = work / f"{name}.{core}.in.npz"
        np.savez(inputs, input_0=x8)
        host = host_outputs(pte, [x8])[0]
        host_first = host if host_first is None else host_first
        simd, simd_out = firmware(pteron, target, pte, work / f"{name}.{core}.elf", inputs, "simd", "--trim")
        scalar, scalar_out = firmware(pteron, target, pte, work / f"{name}.{core}.scalar.elf", inputs, "scalar")
        code = code_by_component(str(work / f"{name}.{core}.elf.build" / "app.map"))
        m, sizes = simd["measured"], simd["elf_sizes"]
        rows.append({
            "model": name, "core": core, "target": target, "vector_path": vector, "dtype": "int8",
            "kernels": simd["kernels"],
            "ram_estimate_bytes": budget["ram"], "ram_measured_bytes": m["ram"],
            "ram_reserved_trimmed_bytes": sizes["ram_reserved"],
            "arena_bytes": m["arenas"], "kernel_scratch_bytes": compiled["memory"].get("kernel_scratch_bytes", 0),
            "runtime_scratch_bytes": m["scratch"], "method_bytes": m["method"],
            "stack_high_water_bytes": m["stack_high_water"], "stack_reserved_bytes": budget["stack"],
            "static_state_bytes": m["state"], "heap_bytes": m["heap"],
            "code_flash_bytes": sizes["code_flash"], "code_estimate_bytes": budget["code"],
            "code_by_component": code, "program_bytes": sizes["program_flash"], "total_flash_bytes": sizes["flash"],
            "scalar_code_flash_bytes": scalar["elf_sizes"]["code_flash"],
            "instructions": m["instructions"], "instructions_scalar": scalar["measured"]["instructions"],
            "vector_speedup": scalar["measured"]["instructions"] / m["instructions"],
            "macs": macs, "macs_per_instruction": macs / m["instructions"],
            "macs_per_instruction_scalar": macs / scalar["measured"]["instructions"],
            "bit_exact_vs_host": host.tobytes() == simd_out.tobytes() and host.tobytes() == scalar_out.tobytes(),
            "bit_exact_across_cores": host.tobytes() == host_first.tobytes(),
            "quality": quality,
        })
    return rows


def digits_accuracy(pteron: str, work: Path) -> dict:
    """digits-cnn fp32 and int8 on the 300 held-out digits, each run as one batch in firmware."""
    import torch

    sys.path.insert(0, str(REPO / "python"))
    from pteron import zoo

    zoo.names()
    from models import digits_cnn

    print("[digits-cnn] fp32 and int8 firmware on the held-out digits", flush=True)
    images, labels = digits_cnn.load_test_split()
    calibration, test, labels = images[:60], images[60:], labels[60:].numpy()
    model, _ = zoo.get("digits-cnn")
    ep = torch.export.export(model.eval(), (test.clone(),), strict=False).run_decompositions()
    pt2 = work / "digits300.pt2"
    torch.export.save(ep, pt2)
    cal = work / "digits300.cal.npz"
    np.savez(cal, input_0=np.resize(calibration.numpy(), (1, *test.shape)))
    row = {"images": len(labels)}
    for kind in ("fp32", "int8"):
        pte = work / f"digits300.{kind}.pte"
        args = ["--quantize", "cortex-m", "--calibration", cal, "--int8-io"] if kind == "int8" else []
        compiled = json.loads(sh(pteron, "compile", pt2, "-o", pte, "--target", TARGET, "--json", *args))
        x = test.numpy()
        if kind == "int8":
            x = quantize(x, next(q for q in compiled["quantize"]["int8_io"] if q["kind"] == "input"))
        inputs = work / f"digits300.{kind}.in.npz"
        np.savez(inputs, input_0=x)
        report, out = firmware(pteron, TARGET, pte, work / f"digits300.{kind}.elf", inputs, "simd")
        row[f"{kind}_accuracy"] = float(np.mean(out.argmax(1) == labels))
        row[f"{kind}_instructions"] = report["measured"]["instructions"]
        row[f"{kind}_ram_measured_bytes"] = report["measured"]["ram"]
    with torch.no_grad():
        row["torch_fp32_accuracy"] = float(np.mean(model(test).argmax(1).numpy() == labels))
    return row


def peer_rows() -> dict:
    """TFLite Micro + CMSIS-NN per (model, core), from `make bench-cortex-m-peer`, if it has been run."""
    path = RESULTS / "mlperf_tiny_peer.json"
    if not path.exists():
        return {}
    return {(r["model"], r["core"]): r for r in json.loads(path.read_text())["peer"]}


def markdown(rows: list[dict], digits: dict | None, peers: dict) -> str:
    kib = lambda b: f"{b / 1024:.1f}"  # noqa: E731
    lines = [
        "# MLPerf Tiny INT8 on Cortex-M55, Cortex-M7 and Cortex-M4 (QEMU), cortex_m kernels",
        "",
        "`make bench-cortex-m` (bench/cortex_m_int8.py). Models quantized by `pteron compile --target <core> --quantize "
        "cortex-m --int8-io` (calibrated on 32 seeded random inputs: the MLPerf Tiny data sets are not "
        "available offline), built by `pteron firmware` (selective build: only the program's kernels) and "
        "run under qemu-system-arm: the M55 on `mps3-an547` (MVE paths), the M7 on `mps2-an500` and the M4 on "
        "`mps2-an386` (DSP paths: SMLAD); scalar = the same kernels built without their vector paths.",
        "",
        "- RAM measured = arenas (activations and the kernels' planned scratch) + method memory used + "
        "stack high-water mark + .data/.bss (static runtime state, kernel table, newlib) + newlib's heap in use; "
        "estimate = `pteron compile --target` before building (stack counted at its reserved 16 KiB, "
        "method memory as measured on the 64-bit host); reserved = every RAM section of the ELF built with "
        "`pteron firmware --trim` (method memory as used on the device, stack = high-water mark + 25% + "
        "1 KiB, newlib's heap as the first run used it).",
        "- Runtime code = code flash linked from libpteron_runtime.a (program loader and verifier, method, "
        "allocators, kernel registry, EValue/Tensor, errors), from the linker map; kernels, the firmware "
        "main/platform layer and newlib are counted apart.",
        "- Instructions: exact count per inference (tools/qemu_icount); MACs: models/README.md (MLPerf Tiny).",
        "- Bit-exact: the vector and scalar builds' outputs equal `pteron run` on the host, and the host outputs "
        "of every core's program are equal.",
        "- TFLM columns: TFLite Micro + CMSIS-NN on the MLPerf Tiny reference .tflite files, same QEMU and "
        "instruction counting (`make bench-cortex-m-peer`, bench/results/mlperf_tiny_peer.md); RAM = arena in "
        "use + .data/.bss + stack high-water mark + heap.",
        "",
        "| model | core | RAM KiB | arena | method | static | stack | RAM reserved | runtime code B "
        "| code flash KiB (kernels) | instructions | scalar | speed-up | MACs/instr | TFLM instructions | TFLM RAM KiB "
        "| bit-exact | int8 vs fp32 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["code_by_component"]
        q = r["quality"]
        quality = (f"rel. L2 err {q['value']:.3f}" if "L2" in q["metric"]
                   else f"top-1 agree {100 * q['value']:.0f}%")
        peer = peers.get((r["model"], r["core"]))
        tflm = (f"{peer['instructions']:,} | {kib(peer['ram_bytes'])}" if peer else "- | -")
        exact = r["bit_exact_vs_host"] and r["bit_exact_across_cores"]
        lines.append(
            f"| {r['model']} | {r['core']} {r['vector_path']} | {kib(r['ram_measured_bytes'])} | {kib(r['arena_bytes'])} | "
            f"{kib(r['method_bytes'])} | {kib(r['static_state_bytes'])} | {kib(r['stack_high_water_bytes'])} | "
            f"{kib(r['ram_reserved_trimmed_bytes'])} | {c['runtime']:,} | "
            f"{kib(r['code_flash_bytes'])} ({kib(c['kernels'])}) | {r['instructions']:,} | "
            f"{r['instructions_scalar']:,} | {r['vector_speedup']:.1f}x | "
            f"{r['macs_per_instruction']:.2f} | {tflm} | {'yes' if exact else 'NO'} | {quality} |")
    lines += ["", "Goals: fewer instructions than TFLite Micro + CMSIS-NN and no more RAM, on every model and core; "
              "runtime code < 52,168 B (ExecuTorch's core-runtime budget); outputs bit-exact between the scalar, "
              "DSP and MVE builds and the host.", ""]
    for r in rows:
        peer = peers.get((r["model"], r["core"]))
        goals = [f"runtime code {'<' if r['code_by_component']['runtime'] < RUNTIME_CODE_GOAL else '>='} 52,168 B"]
        if peer:
            goals.append(f"instructions {r['instructions'] / peer['instructions']:.2f}x TFLM's")
            goals.append(f"RAM {r['ram_measured_bytes'] / peer['ram_bytes']:.2f}x TFLM's")
        lines.append(f"- {r['model']} on {r['core']}: " + ", ".join(goals))
    if digits:
        lines += ["", "## digits-cnn task accuracy in firmware (Cortex-M55)", "",
                  f"The trained digits-cnn on the {digits['images']} held-out digits, one batch per firmware run "
                  "under QEMU (int8 calibrated on the other 60 held-out digits):", "",
                  "| program | accuracy | instructions | RAM KiB measured |", "|---|---|---|---|"]
        for kind in ("fp32", "int8"):
            lines.append(f"| {kind} | {100 * digits[f'{kind}_accuracy']:.2f}% | {digits[f'{kind}_instructions']:,} | "
                         f"{kib(digits[f'{kind}_ram_measured_bytes'])} |")
        lines.append(f"\ntorch eager fp32 on the same digits: {100 * digits['torch_fp32_accuracy']:.2f}%.")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pteron", default=str(REPO / "build" / "tools" / "cli" / "pteron"))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--cores", nargs="*", default=list(CORES), choices=list(CORES))
    parser.add_argument("--no-digits", action="store_true", help="skip the digits-cnn accuracy run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row for name in args.models for row in measure(args.pteron, name, args.cores, Path(tmp))]
        digits = None if args.no_digits else digits_accuracy(args.pteron, Path(tmp))
    load = os.getloadavg()
    result = {"load_average": load, "models": rows, "digits_cnn": digits}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mlperf_tiny_cortex_m.json").write_text(json.dumps(result, indent=2) + "\n")
    text = (markdown(rows, digits, peer_rows())
            + f"\nLoad average while measuring: {load[0]:.1f} (instruction counts do not depend on it).\n")
    (RESULTS / "mlperf_tiny_cortex_m.md").write_text(text)
    print(text)
    return 0 if all(r["bit_exact_vs_host"] and r["bit_exact_across_cores"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
