#include "tests/compiler/passes/graph_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "compiler/quantize/calibration.h"

namespace pteron::compiler::testing {
namespace {

// xorshift32: the same numbers on every machine, no <random> distribution differences.
float next_float(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

std::vector<uint8_t> float_bytes(const std::vector<float>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(float));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return bytes;
}

}  // namespace

TensorSpec f32(std::vector<int64_t> sizes) {
  return TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}

TensorSpec spec(ScalarType dtype, std::vector<int64_t> sizes) {
  return TensorSpec::contiguous(dtype, std::move(sizes));
}

const ir::OpSchema& schema(std::string_view op) {
  const ir::OpSchema* s = ir::OpSchemaRegistry::global().find(op);
  if (s == nullptr) throw std::runtime_error("no schema for " + std::string(op));
  return *s;
}

ValueId GraphBuilder::input(const std::string& name, TensorSpec spec) {
  return g_.add_input(g_.unique_name(name), std::move(spec));
}

ValueId GraphBuilder::constant(const std::string& name, TensorSpec spec, std::vector<float> data) {
  if (static_cast<int64_t>(data.size()) != spec.numel()) {
    throw std::runtime_error("constant '" + name + "': " + std::to_string(data.size()) +
                             " values for " + std::to_string(spec.numel()) + " elements");
  }
  return constant_bytes(name, std::move(spec), float_bytes(data));
}

ValueId GraphBuilder::constant(const std::string& name, TensorSpec spec) {
  std::vector<float> data(static_cast<size_t>(spec.numel()));
  for (float& x : data) x = next_float(&seed_);
  return constant(name, std::move(spec), std::move(data));
}

ValueId GraphBuilder::constant_bytes(const std::string& name, TensorSpec spec,
                                     std::vector<uint8_t> bytes) {
  ir::ConstantData data = ir::ConstantData::owned(std::move(bytes), name);
  data.kind = ir::ConstantKind::Parameter;
  return g_.add_constant(g_.unique_name(name), std::move(spec), std::move(data));
}

NodeId GraphBuilder::node(std::string_view op, std::vector<Argument> args,
                          std::vector<TensorSpec> outs, const std::string& name) {
  const ir::OpSchema& s = schema(op);
  // Trailing arguments left out take the schema's defaults, as the frontend fills them.
  for (size_t i = args.size(); i < s.args.size(); ++i) {
    if (!s.args[i].default_value) {
      throw std::runtime_error(std::string(op) + ": argument '" + s.args[i].name + "' is required");
    }
    args.push_back(*s.args[i].default_value);
  }
  const std::string base = name.empty() ? std::string(s.op.name) : name;
  std::vector<std::optional<ir::NewValue>> news;
  for (size_t i = 0; i < outs.size(); ++i) {
    news.push_back(ir::NewValue{g_.unique_name(i == 0 ? base : base + "_" + std::to_string(i)),
                                std::move(outs[i])});
  }
  ir::DebugHandle debug;
  debug.node_name = base;
  return g_.add_node(s, std::move(args), std::move(news), debug);
}

NodeId GraphBuilder::node(std::string_view op, std::vector<Argument> args, TensorSpec out,
                          const std::string& name) {
  return node(op, std::move(args), std::vector<TensorSpec>{std::move(out)}, name);
}

ValueId GraphBuilder::op(std::string_view op, std::vector<Argument> args, TensorSpec out,
                         const std::string& name) {
  return g_.node(node(op, std::move(args), std::move(out), name)).outputs[0];
}

ir::Graph GraphBuilder::finish(std::vector<ValueId> outputs) {
  g_.set_outputs(std::move(outputs));
  g_.verify();
  return std::move(g_);
}

int count(const ir::Graph& g, std::string_view op) {
  int n = 0;
  for (NodeId id : g.nodes()) n += g.node(id).op.str() == op;
  return n;
}

const ir::Node& producer(const ir::Graph& g, ValueId v) { return g.node(g.value(v).producer); }

std::string ops(const ir::Graph& g) {
  std::string s;
  for (NodeId id : g.nodes()) s += (s.empty() ? "" : ", ") + g.node(id).op.str();
  return "[" + s + "]";
}

std::vector<std::vector<uint8_t>> sample_inputs(const ir::Graph& g, uint32_t seed,
                                                int64_t index_bound) {
  std::vector<std::vector<uint8_t>> out;
  for (ValueId v : g.inputs()) {
    const TensorSpec& s = g.value(v).spec;
    const size_t n = static_cast<size_t>(s.numel());
    std::vector<uint8_t> bytes(s.nbytes());
    for (size_t i = 0; i < n; ++i) {
      switch (s.dtype) {
        case ScalarType::Float: {
          const float x = next_float(&seed);
          std::memcpy(bytes.data() + i * sizeof(float), &x, sizeof(float));
          break;
        }
        case ScalarType::Bool:
          bytes[i] = (i % 3) == 2;  // every third element set
          break;
        case ScalarType::Long: {
          const int64_t x = static_cast<int64_t>(i) % index_bound;
          std::memcpy(bytes.data() + i * sizeof(int64_t), &x, sizeof(int64_t));
          break;
        }
        default:
          throw std::runtime_error("sample_inputs: unsupported input dtype");
      }
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

std::vector<std::vector<float>> run(const ir::Graph& g,
                                    const std::vector<std::vector<uint8_t>>& inputs) {
  CalibrationData data;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const TensorSpec& s = g.value(g.inputs()[i]).spec;
    CalibrationInput in;
    in.dtype = s.dtype;
    in.shape = {1};
    in.shape.insert(in.shape.end(), s.sizes.begin(), s.sizes.end());
    in.data = inputs.at(i);
    data.push_back(std::move(in));
  }
  std::vector<bool> wanted(g.value_capacity(), false);
  for (ValueId v : g.outputs()) wanted[v] = true;
  std::map<ValueId, std::vector<float>> seen;
  run_calibration(g, data, wanted,
                  [&](ValueId v, std::span<const float> x) { seen[v].assign(x.begin(), x.end()); });
  // Constant outputs (a folded graph) are never computed: read their bytes.
  std::vector<std::vector<float>> out;
  for (ValueId v : g.outputs()) {
    const ir::Value& value = g.value(v);
    if (value.is_constant() && value.spec.dtype == ScalarType::Float) {
      std::vector<float> x(static_cast<size_t>(value.spec.numel()));
      std::memcpy(x.data(), value.constant->bytes.data(), x.size() * sizeof(float));
      out.push_back(std::move(x));
    } else {
      out.push_back(seen[v]);
    }
  }
  return out;
}

double max_abs(const std::vector<std::vector<float>>& a) {
  double m = 0;
  for (const auto& v : a) {
    for (float x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
  }
  return m;
}

double max_abs_diff(const std::vector<std::vector<float>>& a,
                    const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < a[i].size(); ++k) {
      const double d = std::fabs(static_cast<double>(a[i][k]) - b[i][k]);
      if (std::isnan(d)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, d);
    }
  }
  return worst;
}

}  // namespace pteron::compiler::testing
