"""`pteron explore`: the standalone HTML page renders in headless Chromium (Debian package
`chromium`, installed by `make`) with the nodes, delegate regions, boundary edges, details,
timing overlay and memory plan the program has, and the screenshot is not blank.

Programs: ExecuTorch's transformer_block (61 kernel calls, views elided into shared storage),
a pteron XNNPACK-mixed transformer block carrying graph info (tests/fixtures/explorer), and
mobilenet_v2 for the time to open a larger program.
"""

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
ET = REPO / "tests" / "fixtures" / "executorch"
MIXED = REPO / "tests" / "fixtures" / "explorer" / "transformer_block_xnnpack.pte"
BACKEND_RGB = (0xFF, 0xCC, 0x80)  # first backend colour in explorer.js's palette


def chromium() -> str:
    found = shutil.which("chromium")
    assert found, "no chromium: `make deps` installs the Debian package"
    return found


def explore(tmp_path, program, *extra) -> Path:
    out = tmp_path / (Path(program).stem + ".html")
    done = subprocess.run([pteron_cli(), "explore", str(program), "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return out


def browse(tmp_path, html: Path, fragment="", screenshot=None, size=(700, 450)) -> str:
    """The DOM after the page's script ran (or a screenshot), from headless Chromium."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--window-size={size[0]},{size[1]}"]
    cmd += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    done = subprocess.run(cmd + [html.as_uri() + fragment], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def embedded(html: Path) -> dict:
    text = html.read_text()
    return json.loads(re.search(r'id="program-data">(.*?)</script>', text, re.S).group(1))


def count(dom: str, pattern: str) -> int:
    return len(re.findall(pattern, dom))


def test_portable_program_graph_and_memory_plan(tmp_path):
    html = explore(tmp_path, ET / "transformer_block.pte")
    data = embedded(html)
    method = data["methods"][0]
    dom = browse(tmp_path, html)
    assert 'data-rendered="1"' in dom
    kernels = [i for i in method["instructions"] if i["kind"] == "kernel"]
    assert len(kernels) == 61
    assert count(dom, r'<g class="node kernel') == 61
    assert count(dom, r'<g class="node io') == 2  # one input, one output
    ops = re.findall(r'<g class="node kernel[^"]*" data-node="\d+" data-op="([^"]+)"', dom)
    assert sorted(ops) == sorted(i["op"] for i in kernels)
    # Every instruction but the first reads something produced earlier: views ExecuTorch elides
    # are followed through their shared arena bytes, so the graph is one connected chain.
    edges = count(dom, r'<path class="edge')
    assert edges >= 61
    assert count(dom, r'class="edge boundary') == 0  # no delegates here
    # Memory plan: one rectangle per planned tensor with a lifetime, inside its arena.
    planned = [v for v in method["values"] if v.get("mem_id") and "first" in v]
    assert count(dom, r'<rect class="tensor') == len(planned) > 50
    for v in planned:
        assert v["first"] <= v["last"]
        assert v["offset"] + v["bytes"] <= method["arenas"][v["mem_id"] - 1]["bytes"]


def test_mixed_program_regions_boundaries_and_graph_info(tmp_path):
    html = explore(tmp_path, MIXED)
    data = embedded(html)
    gi = data["graph_info"]
    assert gi is not None, "the fixture carries pteron.graph_info"
    method = data["methods"][0]
    calls = [i for i, ins in enumerate(method["instructions"]) if ins["kind"] == "delegate"]
    assert len(calls) == 8
    first_kernel = next(i for i, ins in enumerate(method["instructions"]) if ins["kind"] == "kernel")
    dom = browse(tmp_path, html, f"#expand&instruction={first_kernel}")
    regions = re.findall(r'<g class="node delegate region[^"]*"[^>]*data-backend="([^"]+)"', dom)
    assert regions == ["PteronXnnpackBackend"] * 8
    assert count(dom, r'<g class="node kernel') == 47
    # Kernel <-> delegate edges are marked, both ways, for every region.
    assert count(dom, r'class="edge boundary') >= 2 * 8
    # Expanded regions list their graph nodes (from graph info).
    inner = sum(len(gi["regions"][gi["instructions"][i]["region"]]["nodes"]) for i in calls)
    assert count(dom, r'class="inner-node"') == inner
    # Details of the selected kernel: its arena placement and graph info (module, source line,
    # why the partitioner left it).
    details = re.search(r'<div id="details">(.*?)</div>', dom, re.S).group(1)
    assert "aten::native_layer_norm.out" in details
    assert "arena 1 @" in details
    assert "module layers.0.ln1" in details
    assert "transformer_block.py:" in details
    assert "not delegated: xnnpack:" in details


def test_timing_overlay_from_etdump(tmp_path):
    trace = tmp_path / "trace"
    done = subprocess.run([pteron_cli(), "profile", str(ET / "transformer_block.pte"), "--inputs",
                           str(ET / "transformer_block.npz"), "--iters", "3", "-o", str(trace)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    html = explore(tmp_path, ET / "transformer_block.pte", "--trace", f"{trace}.etdp")
    timing = embedded(html)["methods"][0]["timing"]
    assert len(timing["instruction_ms"]) == 61
    assert all(ms is not None and ms >= 0 for ms in timing["instruction_ms"])
    assert timing["summary"]["runs"] == 3
    dom = browse(tmp_path, html)
    assert count(dom, r"#\d+ +\d+\.\d{3} ms<") == 61
    assert "not covered" in dom


def test_trace_of_another_program_is_a_one_line_error(tmp_path):
    bogus = tmp_path / "bogus.etdp"
    bogus.write_bytes(b"not an etdump at all")
    done = subprocess.run([pteron_cli(), "explore", str(ET / "add.pte"), "--trace", str(bogus),
                           "-o", str(tmp_path / "x.html")], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"pteron: error: {bogus}: not an ETDump file (size-prefixed flatbuffer with identifier ED00)"]


def read_png(path: Path) -> np.ndarray:
    """RGB pixels of an 8-bit RGB/RGBA PNG (Chromium's screenshots), without extra packages."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6)
    bpp = 3 if ctype == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), np.int32)
    prev = np.zeros(w * bpp, np.int32)
    for y in range(h):
        f, cur = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 1:
            cur = np.cumsum(cur.reshape(w, bpp), axis=0).reshape(-1) & 255
        elif f == 2:
            cur = (cur + prev) & 255
        elif f in (3, 4):
            cur = cur.tolist()
            up = prev.tolist()
            for x in range(w * bpp):
                a = cur[x - bpp] if x >= bpp else 0
                b = up[x]
                if f == 3:
                    cur[x] = (cur[x] + ((a + b) >> 1)) & 255
                else:
                    c = up[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[x] = (cur[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.array(cur, np.int32)
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3]


def test_screenshot_is_not_blank(tmp_path):
    html = explore(tmp_path, MIXED)
    png = tmp_path / "mixed.png"
    browse(tmp_path, html, screenshot=png, size=(640, 400))
    pixels = read_png(png)
    assert pixels.shape == (400, 640, 3)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 50, "a blank or nearly blank page"
    # The header bar is dark, and an XNNPACK region is drawn in its backend colour.
    assert pixels[5:30, :, :].mean() < 100
    assert (np.abs(pixels - np.array(BACKEND_RGB)).sum(axis=2) < 6).sum() > 500


@pytest.mark.parametrize("program", [ET / "mobilenet_v2.pte"])
def test_large_program_draws_every_instruction(tmp_path, program):
    """How fast it opens is measured by `make bench-explorer`, not here."""
    html = explore(tmp_path, program)
    dom = browse(tmp_path, html)
    instructions = len(embedded(html)["methods"][0]["instructions"])
    assert count(dom, r'<g class="node kernel') == instructions


def test_long_program_draws_only_the_visible_band(tmp_path):
    """1,500 instructions (OPT-125M's size): the page draws the nodes near the view, and a deep
    link to an instruction far down draws the band around it."""
    html = explore(tmp_path, REPO / "tests" / "fixtures" / "explorer" / "mlp_1500.pte")
    dom = browse(tmp_path, html)
    drawn = count(dom, r'<g class="node ')
    assert 10 < drawn < 200
    assert 'data-instruction="0"' in dom and 'data-instruction="1499"' not in dom
    dom = browse(tmp_path, html, "#instruction=1000")
    drawn = [int(i) for i in re.findall(r'data-instruction="(\d+)"', dom)]
    assert min(drawn) < 1000 < max(drawn) and len(drawn) < 200
    assert "instruction #1000 (kernel)" in dom


def test_damaged_programs_fail_with_one_line(tmp_path):
    """Every 4th byte of add.pte flipped: explore writes a page or exits 1 with one error line,
    never crashes (a flipped byte may leave a valid program)."""
    data = (ET / "add.pte").read_bytes()
    program, out = tmp_path / "flip.pte", tmp_path / "flip.html"
    for i in range(0, len(data), 4):
        damaged = bytearray(data)
        damaged[i] ^= 0xFF
        program.write_bytes(bytes(damaged))
        done = subprocess.run([pteron_cli(), "explore", str(program), "-o", str(out)], capture_output=True, text=True,
                              timeout=20)
        assert done.returncode in (0, 1), (i, done.returncode, done.stderr)
        if done.returncode == 1:
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("pteron: error: "), (i, done.stderr)
