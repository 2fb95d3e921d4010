"""The four MLPerf Tiny models quantized to INT8 as Cortex-M55 firmware under QEMU mps3-an547.

For each model: export (pteron.zoo), `pteron compile --target cortex-m55-an547 --quantize
cortex-m --int8-io` calibrated on 32 seeded random inputs (the MLPerf Tiny data sets are not
available offline; the zoo models have seeded weights), then `pteron firmware --run` twice, with
the cortex_m kernels' MVE paths and with their scalar reference alone (`--kernel-path scalar`),
each compared bit for bit with `pteron run` on the host for the same int8 input. Measured: RAM
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

Writes bench/results/mlperf_tiny_m55.json and .md.
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
from firmware_map import code_by_component  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "build" / "python"), str(REPO / "python")])}
RAM_GOAL = 90 * 1024
RUNTIME_CODE_GOAL = 52_168
CONV_MODELS = ("ds-cnn", "mobilenet-v1-025", "resnet-8")


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


def firmware(pteron: str, pte: Path, elf: Path, inputs: Path, path: str, *extra) -> tuple[dict, np.ndarray]:
    out = elf.with_suffix(".out.npz")
    report = json.loads(sh(pteron, "firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs,
                           "--outputs", out, "--kernel-path", path, "--json", *extra))
    return report, np.load(out)["output_0"]


def measure(pteron: str, name: str, work: Path) -> dict:
    shape, macs = MODELS[name]
    pt2, fp32, pte = work / f"{name}.pt2", work / f"{name}.fp32.pte", work / f"{name}.pte"
    print(f"[{name}] export, quantize, compile", flush=True)
    sh(sys.executable, "-m", "pteron.zoo", "export", name, "-o", pt2)
    calibration = work / f"{name}.cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((32, *shape)).astype(np.float32))
    compiled = json.loads(sh(pteron, "compile", pt2, "-o", pte, "--target", TARGET, "--quantize", "cortex-m",
                             "--calibration", calibration, "--int8-io", "--json"))
    budget = compiled["budget"]
    qin, qout = (next(q for q in compiled["quantize"]["int8_io"] if q["kind"] == kind) for kind in ("input", "output"))
    sh(pteron, "compile", pt2, "-o", fp32, "--target", "host")

    # Quantization quality on the host: int8 program vs the fp32 program.
    xs = list(np.random.default_rng(2).standard_normal((100, *shape)).astype(np.float32))
    ref = host_outputs(fp32, xs)
    got = dequantize(host_outputs(pte, [quantize(x, qin) for x in xs]), qout)
    quality = {"samples": len(xs)}
    if name == "fc-autoencoder":
        quality["metric"] = "relative L2 error of the output vs fp32"
        quality["value"] = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    else:
        quality["metric"] = "top-1 agreement with fp32"
        quality["value"] = float(np.mean(got.reshape(len(xs), -1).argmax(1) == ref.reshape(len(xs), -1).argmax(1)))

    # Firmware: the MVE build and the scalar build on one int8 input, both against the host.
    inputs = work / f"{name}.in.npz"
    x8 = quantize(xs[0], qin)
    np.savez(inputs, input_0=x8)
    host = host_outputs(pte, [x8])[0]
    print(f"[{name}] firmware (MVE, scalar) under QEMU", flush=True)
    mve, mve_out = firmware(pteron, pte, work / f"{name}.elf", inputs, "mve", "--trim")
    scalar, scalar_out = firmware(pteron, pte, work / f"{name}.scalar.elf", inputs, "scalar")
    code = code_by_component(str(work / f"{name}.elf.build" / "app.map"))
    m, sizes = mve["measured"], mve["elf_sizes"]
    return {
        "model": name, "dtype": "int8", "kernels": mve["kernels"],
        "ram_estimate_bytes": budget["ram"], "ram_measured_bytes": m["ram"],
        "ram_reserved_trimmed_bytes": sizes["ram_reserved"],
        "arena_bytes": m["arenas"],
        "runtime_scratch_bytes": m["scratch"], "method_bytes": m["method"],
        "stack_high_water_bytes": m["stack_high_water"], "stack_reserved_bytes": budget["stack"],
        "static_state_bytes": m["state"],
        "code_flash_bytes": sizes["code_flash"], "code_estimate_bytes": budget["code"],
        "code_by_component": code, "program_bytes": sizes["program_flash"], "total_flash_bytes": sizes["flash"],
        "scalar_code_flash_bytes": scalar["elf_sizes"]["code_flash"],
        "instructions_mve": m["instructions"], "instructions_scalar": scalar["measured"]["instructions"],
        "mve_speedup": scalar["measured"]["instructions"] / m["instructions"],
        "macs": macs, "macs_per_instruction": macs / m["instructions"],
        "macs_per_instruction_scalar": macs / scalar["measured"]["instructions"],
        "bit_exact_vs_host": host.tobytes() == mve_out.tobytes() and host.tobytes() == scalar_out.tobytes(),
        "quality": quality,
    }


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
        report, out = firmware(pteron, pte, work / f"digits300.{kind}.elf", inputs, "mve")
        row[f"{kind}_accuracy"] = float(np.mean(out.argmax(1) == labels))
        row[f"{kind}_instructions"] = report["measured"]["instructions"]
        row[f"{kind}_ram_measured_bytes"] = report["measured"]["ram"]
    with torch.no_grad():
        row["torch_fp32_accuracy"] = float(np.mean(model(test).argmax(1).numpy() == labels))
    return row


def markdown(rows: list[dict], digits: dict | None) -> str:
    kib = lambda b: f"{b / 1024:.1f}"  # noqa: E731
    lines = [
        "# MLPerf Tiny on Cortex-M55 (QEMU mps3-an547), INT8 cortex_m kernels",
        "",
        "`make bench-cortex-m` (bench/cortex_m_int8.py). Models quantized by `pteron compile --quantize "
        "cortex-m --int8-io` (calibrated on 32 seeded random inputs: the MLPerf Tiny data sets are not "
        "available offline), built by `pteron firmware` (selective build: only the program's kernels) and "
        "run under qemu-system-arm.",
        "",
        "- RAM measured = arenas (activations and the kernels' planned scratch) + method memory used + "
        "stack high-water mark + .data/.bss (runtime state, kernel table, newlib) + newlib's heap in use; "
        "estimate = `pteron compile --target` before building (stack counted at its reserved 16 KiB, "
        "method memory as measured on the 64-bit host); reserved = every RAM section of the ELF built with "
        "`pteron firmware --trim` (method memory as used on the device, stack = high-water mark + 25% + "
        "1 KiB, newlib's heap as the first run used it: its stdio state, about 440 B, not a fixed 1 KiB).",
        "- Runtime code = code flash linked from libpteron_runtime.a (program loader and verifier, method, "
        "allocators, kernel registry, EValue/Tensor, errors), from the linker map; kernels, the firmware "
        "main/platform layer and newlib are counted apart.",
        "- Instructions: exact count per inference (tools/qemu_icount); MACs: models/README.md (MLPerf Tiny). Scalar = the "
        "same kernels built without their MVE paths.",
        "- Outputs of both builds compared bit for bit with `pteron run` on the host.",
        "",
        "| model | RAM KiB measured (estimate) | RAM KiB reserved | stack KiB | runtime code B "
        "| code flash KiB (kernels) | total flash KiB | instructions MVE | scalar | MVE speed-up | MACs "
        "| MACs/instr | bit-exact | int8 vs fp32 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["code_by_component"]
        q = r["quality"]
        quality = (f"rel. L2 err {q['value']:.3f}" if "L2" in q["metric"]
                   else f"top-1 agree {100 * q['value']:.0f}%")
        lines.append(
            f"| {r['model']} | {kib(r['ram_measured_bytes'])} ({kib(r['ram_estimate_bytes'])}) | "
            f"{kib(r['ram_reserved_trimmed_bytes'])} | {kib(r['stack_high_water_bytes'])} | {c['runtime']:,} | "
            f"{kib(r['code_flash_bytes'])} ({kib(c['kernels'])}) | {kib(r['total_flash_bytes'])} | {r['instructions_mve']:,} | "
            f"{r['instructions_scalar']:,} | {r['mve_speedup']:.1f}x | {r['macs']:,} | "
            f"{r['macs_per_instruction']:.2f} | {'yes' if r['bit_exact_vs_host'] else 'NO'} | {quality} |")
    lines += ["", "Goals: RAM < 90 KiB; runtime code < 52,168 B (ExecuTorch's core-runtime budget); MVE >= 4x "
              "fewer instructions than scalar on the conv models; >= 2.0 MACs/instruction on resnet-8 and "
              "mobilenet-v1-025.", ""]
    for r in rows:
        goals = [f"RAM {'<' if r['ram_measured_bytes'] < RAM_GOAL else '>='} 90 KiB measured, "
                 f"{'<' if r['ram_reserved_trimmed_bytes'] < RAM_GOAL else '>='} 90 KiB reserved",
                 f"runtime code {'<' if r['code_by_component']['runtime'] < RUNTIME_CODE_GOAL else '>='} 52,168 B"]
        if r["model"] in CONV_MODELS:
            goals.append(f"MVE {'>=' if r['mve_speedup'] >= 4 else '<'} 4x")
        if r["model"] in ("resnet-8", "mobilenet-v1-025"):
            goals.append(f"{'>=' if r['macs_per_instruction'] >= 2.0 else '<'} 2.0 MACs/instr")
        lines.append(f"- {r['model']}: " + ", ".join(goals))
    if digits:
        lines += ["", "## digits-cnn task accuracy in firmware", "",
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
    parser.add_argument("--no-digits", action="store_true", help="skip the digits-cnn accuracy run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(args.pteron, name, Path(tmp)) for name in args.models]
        digits = None if args.no_digits else digits_accuracy(args.pteron, Path(tmp))
    load = os.getloadavg()
    result = {"load_average": load, "models": rows, "digits_cnn": digits}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mlperf_tiny_m55.json").write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(rows, digits) + f"\nLoad average while measuring: {load[0]:.1f} (instruction counts do not depend on it).\n"
    (RESULTS / "mlperf_tiny_m55.md").write_text(text)
    print(text)
    return 0 if all(r["bit_exact_vs_host"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
