"""Model families outside the zoo against PyTorch eager, each on pteron's default host program:
the layers a screen of unseen architectures found slower than eager (attention with 16-value
heads, nn.Unfold's advanced indexing, transposed convolutions, tanh; sin / cos and linear heads,
tiny batched products, cross-attention's split weights; group and instance norms, transposed
convolutions of small images, arg-extremes over few classes), in the models that use them.

    .venv/bin/python bench/families_vs_eager.py --build build [--rounds 3] [--models unet,sr]

Models (random weights from fixed seeds; transformers' classes from configurations, no hub):
  - wav2vec2: Wav2Vec2Model, 2 conv feature layers, 2 encoder layers of width 64 and 4 heads of
    16 values, 1 s at 4 kHz (399 frames).
  - t5-encoder: T5EncoderModel, width 64, 2 layers, 4 heads of 16 values, 128 tokens.
  - convbert: ConvBertModel, width 256, 4 layers: its span-based dynamic convolution unfolds the
    sequence with nn.Unfold (advanced indexing after export).
  - unet: a 3-level U-Net, 32-128 channels, ConvTranspose2d 2x upsampling, 128x128.
  - sr: a super-resolution net (5x5 and 3x3 convolutions, tanh, pixel_shuffle x4), 64x64.
  - nerf: a NeRF MLP (sin / cos positional encoding of 10 frequencies, 3 x 256 wide, 4 outputs)
    over 4096 points: element-wise math and a linear head of 4 columns.
  - capsules: capsule dynamic routing (1152 primary capsules to 10 of 16, 3 iterations), batch 2:
    23040 tiny [16, 8] x [8, 1] products, softmax, sums and squashes.
  - perceiver: 64 latents cross-attending (nn.MultiheadAttention) to 2048 tokens, then one
    TransformerEncoderLayer: the in-projection weight split into q and kv parts.
  - conv-tasnet: a Conv-TasNet separator (GroupNorm(1, C) "global layer norms", PReLU, dilated
    depthwise Conv1d, a ConvTranspose1d decoder), 2 x 1 s at 16 kHz.
  - style-transfer: Johnson et al.'s transformer net (reflection pads, InstanceNorm2d, nearest 2x
    upsampling), 128x128.
  - dcgan: a DCGAN generator (five ConvTranspose2d, batch norm), batch 4 of 100-d noise to 64x64.
  - detector-head: anchor decoding and per-anchor best class over [2, 4000, 21] logits (softmax,
    max over classes, top 100, gathers).

Each system runs in its own process, alternating rounds (--rounds, default 3), 2 threads: eager in
the project venv (torch.set_num_threads), pteron as `pteron bench --threads 2 --json` on the
program `pteron compile` makes without --backends. Figures are the median of the rounds'
medians, with the process CPU time, the ISA and the highest load average a round saw. Outputs
checked against eager: max |diff| / max |eager| <= 1e-4. Writes bench/results/families.{json,md}.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from priority import match_autogroup_nice
from timing import median_of_rounds, results_folder, timed_calls_wall_cpu_ms

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
MODELS = ["wav2vec2", "t5-encoder", "convbert", "unet", "sr", "nerf", "capsules", "perceiver", "conv-tasnet",
          "style-transfer", "dcgan", "detector-head"]
THREADS = 2


def build(name: str):
    """(model in eval mode, example inputs) of a family; seeded."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    if name in ("wav2vec2", "t5-encoder", "convbert"):
        import transformers as T

        if name == "wav2vec2":
            cfg = T.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=128, conv_dim=(32, 32), conv_stride=(5, 2),
                                   conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                   num_conv_pos_embedding_groups=4)
            model, inputs = T.Wav2Vec2Model(cfg), (torch.randn(1, 4000),)
        elif name == "t5-encoder":
            cfg = T.T5Config(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=100)
            model, inputs = T.T5EncoderModel(cfg), (torch.randint(0, 100, (1, 128)),)
        else:
            cfg = T.ConvBertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                   intermediate_size=1024, vocab_size=1000, embedding_size=256)
            model, inputs = T.ConvBertModel(cfg), (torch.randint(0, 1000, (1, 128)),)
        model.config.use_cache = False
        return model.eval(), inputs

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                             nn.Conv2d(o, o, 3, padding=1), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, c=32):
            super().__init__()
            self.d1, self.d2, self.d3 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
            self.u2, self.c2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), block(4 * c, 2 * c)
            self.u1, self.c1 = nn.ConvTranspose2d(2 * c, c, 2, 2), block(2 * c, c)
            self.out = nn.Conv2d(c, 2, 1)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(F.max_pool2d(a, 2))
            c = self.d3(F.max_pool2d(b, 2))
            b = self.c2(torch.cat([self.u2(c), b], 1))
            return self.out(self.c1(torch.cat([self.u1(b), a], 1)))

    class SuperResolution(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 64, 5, padding=2)
            self.c2 = nn.Conv2d(64, 32, 3, padding=1)
            self.c3 = nn.Conv2d(32, 3 * 16, 3, padding=1)

        def forward(self, x):
            return F.pixel_shuffle(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x))))), 4)

    class NeRF(nn.Module):
        def __init__(self, freqs=10, width=256):
            super().__init__()
            self.register_buffer("f", 2.0 ** torch.arange(freqs) * torch.pi)
            self.mlp = nn.Sequential(nn.Linear(3 + 6 * freqs, width), nn.ReLU(), nn.Linear(width, width),
                                     nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4))

        def forward(self, p):
            e = (p[..., None] * self.f).flatten(-2)
            return self.mlp(torch.cat([p, e.sin(), e.cos()], -1))

    class Capsules(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Parameter(torch.randn(1, 1152, 10, 16, 8) * 0.01)

        def forward(self, u):
            uh = (self.W @ u[:, :, None, :, None]).squeeze(-1)
            b = torch.zeros(uh.shape[:3])
            for _ in range(3):
                s = (b.softmax(2)[..., None] * uh).sum(1)
                n2 = (s * s).sum(-1, keepdim=True)
                v = n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)
                b = b + (uh * v[:, None]).sum(-1)
            return v.norm(dim=-1)

    class Perceiver(nn.Module):
        def __init__(self, d=128):
            super().__init__()
            self.lat = nn.Parameter(torch.randn(1, 64, d))
            self.inp = nn.Linear(32, d)
            self.cross = nn.MultiheadAttention(d, 4, batch_first=True)
            self.latent = nn.TransformerEncoderLayer(d, 4, 256, batch_first=True)

        def forward(self, x):
            kv = self.inp(x)
            z = self.cross(self.lat.expand(x.shape[0], -1, -1), kv, kv, need_weights=False)[0]
            return self.latent(z).mean(1)

    class ConvTasNet(nn.Module):
        def __init__(self, N=128, B=64, H=128, S=2):
            super().__init__()
            self.enc, self.ln, self.bottleneck = nn.Conv1d(1, N, 16, 8, bias=False), nn.GroupNorm(1, N), nn.Conv1d(N, B, 1)
            self.blocks = nn.ModuleList(nn.Sequential(
                nn.Conv1d(B, H, 1), nn.PReLU(), nn.GroupNorm(1, H), nn.Conv1d(H, H, 3, padding=2 ** i, dilation=2 ** i,
                                                                              groups=H),
                nn.PReLU(), nn.GroupNorm(1, H), nn.Conv1d(H, B, 1)) for i in range(4))
            self.mask, self.dec, self.S, self.N = nn.Conv1d(B, S * N, 1), nn.ConvTranspose1d(N, 1, 16, 8, bias=False), S, N

        def forward(self, x):
            w = F.relu(self.enc(x))
            y = self.bottleneck(self.ln(w))
            for b in self.blocks:
                y = y + b(y)
            m = torch.sigmoid(self.mask(y)).view(x.shape[0], self.S, self.N, -1)
            return self.dec((w.unsqueeze(1) * m).view(-1, self.N, w.shape[-1]))

    class StyleTransfer(nn.Module):
        def __init__(self):
            super().__init__()

            def conv(i, o, k, s=1):
                return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, s), nn.InstanceNorm2d(o, affine=True))

            self.down = nn.Sequential(conv(3, 32, 9), nn.ReLU(), conv(32, 64, 3, 2), nn.ReLU(), conv(64, 128, 3, 2),
                                      nn.ReLU())
            self.res = nn.ModuleList(nn.Sequential(conv(128, 128, 3), nn.ReLU(), conv(128, 128, 3)) for _ in range(3))
            self.up1, self.up2, self.out = conv(128, 64, 3), conv(64, 32, 3), conv(32, 3, 9)

        def forward(self, x):
            y = self.down(x)
            for r in self.res:
                y = y + r(y)
            y = F.relu(self.up1(F.interpolate(y, scale_factor=2.0, mode="nearest")))
            return self.out(F.relu(self.up2(F.interpolate(y, scale_factor=2.0, mode="nearest"))))

    def dcgan(nz=100, g=64):
        layers, c = [nn.ConvTranspose2d(nz, g * 8, 4, 1, 0, bias=False)], g * 8
        for _ in range(3):
            layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.ConvTranspose2d(c, c // 2, 4, 2, 1, bias=False)]
            c //= 2
        return nn.Sequential(*layers, nn.BatchNorm2d(c), nn.ReLU(), nn.ConvTranspose2d(c, 3, 4, 2, 1, bias=False),
                             nn.Tanh())

    class DetectorHead(nn.Module):
        """Anchor decoding and per-anchor best class (softmax, max over classes, top 100)."""

        def __init__(self, anchors=4000):
            super().__init__()
            self.register_buffer("anchors", torch.rand(anchors, 4) * 0.5 + 0.25)

        def forward(self, deltas, logits):
            a = self.anchors
            cx, cy = a[:, 0] + deltas[..., 0] * 0.1 * a[:, 2], a[:, 1] + deltas[..., 1] * 0.1 * a[:, 3]
            w = a[:, 2] * torch.exp(deltas[..., 2].clamp(max=4.135) * 0.2)
            h = a[:, 3] * torch.exp(deltas[..., 3].clamp(max=4.135) * 0.2)
            boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).clamp(0, 1)
            scores, labels = torch.softmax(logits, -1)[..., 1:].max(-1)
            top, idx = scores.topk(100, dim=-1)
            return torch.gather(boxes, 1, idx.unsqueeze(-1).expand(-1, -1, 4)), top, torch.gather(labels, 1, idx)

    if name == "conv-tasnet":
        return ConvTasNet().eval(), (torch.randn(2, 1, 16000),)
    if name == "style-transfer":
        return StyleTransfer().eval(), (torch.randn(1, 3, 128, 128),)
    if name == "dcgan":
        return dcgan().eval(), (torch.randn(4, 100, 1, 1),)
    if name == "detector-head":
        return DetectorHead().eval(), (torch.randn(2, 4000, 4), torch.randn(2, 4000, 21))
    if name == "nerf":
        return NeRF().eval(), (torch.rand(4096, 3),)
    if name == "capsules":
        return Capsules().eval(), (torch.randn(2, 1152, 8),)
    if name == "perceiver":
        return Perceiver().eval(), (torch.randn(2, 2048, 32),)
    if name == "unet":
        return UNet().eval(), (torch.randn(1, 3, 128, 128),)
    if name == "sr":
        return SuperResolution().eval(), (torch.randn(1, 3, 64, 64),)
    raise SystemExit(f"unknown model {name}")


def flat_first_output(out):
    """The first tensor of a model's output (a tensor, a tuple or a transformers ModelOutput)."""
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    return out[0] if isinstance(out, (tuple, list)) else out


# ---- Subprocess steps (project venv) --------------------------------------------------------

def step_prepare(name: str, work: Path) -> None:
    import torch

    model, inputs = build(name)
    ep = torch.export.export(model, inputs, strict=False).run_decompositions()
    torch.export.save(ep, work / f"{name}.pt2")
    np.savez(work / f"{name}.inputs.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    with torch.no_grad():
        np.save(work / f"{name}.eager.npy", flat_first_output(model(*inputs)).numpy())


def step_eager(name: str, work: Path, iters: int) -> None:
    import torch

    torch.set_num_threads(THREADS)
    model, inputs = build(name)
    with torch.no_grad():
        walls, cpus = timed_calls_wall_cpu_ms(lambda: model(*inputs), iters, warmup=3)
    walls.sort()
    result = {"median_ms": statistics.median(walls), "p90_ms": walls[int(0.9 * (len(walls) - 1))],
              "min_ms": walls[0], "median_cpu_ms": statistics.median(cpus),
              "load_average_1m": os.getloadavg()[0], "isa": "its own"}
    (work / f"{name}.eager.json").write_text(json.dumps(result))


# ---- Driver ---------------------------------------------------------------------------------

def log(msg: str) -> None:
    print(f"[bench-families] {msg}", flush=True)


def run(*cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)


def bench_model(name: str, work: Path, pteron: str, rounds: int, iters: int) -> dict:
    me = [sys.executable, __file__]
    run(*me, "--step", "prepare", "--model", name, "--work", work, timeout=1800)
    pte = work / f"{name}.pte"
    run(pteron, "compile", work / f"{name}.pt2", "-o", pte)
    inputs = work / f"{name}.inputs.npz"
    outputs = work / f"{name}.pteron.npz"
    run(pteron, "run", pte, "--inputs", inputs, "--outputs", outputs)
    want = np.load(work / f"{name}.eager.npy")
    got = np.load(outputs)["output_0"]
    rel = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
    eager_rounds, pteron_rounds = [], []
    for r in range(rounds):
        run(*me, "--step", "eager", "--model", name, "--work", work, "--iters", iters, timeout=1800)
        eager_rounds.append(json.loads((work / f"{name}.eager.json").read_text()))
        done = run(pteron, "bench", pte, "--inputs", inputs, "--threads", THREADS, "--iters", iters,
                   "--json")
        pteron_rounds.append(json.loads(done.stdout))
        log(f"{name} round {r + 1}: eager {eager_rounds[-1]['median_ms']:.2f} ms, pteron "
            f"{pteron_rounds[-1]['median_ms']:.2f} ms")
    eager, ours = median_of_rounds(eager_rounds), median_of_rounds(pteron_rounds)
    return {"eager": eager, "pteron": ours, "rel_error": rel, "output_ok": rel <= 1e-4,
            "speedup_vs_eager": eager["median_ms"] / ours["median_ms"],
            "kernel_libraries": pteron_rounds[0].get("kernel_libraries", {})}


def write_markdown(doc: dict, path: Path) -> None:
    lines = [
        "# Model families outside the zoo: pteron's default program vs PyTorch eager", "",
        "`make bench-families` (bench/families_vs_eager.py; the models are in its docstring). "
        f"{doc['threads']} threads, each system in its own process, {doc['rounds']} alternating "
        f"rounds of {doc['iters']} timed runs after 3 warm-up; figures are the median of the "
        "rounds' medians. Outputs checked against eager: max |diff| / max |eager| <= 1e-4.", "",
        f"Machine: {doc['machine']}; {doc['priority']}.", "",
        "| model | eager (ms) | eager CPU (ms) | pteron default (ms) | pteron CPU (ms) | eager / "
        "pteron | pteron rounds (ms) | ISA | max load avg | rel. error | kernels |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|---|---|"]
    for name, m in doc["models"].items():
        e, p = m["eager"], m["pteron"]
        libs = ", ".join(f"{k} {v}" for k, v in sorted(m["kernel_libraries"].items()))
        load = max(e["max_load_average"], p["max_load_average"])
        lines.append(
            f"| {name} | {e['median_ms']:.2f} | {e['median_cpu_ms']:.2f} | {p['median_ms']:.2f} | "
            f"{p['median_cpu_ms']:.2f} | {m['speedup_vs_eager']:.2f} | "
            f"{' / '.join(str(x) for x in p['round_medians_ms'])} | {p.get('isa', '?')} | {load} | "
            f"{m['rel_error']:.1e} {'ok' if m['output_ok'] else 'WRONG'} | {libs} |")
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--step", choices=["prepare", "eager"])
    ap.add_argument("--model")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    if args.step == "prepare":
        return step_prepare(args.model, args.work)
    if args.step == "eager":
        return step_eager(args.model, args.work, args.iters)
    priority = match_autogroup_nice()
    pteron = str(args.build / "tools" / "cli" / "pteron")
    doc = {"threads": THREADS, "rounds": args.rounds, "iters": args.iters, "priority": priority,
           "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "models": {}}
    with tempfile.TemporaryDirectory(prefix="pteron-families-") as tmp:
        for name in args.models.split(","):
            log(f"{name} ...")
            doc["models"][name] = bench_model(name, Path(tmp), pteron, args.rounds, args.iters)
    max_load = max(s["max_load_average"] for m in doc["models"].values() for s in (m["eager"], m["pteron"]))
    args.results = results_folder(args.results, RESULTS, max_load, REPO / "bench" / "work", log)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "families.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_markdown(doc, args.results / "families.md")
    log(f"wrote {args.results / 'families.md'}")


if __name__ == "__main__":
    main()
