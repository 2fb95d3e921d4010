"""Instructions per layer of the cortex_m int8 kernels, scalar vs MVE, on MLPerf Tiny shapes.

Runs each layer of resnet-8 (32x32x3) and mobilenet-v1-025 (96x96x3, the visual wake words
model) once through the firmware tests/baremetal/cortex_m/layer_bench.cpp under QEMU
mps3-an547 with the tools/qemu_icount plugin (exact, repeatable instruction counts), on the
scalar path and on the MVE (Helium) path, and writes a table of MACs, instructions and MACs per
instruction per layer and per model (the sum of its layers: kernels only, no runtime or
quantize/dequantize at the model's edges; the firmware's whole-model figure is h2's table).

    python bench/cortex_m_layers.py --build-m55 build-m55 --plugin build/tools/qemu_icount/libqemu_icount.so

Writes bench/results/cortex_m_layers.{json,md}. Not a test: counts are facts to read.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (name, kind, dims, repeats). Kinds and dims as layer_bench.cpp takes them:
#   conv H W CIN COUT K STRIDE PAD | dw H W C K STRIDE PAD | linear ROWS IN OUT | add N |
#   avgpool H W C K | fc ROWS IN OUT (quantized_linear_packed, what the lowering emits for
#   symmetric weights; linear is quantized_linear, kept for comparison)
RESNET8 = [
    ("conv1 3x3 3->16", "conv", (32, 32, 3, 16, 3, 1, 1), 1),
    ("stack1 3x3 16->16", "conv", (32, 32, 16, 16, 3, 1, 1), 2),
    ("stack1 add", "add", (32 * 32 * 16,), 1),
    ("stack2 3x3 s2 16->32", "conv", (32, 32, 16, 32, 3, 2, 1), 1),
    ("stack2 3x3 32->32", "conv", (16, 16, 32, 32, 3, 1, 1), 1),
    ("stack2 shortcut 1x1 s2 16->32", "conv", (32, 32, 16, 32, 1, 2, 0), 1),
    ("stack2 add", "add", (16 * 16 * 32,), 1),
    ("stack3 3x3 s2 32->64", "conv", (16, 16, 32, 64, 3, 2, 1), 1),
    ("stack3 3x3 64->64", "conv", (8, 8, 64, 64, 3, 1, 1), 1),
    ("stack3 shortcut 1x1 s2 32->64", "conv", (16, 16, 32, 64, 1, 2, 0), 1),
    ("stack3 add", "add", (8 * 8 * 64,), 1),
    ("avgpool 8x8", "avgpool", (8, 8, 64, 8), 1),
    ("fc 64->10", "fc", (1, 64, 10), 1),
]

MOBILENET = [("conv1 3x3 s2 3->8", "conv", (96, 96, 3, 8, 3, 2, 1), 1)]
for _h, _c, _cout, _s, _n in [
    (48, 8, 16, 1, 1),
    (48, 16, 32, 2, 1),
    (24, 32, 32, 1, 1),
    (24, 32, 64, 2, 1),
    (12, 64, 64, 1, 1),
    (12, 64, 128, 2, 1),
    (6, 128, 128, 1, 5),
    (6, 128, 256, 2, 1),
    (3, 256, 256, 1, 1),
]:
    _o = _h // _s
    MOBILENET += [
        (f"dw 3x3{' s2' if _s == 2 else ''} {_h}x{_h}x{_c}", "dw", (_h, _h, _c, 3, _s, 1), _n),
        (f"pw {_o}x{_o} {_c}->{_cout}", "conv", (_o, _o, _c, _cout, 1, 1, 0), _n),
    ]
MOBILENET += [
    ("avgpool 3x3", "avgpool", (3, 3, 256, 3), 1),
    ("fc 256->2", "fc", (1, 256, 2), 1),
]

FC_AUTOENCODER = [
    ("fc 640->128", "fc", (1, 640, 128), 1),
    ("fc 128->128", "fc", (1, 128, 128), 3),
    ("fc 128->8", "fc", (1, 128, 8), 1),
    ("fc 8->128", "fc", (1, 8, 128), 1),
    ("fc 128->128 (decoder)", "fc", (1, 128, 128), 3),
    ("fc 128->640", "fc", (1, 128, 640), 1),
]
# The same layers through quantized_linear (offsets added at run time, weights [N, K]): what the
# packed kernel replaced.
FC_AUTOENCODER_UNPACKED = [(name, "linear", dims, rep) for name, _, dims, rep in FC_AUTOENCODER]

MODELS = {"resnet-8": RESNET8, "mobilenet-v1-025": MOBILENET, "fc-autoencoder": FC_AUTOENCODER,
          "fc-autoencoder (quantized_linear)": FC_AUTOENCODER_UNPACKED}


def macs(kind: str, d: tuple) -> int:
    if kind == "conv":
        h, w, cin, cout, k, s, p = d
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        return oh * ow * cout * k * k * cin
    if kind == "dw":
        h, w, c, k, s, p = d
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        return oh * ow * c * k * k
    if kind in ("linear", "fc"):
        return d[0] * d[1] * d[2]
    return 0  # add, avgpool: no multiply-accumulates


def marker(elf: Path, name: str) -> str:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[-1] == name:
            return "0x" + parts[0]
    raise SystemExit(f"{elf}: no symbol {name}")


def count(elf: Path, plugin: Path, path: str, kind: str, dims: tuple) -> int:
    begin, end = marker(elf, "board_icount_begin"), marker(elf, "board_icount_end")
    args = " ".join([path, kind, *map(str, dims)])
    run = subprocess.run(
        [
            "qemu-system-arm",
            "-M",
            "mps3-an547",
            "-nographic",
            "-semihosting",
            "-kernel",
            str(elf),
            "-append",
            args,
            "-plugin",
            f"{plugin},begin={begin},end={end}",
            "-d",
            "plugin",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    m = re.search(r"inference=(\d+)", run.stdout + run.stderr)
    if run.returncode != 0 or not m:
        raise SystemExit(f"layer '{args}' failed (rc {run.returncode}): {run.stdout}{run.stderr}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-m55", type=Path, default=ROOT / "build-m55")
    ap.add_argument("--plugin", type=Path, default=ROOT / "build/tools/qemu_icount/libqemu_icount.so")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/cortex_m_layers")
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    elf = args.build_m55 / "tests/baremetal/cortex_m/cortex_m_layer_bench.elf"
    results, md = {}, []
    for model in args.models:
        rows, total = [], {"macs": 0, "scalar": 0, "mve": 0}
        md += [
            f"## {model}",
            "",
            "| layer | x | MACs | scalar instr | MVE instr | speed-up | MVE MACs/instr |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, kind, dims, rep in MODELS[model]:
            m = macs(kind, dims)
            s = count(elf, args.plugin, "scalar", kind, dims)
            v = count(elf, args.plugin, "simd", kind, dims)
            rows.append({"layer": name, "kind": kind, "dims": dims, "repeats": rep, "macs": m, "scalar": s, "mve": v})
            total["macs"] += m * rep
            total["scalar"] += s * rep
            total["mve"] += v * rep
            md.append(f"| {name} | {rep} | {m} | {s} | {v} | {s / v:.1f}x | {m / v:.2f} |")
            print(md[-1], flush=True)
        md.append(
            f"| **total** | | {total['macs']} | {total['scalar']} | {total['mve']} | "
            f"{total['scalar'] / total['mve']:.1f}x | {total['macs'] / total['mve']:.2f} |"
        )
        md.append("")
        print(md[-2], flush=True)
        results[model] = {"layers": rows, "total": total}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    head = [
        "# cortex_m kernels per layer: instructions under QEMU mps3-an547 (tools/qemu_icount)",
        "",
        "Kernel calls only (`x`: how many such layers the model has); `python bench/cortex_m_layers.py`.",
        "",
    ]
    args.out.with_suffix(".md").write_text("\n".join(head + md))


if __name__ == "__main__":
    main()
