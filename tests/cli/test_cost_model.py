"""The cost model's calibration (`pteron tune`) and the host default it drives: with a
calibration, a region goes to XNNPACK or to the kernel libraries (fp32: optimized; int8: the int8
kernel library) by estimated time, never to the side the calibration says is slower; the same
calibration gives the same program; the estimates are in `inspect --delegation`. Outputs match
PyTorch on either side (float32 atol 1e-4; int8 within 5% of the output range, the int8 tests'
tolerance). A damaged calibration is a one-line error, exit 1, no file written."""

import json
import os
import subprocess

import numpy as np
import pteron
import pytest
import torch
from pteron_cli import assert_one_line_error, pteron_cli

CLASSES = ("conv3x3", "conv", "pointwise", "depthwise", "depthwise_5x5", "depthwise_large", "linear")


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.pw = torch.nn.Conv2d(16, 32, 1)
        self.dw = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.fc = torch.nn.Linear(32, 4)

    def forward(self, x):
        y = torch.nn.functional.relu6(self.dw(torch.relu(self.pw(torch.relu(self.conv(x))))))
        return self.fc(y.mean((2, 3)))


@pytest.fixture(scope="module")
def conv_pt2(tmp_path_factory):
    torch.manual_seed(0)
    x = torch.randn(1, 3, 24, 24)
    model = ConvNet().eval()
    folder = tmp_path_factory.mktemp("cost")
    path = folder / "conv.pt2"
    torch.export.save(torch.export.export(model, (x,)).run_decompositions(), path)
    samples = folder / "cal.npz"
    np.savez(samples, input_0=np.random.default_rng(1).standard_normal((8, 1, 3, 24, 24))
             .astype(np.float32))
    with torch.no_grad():
        return path, samples, x, model(x).numpy()


def write_calibration(path, fast, slow, version=pteron.__version__, fast_ns=0.01, slow_ns=1.0):
    """Every class at `fast_ns` per multiply-add on the `fast` engines and `slow_ns` on the `slow`
    ones (each an (engine, precision) pair), 1 us per call, as pteron `version` measured them."""
    rates = {}
    for (engine, precision), ns in [(e, fast_ns) for e in fast] + [(e, slow_ns) for e in slow]:
        rates.setdefault(engine, {})[precision] = {
            c: {"ns_per_call": 1000.0, "ns_per_mac": ns} for c in CLASSES}
    fields = {"format": 2, "machine": "test", "threads": 1, "created": "2026-12-05T00:00:00Z",
              "rates": rates}
    if version is not None:
        fields["pteron"] = version
    path.write_text(json.dumps(fields))
    return path


def cli(*args, calibration):
    env = dict(os.environ, PTERON_CALIBRATION=str(calibration))
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)


def compile_and_inspect(pt2, out, calibration, *extra):
    run = cli("compile", pt2, "-o", out, "--json", *extra, calibration=calibration)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["calibration"]["path"] == str(calibration)
    delegation = cli("inspect", out, "--delegation", "--json", calibration="off")
    assert delegation.returncode == 0, delegation.stderr
    return report, json.loads(delegation.stdout)


XNN_F32, OPT_F32 = ("xnnpack", "f32"), ("optimized", "f32")
XNN_INT8, OWN_INT8 = ("xnnpack", "int8"), ("cortex-m", "int8")


@pytest.mark.parametrize("quantized", [False, True], ids=["fp32", "int8"])
@pytest.mark.parametrize("xnnpack_faster", [True, False], ids=["xnnpack-faster", "kernels-faster"])
def test_the_default_takes_the_side_the_calibration_says_is_faster(conv_pt2, tmp_path, quantized,
                                                                     xnnpack_faster):
    pt2, samples, x, expected = conv_pt2
    delegate, kernels = (XNN_INT8, OWN_INT8) if quantized else (XNN_F32, OPT_F32)
    fast, slow = ([delegate], [kernels]) if xnnpack_faster else ([kernels], [delegate])
    calibration = write_calibration(tmp_path / "cal.json", fast, slow)
    extra = ["--quantize", "xnnpack", "--calibration", samples] if quantized else []
    pte = tmp_path / "p.pte"
    _, delegation = compile_and_inspect(pt2, pte, calibration, *extra)
    regions = delegation["regions"]["list"]
    if xnnpack_faster:
        assert [r["backend"] for r in regions] == ["xnnpack"]
        cost = regions[0]["report"]["cost_model"]
        assert cost["chosen"] == "xnnpack" and cost["kernels"] == kernels[0]
        assert cost["delegate_ms"] < cost["kernels_ms"]
    else:
        assert regions == []
        library = delegation["library_nodes"]
        reasons = [r for n in library for r in n["reasons"] if r.startswith("xnnpack: cost model:")]
        assert reasons, library
        engines = {n["runs_on"] for n in library if n["op"].startswith("cortex_m::")}
        assert bool(engines) == quantized
    got = pteron.load(str(pte)).forward(x)[0].numpy()
    tolerance = 0.05 * np.abs(expected).max() if quantized else 1e-4
    np.testing.assert_allclose(got, expected, atol=tolerance)


class ShiftNet(torch.nn.Module):
    """Two convolutions around the activation plus its per-channel mean, [N, C, H, W] +
    [N, C, 1, 1], which the int8 kernel library has no pattern for (its add takes equal shapes;
    only its multiply broadcasts)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.b = torch.nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, x):
        y = self.a(x)
        return self.b(y + y.mean((2, 3), keepdim=True))


def test_a_region_stays_where_the_kernels_would_leave_ops_float(tmp_path):
    """The int8 kernels estimated 2.8x faster on the convolutions (0.001 against 0.005 ns per
    multiply-add, 1 us a call), but their lowering would leave the broadcast add float
    between a dequantize and a quantize, with transposes around it: about 21 us of conversions
    for its 33 K elements, more than the kernels' gain. The region stays on XNNPACK, and inspect
    says why."""
    torch.manual_seed(0)
    model, x = ShiftNet().eval(), torch.randn(1, 3, 32, 32)
    pt2 = tmp_path / "shift.pt2"
    torch.export.save(torch.export.export(model, (x,)).run_decompositions(), pt2)
    samples = tmp_path / "cal.npz"
    np.savez(samples, input_0=np.random.default_rng(1).standard_normal((8, 1, 3, 32, 32))
             .astype(np.float32))
    calibration = write_calibration(tmp_path / "cal.json", [OWN_INT8], [XNN_INT8],
                                    fast_ns=0.001, slow_ns=0.005)
    pte = tmp_path / "p.pte"
    _, delegation = compile_and_inspect(pt2, pte, calibration, "--quantize", "xnnpack",
                                        "--calibration", samples)
    (region,) = delegation["regions"]["list"]
    cost = region["report"]["cost_model"]
    assert cost["kernels_ms"] * 1.25 < cost["delegate_ms"], cost  # faster without what it leaves
    assert any(op.startswith("aten::add") for op in cost["kernels_leave"]), cost
    assert (cost["kernels_ms"] + cost["kernels_leave_ms"]) * 1.25 >= cost["delegate_ms"], cost
    assert cost["chosen"] == "xnnpack"
    text = cli("inspect", pte, "--delegation", calibration="off")
    assert "cortex-m would leave aten::add" in text.stdout
    with torch.no_grad():
        expected = model(x).numpy()
    got = pteron.load(str(pte)).forward(x)[0].numpy()
    # int8 through two convolutions and an add of two ranges: within a tenth of the output's range.
    np.testing.assert_allclose(got, expected, atol=0.1 * np.abs(expected).max())


def test_one_calibration_gives_one_program(conv_pt2, tmp_path):
    pt2, samples, _, _ = conv_pt2
    calibration = write_calibration(tmp_path / "cal.json", [OWN_INT8], [XNN_INT8])
    programs = []
    for name in ("a.pte", "b.pte"):
        run = cli("compile", pt2, "-o", tmp_path / name, "--quantize", "xnnpack", "--calibration",
                  samples, calibration=calibration)
        assert run.returncode == 0, run.stderr
        programs.append((tmp_path / name).read_bytes())
    assert programs[0] == programs[1]


def test_a_program_for_another_target_ignores_the_calibration(conv_pt2, tmp_path):
    pt2, samples, _, _ = conv_pt2
    calibration = write_calibration(tmp_path / "cal.json", [OWN_INT8], [XNN_INT8])
    run = cli("compile", pt2, "-o", tmp_path / "m.pte", "--target", "cortex-m55-an547",
              "--quantize", "cortex-m", "--calibration", samples, "--json", calibration=calibration)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["calibration"] is None


def cached_env(cache):
    """The environment of a user who never set PTERON_CALIBRATION, with the cache in `cache`."""
    env = {k: v for k, v in os.environ.items() if k != "PTERON_CALIBRATION"}
    env["PTERON_CACHE_DIR"] = str(cache)
    return env


def test_a_default_compile_measures_the_machine_once(conv_pt2, tmp_path):
    """The first host compile on the default backends whose cache holds no usable calibration (here
    one of another pteron version) measures the machine as `pteron tune` does and caches it; the
    next compile reads it without measuring and gives the same program; a compile naming its
    backends never measures."""
    pt2, samples, x, expected = conv_pt2
    cache = tmp_path / "cache"
    env = cached_env(cache)
    quantize = ["--quantize", "xnnpack", "--calibration", samples]

    def compile_(name, *extra):
        run = subprocess.run([pteron_cli(), "compile", pt2, "-o", tmp_path / name, "--json",
                              *quantize, *extra], capture_output=True, text=True, env=env,
                             timeout=600)
        assert run.returncode == 0, run.stderr
        return run, json.loads(run.stdout)

    compile_("named.pte", "--backends", "cortex-m,optimized,portable")
    assert not cache.exists()
    # A calibration of another pteron in this machine's cache file.
    run = subprocess.run([pteron_cli(), "tune", "--rounds", "1", "--json"], capture_output=True,
                         text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    path = json.loads(run.stdout)["path"]
    old = json.loads(open(path).read())
    old["pteron"] = "0.0.1"
    open(path, "w").write(json.dumps(old))

    run, first = compile_("first.pte")
    assert first["calibration"]["path"] == path
    assert json.loads(open(path).read())["pteron"] == pteron.__version__
    assert any("calibrated this machine" in n and "0.0.1" in n for n in first["notes"]), first
    _, second = compile_("second.pte")
    assert second["calibration"] == first["calibration"]
    assert not any("calibrated" in n for n in second["notes"])
    assert (tmp_path / "first.pte").read_bytes() == (tmp_path / "second.pte").read_bytes()
    got = pteron.load(str(tmp_path / "second.pte")).forward(x)[0].numpy()
    np.testing.assert_allclose(got, expected, atol=0.05 * np.abs(expected).max())


def test_the_python_api_measures_the_machine_on_first_use(conv_pt2, tmp_path, monkeypatch):
    pt2, _, x, expected = conv_pt2
    monkeypatch.delenv("PTERON_CALIBRATION")
    monkeypatch.setenv("PTERON_CACHE_DIR", str(tmp_path))
    lowered = pteron.to_edge_transform_and_lower(str(pt2))
    assert lowered.report["calibration"].endswith(
        json.loads(next(tmp_path.glob("calibration-*.json")).read_text())["created"])
    lowered.save(str(tmp_path / "p.pte"))
    got = pteron.load(str(tmp_path / "p.pte")).forward(x)[0].numpy()
    np.testing.assert_allclose(got, expected, atol=1e-4)


@pytest.mark.parametrize("version", [None, "0.0.1"], ids=["no-version", "another-version"])
def test_a_calibration_of_another_pteron_is_not_used(conv_pt2, tmp_path, version):
    """Rates measured on other kernels may not hold: the compile goes on without them (the program
    is the uncalibrated one) and its report says why and what to run."""
    pt2, samples, _, _ = conv_pt2
    quantize = ["--quantize", "xnnpack", "--calibration", samples]
    plain = cli("compile", pt2, "-o", tmp_path / "plain.pte", *quantize, calibration="off")
    assert plain.returncode == 0, plain.stderr
    calibration = write_calibration(tmp_path / "cal.json", [OWN_INT8], [XNN_INT8], version=version)
    run = cli("compile", pt2, "-o", tmp_path / "p.pte", "--json", *quantize,
              calibration=calibration)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["calibration"] is None
    (note,) = [n for n in report["notes"] if str(calibration) in n]
    assert f"this is pteron {pteron.__version__}" in note and "run `pteron tune` again" in note
    assert (tmp_path / "p.pte").read_bytes() == (tmp_path / "plain.pte").read_bytes()


def test_version_is_one_string(tmp_path):
    run = cli("--version", calibration="off")
    assert run.returncode == 0 and run.stdout.strip() == pteron.__version__
    assert pteron.__version__.count(".") == 2


@pytest.mark.parametrize("text,fragment", [
    ("{not json", "not a JSON object"),
    ('{"format": 7}', "run `pteron tune` again"),
    ('{"format": 2, "machine": "m", "threads": 1, "rates": {"xnnpack": {"f32": {"conv": '
     '{"ns_per_call": 0, "ns_per_mac": -1}}}}}', "xnnpack f32 conv has no usable rate"),
])
def test_a_damaged_calibration_is_a_one_line_error(conv_pt2, tmp_path, text, fragment):
    pt2, _, _, _ = conv_pt2
    calibration = tmp_path / "cal.json"
    calibration.write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    run = cli("compile", pt2, "-o", out / "p.pte", calibration=calibration)
    assert_one_line_error(run, str(calibration), fragment)
    assert list(out.iterdir()) == []


def test_tune_measures_every_engine_and_class(conv_pt2, tmp_path):
    """`pteron tune` on this machine, one round: a rate for each op class on each engine, and a
    host compile reading the file it wrote."""
    pt2, samples, x, expected = conv_pt2
    path = tmp_path / "calibration.json"
    run = cli("tune", "--threads", 1, "--rounds", 1, "--output", path, "--json", calibration="off")
    assert run.returncode == 0, run.stderr
    written = json.loads(path.read_text())
    assert json.loads(run.stdout)["path"] == str(path)
    assert written["threads"] == 1 and "1 thread" in written["machine"]
    assert written["pteron"] == pteron.__version__
    engines = {(e, p) for e, precisions in written["rates"].items() for p in precisions}
    assert engines == {XNN_F32, OPT_F32, XNN_INT8, OWN_INT8}
    for precisions in written["rates"].values():
        for classes in precisions.values():
            assert set(classes) == set(CLASSES)
            for rate in classes.values():
                assert rate["ns_per_mac"] > 0 and rate["ns_per_call"] >= 0
    # fp32 programs: a cost per program and one per byte crossing a region's boundary.
    assert set(written["boundary_ns_per_byte"]) == {"xnnpack", "optimized"}
    for engine, precisions in written["boundary_ns_per_byte"].items():
        assert set(precisions) == {"f32"} and precisions["f32"] >= 0
        assert written["program_ns"][engine]["f32"] >= 0
    for extra in ([], ["--quantize", "xnnpack", "--calibration", samples]):
        report, delegation = compile_and_inspect(pt2, tmp_path / "p.pte", path, *extra)
        assert report["calibration"]["machine"].startswith(written["machine"] + ", measured ")
        # Whichever side the measured rates favour, a kept region is never clearly the slower
        # estimate.
        for region in delegation["regions"]["list"]:
            cost = region["report"]["cost_model"]
            assert cost["chosen"] == "xnnpack"
            assert cost["delegate_ms"] <= cost["kernels_ms"] * 1.25  # RegionCost::kMargin


@pytest.mark.parametrize("args,fragment", [(["--rounds", "0"], "--rounds must be 1 to 20"),
                                           (["--threads", "-3"], "--threads -3 is out of range")])
def test_tune_bad_options(tmp_path, args, fragment):
    run = cli("tune", "--output", tmp_path / "c.json", *args, calibration="off")
    assert_one_line_error(run, fragment)
    assert list(tmp_path.iterdir()) == []


def test_the_python_api_reads_the_calibration_as_the_cli_does(conv_pt2, tmp_path, monkeypatch):
    pt2, samples, _, _ = conv_pt2
    calibration = write_calibration(tmp_path / "cal.json", [OWN_INT8], [XNN_INT8])
    run = cli("compile", pt2, "-o", tmp_path / "cli.pte", "--quantize", "xnnpack", "--calibration",
              samples, calibration=calibration)
    assert run.returncode == 0, run.stderr
    monkeypatch.setenv("PTERON_CALIBRATION", str(calibration))
    inputs = np.load(samples)["input_0"]
    lowered = pteron.to_edge_transform_and_lower(
        str(pt2), quantize="xnnpack", calibration=[(torch.from_numpy(s),) for s in inputs],
        progress=False)
    assert lowered.report["calibration"] == "test, measured 2026-12-05T00:00:00Z"
    assert lowered.report["delegated_regions"] == []
    assert lowered.buffer() == (tmp_path / "cli.pte").read_bytes()
