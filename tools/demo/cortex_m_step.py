"""`make demo` step: the Cortex-M55 INT8 path (tools/demo/demo.py calls `cortex_m55_step`).

The demo's main model (mobilenet-v2, 14 MB of weights) does not fit a microcontroller, so this
step uses digits-cnn, the zoo's small trained CNN with a held-out test split: quantized to INT8
for the Cortex-M backend (calibrated on 60 held-out digits), compiled for the Cortex-M55 target
next to the float program (RAM/flash budgets before flashing), both built as bare-metal firmware
and run under QEMU mps3-an547 (measured RAM, flash, instructions; outputs bit-exact with the host
runtime), then both programs' accuracy on the other 300 held-out digits.
"""

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "targets" / "cortex-m55-an547.toml"


def _quantize(x: np.ndarray, q: dict) -> np.ndarray:
    return np.clip(np.round(x / q["scale"]) + q["zero_point"], -128, 127).astype(np.int8)


def cortex_m55_step(sh, work: Path) -> None:
    import pteron.runtime as rt
    from pteron import zoo

    zoo.names()  # makes the repository's models package importable
    from models import digits_cnn

    images, labels = digits_cnn.load_test_split()
    calibration, test, labels = images[:60].numpy(), images[60:].numpy(), labels[60:].numpy()
    pt2 = work / "digits-cnn.pt2"
    sh([sys.executable, "-m", "pteron.zoo", "export", "digits-cnn", "-o", str(pt2)])
    cal = work / "digits-cal.npz"
    np.savez(cal, input_0=calibration[:, None])
    programs = {"fp32": work / "digits-cnn-m55.pte", "int8": work / "digits-cnn-m55-int8.pte"}
    reports = {}
    for kind, pte in programs.items():
        quant = ["--quantize", "cortex-m", "--calibration", str(cal), "--int8-io"] if kind == "int8" else []
        out = sh(["pteron", "compile", str(pt2), "-o", str(pte), "--target", str(TARGET), "--json", *quant],
                 show_output=False)
        reports[kind] = json.loads(out)
    qin = next(q for q in reports["int8"]["quantize"]["int8_io"] if q["kind"] == "input")

    rows = {}
    for kind, pte in programs.items():
        x = test[:1] if kind == "fp32" else _quantize(test[:1], qin)
        inputs, host_out, fw_out = work / f"digit-{kind}.npz", work / f"host-{kind}.npz", work / f"fw-{kind}.npz"
        np.savez(inputs, input_0=x)
        sh(["pteron", "run", str(pte), "--inputs", str(inputs), "--outputs", str(host_out), "--kernels",
            "cortex_m,portable"], show_output=False)
        fw = json.loads(sh(["pteron", "firmware", str(pte), "--target", str(TARGET), "-o", str(work / f"digits-{kind}.elf"),
                            "--run", "--inputs", str(inputs), "--outputs", str(fw_out), "--json"], show_output=False))
        bit_exact = np.load(host_out)["output_0"].tobytes() == np.load(fw_out)["output_0"].tobytes()
        method = rt.load(str(pte)).load_method()
        xs = test if kind == "fp32" else _quantize(test, qin)
        predictions = np.array([int(np.asarray(method(xs[i:i + 1].copy())[0]).argmax()) for i in range(len(xs))])
        rows[kind] = (reports[kind]["budget"], fw, bit_exact, float(np.mean(predictions == labels)))

    print("  program | RAM estimate -> measured | flash (code + program) | instructions | bit-exact | accuracy")
    for kind, (budget, fw, bit_exact, accuracy) in rows.items():
        m, sizes = fw["measured"], fw["elf_sizes"]
        print(f"  {kind:7s} | {budget['ram'] / 1024:.1f} -> {m['ram'] / 1024:.1f} KiB | "
              f"{sizes['flash'] / 1024:.1f} KiB ({sizes['code_flash'] / 1024:.1f} + {sizes['program_flash'] / 1024:.1f}) | "
              f"{m['instructions']:,} | {'yes' if bit_exact else 'NO'} | {100 * accuracy:.2f}% of {len(labels)} digits")
    if not all(bit_exact for _, _, bit_exact, _ in rows.values()):
        sys.exit("demo: FAILED - firmware outputs differ from the host runtime")
    if abs(rows["int8"][3] - rows["fp32"][3]) > 0.01:
        sys.exit("demo: FAILED - int8 accuracy more than 1 point from fp32")
