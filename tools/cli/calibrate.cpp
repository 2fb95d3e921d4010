#include "tools/cli/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "compiler/cost/host_calibration.h"
#include "compiler/ir/work.h"
#include "compiler/partition/registry.h"
#include "compiler/version.h"
#include "runtime/host/temp_files.h"
#include "tools/cli/commands.h"
#include "tools/cli/tune.h"

namespace pteron::cli {
namespace {

namespace ir = compiler::ir;
using compiler::cost::OpClass;

// ---- the micro-programs ----

// One layer of an op class: a shape-preserving convolution or linear. Each class is measured
// at two sizes, one large enough that its time is the kernel's (0.1-1 ms) and one as small as
// the layers of keyword-spotting nets and classifier heads, so that a rate per multiply-add
// and a cost per call can both be fitted.
struct Layer {
  OpClass op_class;
  std::vector<int64_t> input;   // [1, C, H, W] or [rows, K]
  std::vector<int64_t> weight;  // [Cout, Cin / groups, kh, kw] or [N, K]
  int64_t groups = 1;
  int64_t padding = 0;
  int chain = 4;  // layers in the long chain (small layers: more, so their time shows)
};

std::vector<Layer> layers_of(OpClass c) {
  switch (c) {
    case OpClass::kConv3x3:
      return {{c, {1, 64, 28, 28}, {64, 64, 3, 3}, 1, 1, 4},
              {c, {1, 32, 10, 10}, {32, 32, 3, 3}, 1, 1, 8}};
    case OpClass::kConv:  // 5x5: the general path (im2col), not the 3x3 stride-1 one
      return {{c, {1, 32, 28, 28}, {32, 32, 5, 5}, 1, 2, 4},
              {c, {1, 16, 10, 10}, {16, 16, 5, 5}, 1, 2, 8}};
    case OpClass::kPointwise:
      return {{c, {1, 128, 28, 28}, {128, 128, 1, 1}, 1, 0, 4},
              {c, {1, 64, 10, 10}, {64, 64, 1, 1}, 1, 0, 8}};
    case OpClass::kDepthwise:
      return {{c, {1, 256, 28, 28}, {256, 1, 3, 3}, 256, 1, 4},
              {c, {1, 64, 10, 10}, {64, 1, 3, 3}, 64, 1, 8}};
    case OpClass::kDepthwise5x5:
      return {{c, {1, 192, 28, 28}, {192, 1, 5, 5}, 192, 2, 4},
              {c, {1, 64, 10, 10}, {64, 1, 5, 5}, 64, 2, 8}};
    case OpClass::kDepthwiseLarge:  // 7x7, ConvNeXt's
      return {{c, {1, 128, 28, 28}, {128, 1, 7, 7}, 128, 3, 4},
              {c, {1, 64, 10, 10}, {64, 1, 7, 7}, 64, 3, 8}};
    case OpClass::kLinear:
      return {{c, {64, 512}, {512, 512}, 1, 0, 4}, {c, {1, 256}, {256, 256}, 1, 0, 8}};
    case OpClass::kOther:
      break;
  }
  return {};
}

ir::TensorSpec f32(std::vector<int64_t> sizes) {
  return ir::TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}

// Uniform values of variance 1 / fan_in (a chain keeps its scale), from a fixed seed.
std::vector<uint8_t> weights(size_t count, int64_t fan_in, uint32_t seed) {
  std::vector<float> v(count);
  const float bound = std::sqrt(3.0f / static_cast<float>(fan_in));
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = bound * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f);
  }
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

ir::Graph chain(const Layer& layer, int layers) {
  const auto& registry = ir::OpSchemaRegistry::global();
  ir::Graph g;
  ir::ValueId x = g.add_input("x", f32(layer.input));
  const int64_t fan_in = product(layer.weight) / layer.weight[0];
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    const ir::ValueId w = g.add_constant(
        "w" + n, f32(layer.weight),
        ir::ConstantData::owned(weights(static_cast<size_t>(product(layer.weight)), fan_in, 7 + i),
                                "w" + n));
    const ir::ValueId b =
        g.add_constant("b" + n, f32({layer.weight[0]}),
                       ir::ConstantData::owned(
                           weights(static_cast<size_t>(layer.weight[0]), fan_in, 99 + i), "b" + n));
    ir::NodeId node;
    if (layer.op_class == OpClass::kLinear) {
      node = g.add_node(*registry.find("aten::linear.default"),
                        {ir::TensorRef{x}, ir::TensorRef{w}, ir::TensorRef{b}},
                        {ir::NewValue{"y" + n, f32(layer.input)}});
    } else {
      const std::vector<int64_t> one = {1, 1}, pad = {layer.padding, layer.padding}, zero = {0, 0};
      node = g.add_node(*registry.find("aten::convolution.default"),
                        {ir::TensorRef{x}, ir::TensorRef{w}, ir::TensorRef{b}, one, pad, one, false,
                         zero, layer.groups},
                        {ir::NewValue{"y" + n, f32(layer.input)}});
    }
    x = g.node(node).outputs[0];
  }
  g.set_outputs({x});
  return g;
}

compiler::CalibrationData samples(const Layer& layer) {
  constexpr int64_t kSamples = 4;
  compiler::CalibrationInput in{ScalarType::Float, {kSamples}, {}};
  in.shape.insert(in.shape.end(), layer.input.begin(), layer.input.end());
  in.data = weights(static_cast<size_t>(product(in.shape)), 3, 12345);  // variance 1
  return {in};
}

// An engine as the calibration names it, and the backend list that runs a chain on it alone.
struct Engine {
  std::string name, precision;
  std::vector<std::string> backends;
};

std::vector<Engine> engines() {
  std::vector<Engine> out;
  const std::vector<std::string> backends = compiler::available_backends();
  const bool xnnpack = std::find(backends.begin(), backends.end(), "xnnpack") != backends.end();
  if (xnnpack) out.push_back({"xnnpack", "f32", {"xnnpack", "portable"}});
  if (compiler::is_kernel_library("optimized"))
    out.push_back({"optimized", "f32", {"optimized", "portable"}});
  if (xnnpack) out.push_back({"xnnpack", "int8", {"xnnpack", "portable"}});
  if (compiler::is_kernel_library("cortex-m"))
    out.push_back({"cortex-m", "int8", {"cortex-m", "optimized", "portable"}});
  return out;
}

std::string compile_chain(const Layer& layer, int layers, const Engine& engine,
                          const std::string& path) {
  ir::Graph g = chain(layer, layers);
  compiler::CompileOptions options;
  options.target = "host";
  options.backends = engine.backends;
  options.output_path = path;
  options.strip_debug_info = true;
  compiler::QuantizeOptions quantize;
  if (engine.precision == "int8") {
    quantize.scheme = compiler::QuantScheme::Xnnpack;
    quantize.calibration = samples(layer);
    options.quantize = &quantize;
  }
  const compiler::CompileResult r = compiler::compile_graph(g, options);
  // A chain the delegate did not take measures the kernels, not the delegate.
  if (engine.name == "xnnpack" && r.report.regions.empty())
    throw UserError("tune: XNNPACK did not take the " +
                    std::string(compiler::cost::op_class_name(layer.op_class)) + " chain");
  return path;
}

// ---- a program's own costs ----

// One class and size: the bytes of 4-D activations its one-layer program takes and gives (a
// linear's are 2-D: none), and the median of its time beyond the layer.
struct ProgramPoint {
  double bytes, ns;
};

double boundary_bytes_of(const Layer& layer) {
  if (layer.input.size() != 4) return 0;
  return 2.0 * static_cast<double>(product(layer.input)) * sizeof(float);
}

struct ProgramFit {
  double ns, ns_per_byte;
};

// ns = a + b * bytes by least squares over the points, a and b kept >= 0 (noise can tip either
// below); `median` alone where the points do not tell bytes apart.
ProgramFit fit_program(const std::vector<ProgramPoint>& points, double median) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const ProgramPoint& p : points) {
    n += 1, sx += p.bytes, sy += p.ns, sxx += p.bytes * p.bytes, sxy += p.bytes * p.ns;
  }
  const double var = n * sxx - sx * sx;
  if (n < 2 || !(var > 0)) return {median, 0};
  double b = (n * sxy - sx * sy) / var;
  double a = (sy - b * sx) / n;
  if (b < 0) return {median, 0};
  if (a < 0) a = 0, b = sxy / sxx;
  return {a, b};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

compiler::cost::Calibration calibrate(int threads, int rounds,
                                      const std::function<void(const std::string&)>& progress) {
  const host::TempDir programs("pteron-tune");  // the micro-programs, removed at the end
  if (!programs.ok())
    throw UserError("tune: cannot make a temporary folder in " + programs.parent().string());
  const std::string dir = programs.path().string();

  compiler::cost::Calibration c;
  c.machine = compiler::cost::machine_description(threads);
  c.threads = threads;
  c.pteron = std::string(compiler::pteron_version());
  c.created = utc_now();
  const std::vector<Engine> list = engines();
  // Per engine: a one-layer program's time beyond its layer, per class, size and round; and
  // per class and size its median with the bytes of 4-D activations the layer takes and gives.
  std::map<std::string, std::vector<double>> program_ns;
  std::map<std::string, std::vector<ProgramPoint>> program_points;
  for (OpClass op_class : compiler::cost::kOpClasses) {
    const std::vector<Layer> sizes = layers_of(op_class);
    const std::string name(compiler::cost::op_class_name(op_class));
    // Per engine, per size: a chain of one layer and a chain of layer.chain layers.
    std::vector<std::string> paths;
    try {
      for (size_t e = 0; e < list.size(); ++e)
        for (size_t z = 0; z < sizes.size(); ++z)
          for (int layers : {1, sizes[z].chain})
            paths.push_back(compile_chain(sizes[z], layers, list[e],
                                          dir + "/" + name + "-" + std::to_string(e) + "-" +
                                              std::to_string(z) + "-" + std::to_string(layers) +
                                              ".pte"));
    } catch (const compiler::CompileError& e) {
      throw UserError("tune: the " + name + " chain did not compile: " + e.what());
    }
    std::vector<TunedProgram> timed;
    try {
      timed = time_programs(paths, rounds, 150);
    } catch (const UserError& e) {
      throw UserError("tune: the " + name + " chain: " + e.what());
    }
    std::vector<double> macs;
    for (const Layer& layer : sizes) {
      ir::Graph one = chain(layer, 1);
      macs.push_back(static_cast<double>(compiler::multiply_adds(one, one.node(one.nodes()[0]))));
    }
    std::string line = name + ":";
    size_t next = 0;
    for (const Engine& engine : list) {
      // The extra layers' time over the one-layer chain, per layer: free of the program's own
      // costs (input copy, quantize, dequantize). A difference lost in noise falls back to the
      // long chain's mean.
      // Per round, from the two chains timed next to each other in it, then the median over
      // the rounds: this VM's speed moves by up to 2x over minutes, and a difference of two
      // medians taken in different rounds mixes its modes.
      std::vector<double> layer_ns;
      for (const Layer& layer : sizes) {
        const TunedProgram &one = timed[next], &many = timed[next + 1];
        next += 2;
        std::vector<double> per_round, extra;
        for (size_t r = 0; r < one.round_medians_ms.size(); ++r) {
          const double t1 = one.round_medians_ms[r], tn = many.round_medians_ms[r];
          per_round.push_back(1e6 * (tn > t1 ? (tn - t1) / (layer.chain - 1) : tn / layer.chain));
          extra.push_back(std::max(0.0, 1e6 * t1 - per_round.back()));
        }
        const std::string key = engine.name + "/" + engine.precision;
        program_ns[key].insert(program_ns[key].end(), extra.begin(), extra.end());
        std::sort(extra.begin(), extra.end());
        program_points[key].push_back({boundary_bytes_of(layer), extra[extra.size() / 2]});
        std::sort(per_round.begin(), per_round.end());
        layer_ns.push_back(per_round[per_round.size() / 2]);
      }
      // time = per call + per multiply-add x MACs, through the large and the small point.
      compiler::cost::Rate r;
      r.ns_per_mac = (layer_ns[0] - layer_ns[1]) / (macs[0] - macs[1]);
      r.ns_per_call = layer_ns[1] - r.ns_per_mac * macs[1];
      if (!(r.ns_per_mac > 0) || r.ns_per_call < 0) r = {0, layer_ns[0] / macs[0]};
      c.rates[engine.name][engine.precision][name] = r;
      char buf[128];
      std::snprintf(buf, sizeof buf, "  %s %s %.1f GMAC/s + %.1f us/call", engine.name.c_str(),
                    engine.precision.c_str(), 1.0 / r.ns_per_mac, r.ns_per_call * 1e-3);
      line += buf;
    }
    if (progress) progress(line);
  }
  std::string line = "program:";
  for (const Engine& engine : list) {
    const std::string key = engine.name + "/" + engine.precision;
    std::vector<double>& v = program_ns[key];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    char buf[128];
    if (engine.precision == "f32") {
      // fp32 regions cross their boundaries as 4-D float values: a cost per program and one
      // per byte (int8 regions keep the median alone; what crosses them is not float).
      const ProgramFit fit = fit_program(program_points[key], v[v.size() / 2]);
      c.program_ns[engine.name][engine.precision] = fit.ns;
      c.boundary_ns_per_byte[engine.name][engine.precision] = fit.ns_per_byte;
      std::snprintf(buf, sizeof buf, "  %s %s %.1f us + %.3f ns/byte", engine.name.c_str(),
                    engine.precision.c_str(), fit.ns * 1e-3, fit.ns_per_byte);
    } else {
      c.program_ns[engine.name][engine.precision] = v[v.size() / 2];
      std::snprintf(buf, sizeof buf, "  %s %s %.1f us", engine.name.c_str(),
                    engine.precision.c_str(), v[v.size() / 2] * 1e-3);
    }
    line += buf;
  }
  if (progress) progress(line + " beyond its layer");
  return c;
}

void write_calibration(const std::string& path, const compiler::cost::Calibration& c) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << c.to_json();
    if (!out) throw UserError(path + ": cannot write the calibration");
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    throw UserError(path + ": cannot write the calibration");
  }
}

compiler::cost::HostCalibration calibrate_on_first_use(compiler::cost::HostCalibration host,
                                                       int threads, bool quiet) {
  const std::string why = host.note.empty() ? "no calibration of this machine yet" : host.note;
  if (!quiet)
    std::fprintf(stderr,
                 "[tune] %s: measuring it once for the cost model (about 20 s; `pteron tune` "
                 "measures again, PTERON_CALIBRATION=off skips it)\n",
                 why.c_str());
  try {
    const compiler::cost::Calibration c =
        calibrate(threads, kTuneRounds, [&](const std::string& line) {
          if (!quiet) std::fprintf(stderr, "[tune] %s\n", line.c_str());
        });
    write_calibration(host.cache_path, c);
  } catch (const std::exception& e) {
    host.note = std::string("could not calibrate this machine (") + e.what() +
                "): the partitioners' fixed rules decided";
    return host;
  }
  compiler::cost::HostCalibration measured = compiler::cost::host_calibration(threads);
  measured.note =
      "calibrated this machine for the cost model on first use (" + why + "): " + host.cache_path;
  return measured;
}

}  // namespace pteron::cli
