"""The four MLPerf Tiny models as Cortex-M55 firmware under QEMU mps3-an547 (fp32 for now).

For each model: export (pteron.zoo), `pteron compile --target cortex-m55-an547` (budget
estimate), `pteron firmware --run` with seeded random inputs (measured stack, RAM, exact
instructions per inference from tools/qemu_icount), and `pteron run` on the host on the same
inputs to check the firmware's outputs are bit-exact. MACs are the reference figures
(models/README.md, MLPerf Tiny), so MACs/instruction is comparable with the int8 numbers to come.

    python bench/cortex_m.py [--pteron build/tools/cli/pteron] [--models ds-cnn ...]

Writes bench/results/mlperf_tiny_m55_fp32.json and .md.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
TARGET = REPO / "targets" / "cortex-m55-an547.toml"
MODELS = {  # name: (input shape, reference MACs)
    "ds-cnn": ((1, 1, 49, 10), 2_656_768),
    "mobilenet-v1-025": ((1, 3, 96, 96), 7_489_664),
    "resnet-8": ((1, 3, 32, 32), 12_501_632),
    "fc-autoencoder": ((1, 640), 264_192),
}


def sh(*args, timeout=1800):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                            check=False, env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{result.stderr}")
    return result.stdout


def measure(pteron: str, name: str, work: Path) -> dict:
    shape, macs = MODELS[name]
    pt2, pte, elf = work / f"{name}.pt2", work / f"{name}.pte", work / f"{name}.elf"
    print(f"[{name}] export, compile", flush=True)
    sh(sys.executable, "-m", "pteron.zoo", "export", name, "-o", pt2)
    budget = json.loads(sh(pteron, "compile", pt2, "-o", pte, "--target", TARGET, "--json"))["budget"]
    inputs = work / f"{name}.in.npz"
    np.savez(inputs, input_0=np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    print(f"[{name}] firmware build and QEMU run", flush=True)
    fw = json.loads(sh(pteron, "firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs,
                       "--outputs", work / f"{name}.fw.npz", "--json"))
    sh(pteron, "run", pte, "--inputs", inputs, "--outputs", work / f"{name}.host.npz")
    host = np.load(work / f"{name}.host.npz")["output_0"]
    dev = np.load(work / f"{name}.fw.npz")["output_0"]
    m, sizes = fw["measured"], fw["elf_sizes"]
    return {
        "model": name, "dtype": "fp32", "kernels": len(fw["kernels"]),
        "ram_estimate_bytes": budget["ram"], "ram_measured_bytes": m["ram"],
        "arena_bytes": m["arenas"], "scratch_bytes": m["scratch"], "method_bytes": m["method"],
        "stack_high_water_bytes": m["stack_high_water"], "stack_reserved_bytes": budget["stack"],
        "code_flash_bytes": sizes["code_flash"], "code_estimate_bytes": budget["code"],
        "program_bytes": sizes["program_flash"], "total_flash_bytes": sizes["flash"],
        "instructions": m["instructions"], "macs": macs,
        "macs_per_instruction": macs / m["instructions"],
        "bit_exact_vs_host": host.tobytes() == dev.tobytes(),
    }


def markdown(rows: list[dict]) -> str:
    kib = lambda b: f"{b / 1024:.1f}"  # noqa: E731
    lines = [
        "# MLPerf Tiny on Cortex-M55 (QEMU mps3-an547), fp32 portable kernels",
        "",
        "`python bench/cortex_m.py`: RAM measured on the device = arenas + scratch peak + method "
        "memory used + stack high water + .data/.bss; estimate = what `pteron compile --target "
        "cortex-m55-an547` printed (stack counted at its reserved size). Instructions: exact count "
        "per inference (tools/qemu_icount). Outputs compared bit for bit with `pteron run` on the host.",
        "",
        "| model | RAM KiB measured (estimate) | stack KiB | code flash KiB (estimate) | total flash KiB "
        "| instructions | MACs | MACs/instr | bit-exact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {kib(r['ram_measured_bytes'])} ({kib(r['ram_estimate_bytes'])}) | "
            f"{kib(r['stack_high_water_bytes'])} | {kib(r['code_flash_bytes'])} ({kib(r['code_estimate_bytes'])}) | "
            f"{kib(r['total_flash_bytes'])} | {r['instructions']:,} | {r['macs']:,} | "
            f"{r['macs_per_instruction']:.3f} | {'yes' if r['bit_exact_vs_host'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pteron", default=str(REPO / "build" / "tools" / "cli" / "pteron"))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(args.pteron, name, Path(tmp)) for name in args.models]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mlperf_tiny_m55_fp32.json").write_text(json.dumps(rows, indent=2) + "\n")
    (RESULTS / "mlperf_tiny_m55_fp32.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0 if all(r["bit_exact_vs_host"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
