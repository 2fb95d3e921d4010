// pteron-ethos-u: the Ethos-U backend's pieces on their own, for tests and for looking at Vela.
//   pteron-ethos-u compile GRAPH.tosa --target T -o OUT.peu   Vela + payload; prints JSON
//   pteron-ethos-u run OUT.peu INPUTS.npz OUTPUTS.npz          through the registered backend
//   pteron-ethos-u tosa OUT.peu GRAPH.tosa                     the payload's TOSA form
// Errors are one line on stderr and exit status 1.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/ethos_u/aot/payload_builder.h"
#include "backends/ethos_u/runtime/ethos_u_backend.h"
#include "backends/ethos_u/runtime/payload_verifier.h"
#include "compiler/compile_error.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "tools/run/npz_io.h"

namespace {

int die(const std::string& msg) {
  std::fprintf(stderr, "pteron-ethos-u: %s\n", msg.c_str());
  return 1;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw pteron::compiler::CompileError("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int compile(int argc, char** argv) {
  std::string graph, target, out;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--target" && i + 1 < argc)
      target = argv[++i];
    else if (a == "-o" && i + 1 < argc)
      out = argv[++i];
    else
      graph = a;
  }
  if (graph.empty() || target.empty() || out.empty()) {
    return die("usage: pteron-ethos-u compile GRAPH.tosa --target T -o OUT.peu");
  }
  using namespace pteron::ethos_u;
  std::vector<uint8_t> tosa = read_file(graph);
  std::vector<PayloadIo> inputs, outputs;
  tosa_io(tosa, &inputs, &outputs);
  NpuConfig config = npu_config_of(target);
  VelaOutput vela = run_vela(tosa, config);
  uint64_t planned = tosa_planned_bytes(tosa);
  std::vector<uint8_t> payload = build_payload(tosa, inputs, outputs, config, vela, planned);
  std::ofstream(out, std::ios::binary)
      .write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
  const VelaEstimate& e = vela.estimate;
  nlohmann::json j = {{"accelerator", config.accelerator},
                      {"system_config", config.system_config},
                      {"memory_mode", config.memory_mode},
                      {"vela_version", vela.version},
                      {"payload_bytes", payload.size()},
                      {"command_stream_bytes", vela.command_stream.size()},
                      {"weight_bytes", vela.weights.size()},
                      {"scratch_bytes", vela.scratch_size},
                      {"fast_scratch_bytes", vela.fast_scratch_size},
                      {"tosa_bytes", tosa.size()},
                      {"tosa_executor_bytes", planned},
                      {"npu_cycles", e.npu_cycles},
                      {"total_cycles", e.total_cycles},
                      {"macs", e.macs},
                      {"sram_bytes", e.sram_bytes},
                      {"off_chip_flash_bytes", e.off_chip_flash_bytes},
                      {"on_chip_flash_bytes", e.on_chip_flash_bytes},
                      {"dram_bytes", e.dram_bytes},
                      {"inference_time_s", e.inference_time_s},
                      {"npu_ops", e.npu_ops},
                      {"cpu_ops", e.cpu_ops}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int run(int argc, char** argv) {
  if (argc < 5) return die("usage: pteron-ethos-u run OUT.peu INPUTS.npz OUTPUTS.npz");
  using namespace pteron;
  std::vector<uint8_t> raw = read_file(argv[2]);
  std::vector<uint64_t> payload((raw.size() + 7) / 8);
  std::memcpy(payload.data(), raw.data(), raw.size());
  std::vector<uint8_t> method_memory(8 << 20);
  MemoryAllocator allocator(method_memory.data(), method_memory.size());
  BackendInitContext init{&allocator, "forward"};
  BackendInterface& be = ethos_u::backend();
  auto handle = be.init(init, {reinterpret_cast<const uint8_t*>(payload.data()), raw.size()}, {});
  if (!handle.ok()) return die(last_error_message());
  const auto* p = ethos_u::fb::GetEthosUPayload(payload.data());

  std::string err;
  std::vector<npz::Array> inputs = npz::read(argv[3], &err);
  if (!err.empty()) return die(err);
  struct Owned {
    std::vector<int32_t> sizes, strides;
    std::vector<uint8_t> order, data;
    Tensor tensor;
    EValue value;
  };
  std::vector<Owned> owned(p->inputs()->size() + p->outputs()->size());
  if (inputs.size() != p->inputs()->size()) return die("wrong number of inputs");
  std::vector<EValue*> args;
  for (size_t i = 0; i < owned.size(); ++i) {
    bool is_in = i < p->inputs()->size();
    const auto* io = is_in ? p->inputs()->Get(i) : p->outputs()->Get(i - p->inputs()->size());
    Owned& o = owned[i];
    // Data is in the TOSA layout (the payload's shapes); the tensor's logical sizes follow
    // from the payload's dim order (NHWC storage of an NCHW tensor for 4-D).
    size_t rank = io->shape()->size();
    o.sizes.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      uint8_t dim =
          io->dim_order() && io->dim_order()->size() == rank ? io->dim_order()->Get(d) : uint8_t(d);
      o.order.push_back(dim);
      o.sizes[dim] = int32_t(io->shape()->Get(d));
    }
    o.strides.resize(o.sizes.size());
    ScalarType dt = io->dtype() == 1 ? ScalarType::Char : ScalarType::Float;
    o.tensor = Tensor(dt, int32_t(o.sizes.size()), o.sizes.data(), o.order.data(), o.strides.data(),
                      nullptr);
    o.data = is_in ? inputs[i].data : std::vector<uint8_t>(o.tensor.nbytes());
    if (o.data.size() != o.tensor.nbytes()) return die("input " + std::to_string(i) + " size");
    o.tensor.set_data(o.data.data());
    o.value = EValue::from_tensor(&o.tensor);
    args.push_back(&o.value);
  }
  BackendExecuteContext ctx{nullptr, 0};
  if (be.execute(ctx, *handle, {args.data(), args.size()}) != Error::Ok) {
    return die(last_error_message());
  }
  std::vector<npz::Array> outputs;
  for (size_t i = p->inputs()->size(); i < owned.size(); ++i) {
    npz::Array a;
    a.name = "out" + std::to_string(i - p->inputs()->size());
    a.dtype = owned[i].tensor.dtype();
    for (int64_t d : *p->outputs()->Get(i - p->inputs()->size())->shape())
      a.shape.push_back(int32_t(d));
    a.data = owned[i].data;
    outputs.push_back(std::move(a));
  }
  if (!npz::write(argv[4], outputs, &err)) return die(err);
  be.destroy(*handle);
  return 0;
}

int dump_tosa(int argc, char** argv) {
  if (argc < 4) return die("usage: pteron-ethos-u tosa OUT.peu GRAPH.tosa");
  std::vector<uint8_t> raw = read_file(argv[2]);
  auto verified = pteron::ethos_u::verify_payload({raw.data(), raw.size()});
  if (!verified.ok()) return die(pteron::last_error_message());
  const auto* tosa = (*verified)->tosa();
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char*>(tosa->data()), std::streamsize(tosa->size()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::strcmp(argv[1], "compile") == 0) return compile(argc, argv);
    if (argc >= 2 && std::strcmp(argv[1], "run") == 0) return run(argc, argv);
    if (argc >= 2 && std::strcmp(argv[1], "tosa") == 0) return dump_tosa(argc, argv);
  } catch (const std::exception& e) {
    return die(e.what());
  }
  return die("usage: pteron-ethos-u compile|run ...");
}
