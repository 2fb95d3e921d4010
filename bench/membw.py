"""The memory bandwidth this machine gives one process now: a STREAM-style copy (a large
torch.Tensor.copy_, bytes read + written per second), shared by bench/llm_linear.py and
bench/llm.py so the decode figures they report are fractions of the same measurement.

    python bench/membw.py [--mib 64] [--reps 10] [--threads 2]   # prints one JSON object
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_ms  # noqa: E402


def stream_copy(mib=64, reps=10):
    """{"gb_per_s", "gb_per_cpu_s", "copy_ms", "mib"}: medians of `reps` copies of a `mib` MiB
    float32 tensor (well past the caches) at torch's current thread count. GB/s per CPU second
    is what the copy would reach with its cores to itself."""
    import torch

    src = torch.randn((mib << 20) // 4)
    dst = torch.empty_like(src)
    ms, cpu_ms = median_ms(lambda: dst.copy_(src), reps)
    moved = 2 * src.numel() * 4
    return {"gb_per_s": moved / (ms * 1e-3) / 1e9,
            "gb_per_cpu_s": moved / (max(cpu_ms, 1e-6) * 1e-3) / 1e9,
            "copy_ms": ms, "mib": mib, "threads": torch.get_num_threads(),
            "load_average_1m": os.getloadavg()[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    print(json.dumps(stream_copy(a.mib, a.reps)))


if __name__ == "__main__":
    main()
