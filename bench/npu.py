"""The four MLPerf Tiny models on the Ethos-U targets: what Vela estimates for pteron's regions.

For each model and each Ethos-U target (targets/ethos-u55-128.toml, ethos-u55-256,
ethos-u85-256): export (pteron.zoo), quantize with the ethos-u scheme (int8 I/O) and

    pteron compile --target T --backends ethos-u,cortex-m,portable --json

then read the compile report: Vela's estimate per Ethos-U region (NPU cycles, inference time at
the system's clock, SRAM / flash / DRAM use, command stream and weight bytes), the share of the
model's MACs on the NPU (Vela's MAC count over the reference figure in models/README.md) and the
CPU-side work that remains (kernel calls and the refusals that kept nodes off the NPU).
Estimates only: nothing here runs an NPU (the host runs the regions emulated).

    python bench/npu.py [--pteron build/tools/cli/pteron] [--models ds-cnn ...]

Writes bench/results/npu.json and npu.md.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
TARGETS = ["ethos-u55-128", "ethos-u55-256", "ethos-u85-256"]
MODELS = {  # name: reference MACs (models/README.md, MLPerf Tiny)
    "ds-cnn": 2_656_768,
    "mobilenet-v1-025": 7_489_664,
    "resnet-8": 12_501_632,
    "fc-autoencoder": 264_192,
}


def sh(*args, timeout=1800):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                            check=False, env={**os.environ, "PYTHONPATH": f"{REPO / 'build' / 'python'}:{REPO / 'python'}"})
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{result.stderr}")
    return result.stdout


def measure(pteron: str, name: str, work: Path) -> list[dict]:
    sys.path.insert(0, str(REPO / "python"))
    from pteron.tosa import zoo_calibration

    pt2 = work / f"{name}.pt2"
    sh(sys.executable, "-m", "pteron.zoo", "export", name, "-o", pt2)
    np.savez(work / f"{name}.cal.npz", input_0=zoo_calibration(name)[0])
    rows = []
    for target in TARGETS:
        print(f"[{name}] {target}", flush=True)
        report = json.loads(sh(pteron, "compile", pt2, "-o", work / f"{name}.{target}.pte",
                               "--target", target, "--backends", "ethos-u,cortex-m,portable",
                               "--quantize", "ethos-u", "--calibration", work / f"{name}.cal.npz",
                               "--int8-io", "--json"))
        regions = [r for r in report["delegated_regions"] if r["backend"] == "ethos-u"]
        vela = [r["report"] for r in regions]
        total = lambda key: sum(v[key] for v in vela)  # noqa: E731
        reasons = Counter(r.split(": ", 1)[-1] for r in report["refusals"])
        rows.append({
            "model": name, "target": target,
            "system_config": vela[0]["system_config"] if vela else "",
            "memory_mode": vela[0]["memory_mode"] if vela else "",
            "npu_regions": len(regions),
            "npu_nodes": sum(r["nodes"] for r in regions),
            "npu_cycles": total("npu_cycles"),
            "npu_time_us": round(total("inference_time_s") * 1e6, 1),
            "npu_macs": total("macs"),
            "reference_macs": MODELS[name],
            "npu_mac_share": round(min(1.0, total("macs") / MODELS[name]), 4),
            "sram_bytes": max([v["sram_bytes"] for v in vela], default=0),
            "off_chip_flash_bytes": total("off_chip_flash_bytes"),
            "dram_bytes": total("dram_bytes"),
            "command_stream_bytes": total("command_stream_bytes"),
            "weight_bytes": total("weight_bytes"),
            "cpu_kernel_calls": report["kernel_calls"],
            "cpu_refusals": len(report["refusals"]),
            "cpu_reasons": dict(reasons.most_common(5)),
            "program_bytes": report["file_bytes"],
        })
    return rows


def write_md(rows: list[dict], load: str) -> str:
    lines = [
        "# MLPerf Tiny on Ethos-U (Vela 5.2.0 estimates of pteron's regions)",
        "",
        "`make bench-npu` (bench/npu.py): each model quantized with the ethos-u scheme (int8 I/O) "
        "and compiled with `--backends ethos-u,cortex-m,portable` for each Ethos-U target; figures "
        "are Vela's performance estimate for the Ethos-U regions (no NPU is run: on the host the "
        "regions execute emulated from their TOSA form, bit-exact with the TOSA reference model). "
        "NPU time = Vela's inference time at the system's clock (NPU or memory bound, whichever "
        "is slower). MAC share = Vela's NPU MACs / the model's reference MACs. CPU calls = kernel "
        "calls left "
        f"in the program (the int8 I/O boundary and anything refused). Load average: {load}.",
        "",
        "| model | target | memory mode | regions | NPU cycles | NPU time (us) | MAC share | SRAM (B) "
        "| flash (B) | DRAM (B) | cmd stream (B) | weights (B) | CPU calls |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['target']} | {r['memory_mode']} | {r['npu_regions']} | "
            f"{r['npu_cycles']:,} | {r['npu_time_us']} | {r['npu_mac_share']:.0%} | "
            f"{r['sram_bytes']:,} | {r['off_chip_flash_bytes']:,} | {r['dram_bytes']:,} | "
            f"{r['command_stream_bytes']:,} | {r['weight_bytes']:,} | {r['cpu_kernel_calls']} |")
    reasons = {(r["model"]): r["cpu_reasons"] for r in rows if r["cpu_reasons"]}
    if reasons:
        lines += ["", "Nodes kept on the CPU (reason: count, per model):", ""]
        for model, rs in reasons.items():
            for why, n in rs.items():
                lines.append(f"- {model}: {n} x {why}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pteron", default=str(REPO / "build" / "tools" / "cli" / "pteron"))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pteron-npu-") as tmp:
        for name in args.models:
            rows += measure(args.pteron, name, Path(tmp))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "npu.json").write_text(json.dumps({"load_average": load, "rows": rows}, indent=1) + "\n")
    (RESULTS / "npu.md").write_text(write_md(rows, load))
    print(write_md(rows, load))


if __name__ == "__main__":
    main()
